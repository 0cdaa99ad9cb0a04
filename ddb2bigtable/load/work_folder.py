"""Dead letters and the load's work folder: private to the user who runs the load.

A dead letter copies what could not be loaded, once: the export line's text (up to
1,000 characters) when the line could not be read, or the offending value quoted in the
reason when it was read but could not become a row. Export lines are often
personal data, so every file a load writes in its work folder is created 0600 in folders
0700, whatever the process's umask, and `redact` keeps only where the line is (file and
line number in the export) and a reason with the quoted values taken out.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import os
import re
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from ..spec.errors import InputError, Problem

DEAD_LETTER_DIR = "dead-letters"
EXPIRED_DIR = "expired"
LOCK = "load.lock"
FILE_MODE = 0o600
FOLDER_MODE = 0o700

# What a reason quotes of the data: Python reprs ('x', "x", b'x') and the text after
# "found"/"got" up to the end of the clause.
_QUOTED = re.compile(r"""b?'(?:[^'\\]|\\.)*'|b?"(?:[^"\\]|\\.)*"|(?<=\b(?:found|: got) )[^,;)]+""")


def private_dir(path: Path) -> Path:
    """`path`, a folder only this user can write. Folders the tool creates (the missing ones,
    `path` and its parents) are made 0700 whatever the umask; a folder that already exists is
    never changed, since the tool did not create it and the user may share it: it is used when
    it is already private, refused otherwise (`InputError`, before anything is written)."""
    # every save passes here: a folder that exists has all its parents, so only a new one's are looked at
    missing = [] if os.path.lexists(path) else [f for f in reversed([path, *path.parents]) if not os.path.lexists(f)]
    for folder in missing:
        try:
            folder.mkdir(mode=FOLDER_MODE)
        except FileExistsError:  # another process made it first: checked below like any existing one
            continue
        except OSError as error:
            raise InputError([Problem.about(str(path), "", f"cannot create the work folder: {error.strerror} "
                                            f"({folder}); give a --work-dir in a folder you can write")]) from None
        os.chmod(folder, FOLDER_MODE)
    if not missing:
        _require_private(path)
    return path


def _require_private(path: Path) -> None:
    """An existing work folder is trusted with dead letters (export lines, often personal data)
    and state only when it is a folder of this user's that nobody else can write: in a shared
    one (/tmp, 1777) others could plant or swap the files the tool writes. Others may list it
    (0755): everything written inside is 0600 in folders 0700."""
    try:
        info = os.stat(path)
    except OSError as error:
        raise InputError([Problem.about(str(path), "", f"cannot use it as the work folder: "
                                        f"{error.strerror}")]) from None
    problem = None
    if not stat.S_ISDIR(info.st_mode):
        problem = "is not a folder; give --work-dir a folder (a new path is created, private to you)"
    elif info.st_uid != os.geteuid():
        problem = (f"belongs to another user (uid {info.st_uid}); give --work-dir a folder of your own "
                   f"(a new path is created, private to you)")
    elif info.st_mode & 0o022:
        problem = (f"is writable by other users (mode {stat.S_IMODE(info.st_mode):o}) and would hold dead letters "
                   f"(export lines, possibly personal data) and state; give --work-dir a new path (created 0700) "
                   f"or a folder only you can write (chmod 700 it yourself if it is yours alone); "
                   f"it was left as it is")
    elif not os.access(path, os.W_OK | os.X_OK):
        problem = "is read-only to you; give --work-dir a folder you can write"
    if problem:
        raise InputError([Problem.about(str(path), "", f"the work folder {problem}")])


def private_open(path: Path, append: bool = False) -> IO[str]:
    """A text file for writing (truncated, or with `append` added to), 0600 from its first byte
    (not chmod'ed after the fact). Only a regular file is opened: not through a symlink, and a
    FIFO or device in its place is refused (O_NONBLOCK keeps a FIFO without a reader from
    blocking; regular files ignore it)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | (os.O_APPEND if append else os.O_TRUNC) | os.O_NOFOLLOW
                     | os.O_NONBLOCK, FILE_MODE)
    except OSError as error:
        if error.errno == errno.ENXIO:  # a FIFO without a reader, refused by O_NONBLOCK
            raise _not_regular(path) from None
        raise InputError([Problem.about(str(path), "", f"cannot write it: {error.strerror}; the work folder must "
                                        f"hold only the tool's own files, writable by you")]) from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise _not_regular(path)
    os.fchmod(fd, FILE_MODE)  # an existing file keeps its old mode through O_CREAT
    return os.fdopen(fd, "w", encoding="utf-8")


def _not_regular(path: Path) -> InputError:
    return InputError([Problem.about(str(path), "", "is not a regular file; the tool writes only its own files "
                                     "in the work folder: move this one away")])


def replace_private(path: Path, text: str) -> None:
    """Write `path` whole or not at all, for its owner only: a temporary file beside it, then a
    rename, so a crash or a full disk leaves the previous version (a load's state, a stream
    checkpoint) intact; the temporary file never outlives a failure."""
    private_dir(path.parent)
    tmp = path.with_suffix(".tmp")
    try:
        with private_open(tmp) as out:
            out.write(text)
        os.replace(tmp, path)
    except OSError as error:
        tmp.unlink(missing_ok=True)
        raise InputError([Problem.about(str(path), "", f"cannot save it: {error.strerror}; the previous version "
                                        f"is kept; free space or give a --work-dir you can write")]) from None


def redact_reason(reason: str) -> str:
    return _QUOTED.sub("…", reason)


def record_json(file: str, line: int, reason: str, raw: str | None, *, redact: bool) -> str:
    """One dead letter: where the line is, why it was not loaded, and (unless redacted) its
    text. The line's data is written at most once: a record that keeps the text has the
    values its reason quotes taken out (they are in `raw`); one without text (a line that
    parsed but could not become a row) keeps them unless redacted, as its only evidence."""
    quoted = redact or raw is not None
    record: dict[str, object] = {"file": file, "line": line, "reason": redact_reason(reason) if quoted else reason}
    if raw is not None and not redact:
        record["raw"] = raw
    return json.dumps(record)


class DeadLetters:
    """One JSONL file per data file, truncated when that file starts: a rerun never duplicates."""

    def __init__(self, work_dir: Path, data_file: str, *, redact: bool):
        directory = private_dir(work_dir / DEAD_LETTER_DIR)
        self.path = directory / part_name(data_file)
        self.redact = redact
        self.handle = private_open(self.path)

    def add(self, file: str, line: int, reason: str, raw: str | None = None) -> None:
        self.handle.write(record_json(file, line, reason, raw, redact=self.redact) + "\n")

    def close(self) -> None:
        self.handle.close()
        if self.path.stat().st_size == 0:
            self.path.unlink()


def part_name(data_file: str) -> str:
    """The local loader's dead-letter part of one data file."""
    return hashlib.sha256(data_file.encode()).hexdigest()[:16] + ".jsonl"


def dead_letter_records(work_dir: Path) -> Iterator[dict]:
    for part in sorted((work_dir / DEAD_LETTER_DIR).glob("*.jsonl")):
        with part.open(encoding="utf-8") as handle:
            for line in handle:
                yield json.loads(line)


def dead_letter_dir(work_dir: Path) -> Path | None:
    """Where this load's dead letters are, if it has any. The per-file parts are the only
    copy: a combined file beside them would hold every refused line's text twice."""
    folder = work_dir / DEAD_LETTER_DIR
    return folder if any(folder.glob("*.jsonl")) else None


def make_private(work_dir: Path) -> None:
    """Beam's text sinks write with the process's umask: close them to their owner."""
    for folder in (work_dir / DEAD_LETTER_DIR, work_dir / EXPIRED_DIR):
        if folder.is_dir():
            os.chmod(folder, FOLDER_MODE)
            for part in folder.iterdir():
                if part.is_file():
                    os.chmod(part, FILE_MODE)


@contextmanager
def locked(work_dir: Path, name: str = LOCK, who: str = "load") -> Iterator[None]:
    """The work folder for this load alone: two loads of one table at once would truncate
    each other's dead letters and overwrite each other's state. The lock (flock) goes
    away with the process that holds it, so a killed load never leaves it behind.
    `name`: another lock file in the folder (replicate's processes each hold their own)."""
    private_dir(work_dir)
    fd = os.open(work_dir / name, os.O_RDWR | os.O_CREAT, FILE_MODE)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise InputError([Problem.about(str(work_dir), "", f"another {who} (PID {_pid(fd)}) is using this work "
                                            f"folder; wait for it to end, or give this {who} its "
                                            f"own --work-dir")]) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        yield
    finally:
        os.close(fd)


def holder(lock: Path) -> str | None:
    """The PID of the process holding the `locked` lock file `lock` now, else None (no
    such file, or nobody holds it): how one process sees another at work in the folder."""
    try:
        fd = os.open(lock, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return _pid(fd)
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def _pid(fd: int) -> str:
    """The PID `locked` wrote into the lock file its holder opened."""
    return os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
