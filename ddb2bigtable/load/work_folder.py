"""Dead letters and the load's work folder: private to the user who runs the load.

A dead letter copies what could not be loaded, once: the export line's text (up to
1,000 characters) when the line could not be read, or the offending value quoted in the
reason when it was read but could not become a row. Export lines are often
personal data, so every file a load writes in its work folder is created 0600 in folders
0700, whatever the process's umask, and `redact` keeps only where the line is (file and
line number in the export) and a reason with the quoted values taken out.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
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
    """`path` and its missing parents, each new one 0700; `path` itself made 0700."""
    for folder in reversed([path, *path.parents]):
        if not folder.exists():
            folder.mkdir(mode=FOLDER_MODE)
    os.chmod(path, FOLDER_MODE)
    return path


def private_open(path: Path) -> IO[str]:
    """A text file for writing, 0600 from its first byte (not chmod'ed after the fact)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
    os.fchmod(fd, FILE_MODE)  # an existing file keeps its old mode through O_CREAT
    return os.fdopen(fd, "w", encoding="utf-8")


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
