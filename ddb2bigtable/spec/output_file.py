"""The files a command writes where the user said (`import -o`, `prices refresh -o`): checked
before any work, written whole or not at all, and only ever over a regular file.

The check runs before the command reads a source or asks an API, so a wrong `-o` costs
nothing. The write goes to a temporary file in the target's folder, then a hard link (no
`force`: fails if the name exists, with no window for a race) or a rename (`force`): the
target is never half-written. A device (`-o /dev/null --force`), a FIFO, a folder or a
symbolic link at `-o` is never replaced, whatever `force` says. The new file keeps the
replaced file's permission bits, else the umask's, as any new file.
"""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path

from .errors import InputError, Problem

_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISLNK, "a symbolic link"), (stat.S_ISFIFO, "a FIFO"),
          (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a device"), (stat.S_ISBLK, "a device"))


def check_output(path: Path, *, force: bool, command: str) -> int | None:
    """Before anything is read: `-o`'s folder exists, and what is at `-o` may be replaced.
    Returns the permission bits of the regular file there (None: nothing is there)."""
    if not path.parent.is_dir():
        raise InputError([Problem.about(str(path), "", f"the folder {path.parent} does not exist (or is not a "
                                        "folder): create it, or choose another -o")])
    return _replaceable(path, force, command)


def write_output(path: Path, text: str, *, force: bool, command: str, what: str) -> None:
    """`text` at `path`, all at once; without `force`, never over an existing file.
    `what` names the file in an error ("the spec", "the price lock")."""
    mode = _replaceable(path, force, command)
    temporary = path.parent / f".{path.name[:64]}.{secrets.token_hex(8)}.tmp"
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # 0o666 less the umask
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            if mode is not None:
                os.fchmod(handle.fileno(), mode)
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        if force:
            _replaceable(path, force, command)  # still a regular file (or nothing) just before the rename
            os.replace(temporary, path)
        else:
            try:
                os.link(temporary, path)
            except FileExistsError:
                _replaceable(path, force, command)
    except OSError as error:
        raise InputError([Problem.about(str(path), "", f"cannot write {what}: {error.strerror}; choose a "
                                        "folder you may write to with -o")]) from None
    finally:
        if os.path.lexists(temporary):
            os.unlink(temporary)


def _replaceable(path: Path, force: bool, command: str) -> int | None:
    """The permission bits of the regular file at `path`, None when nothing is there;
    `InputError` when something else is there (never replaced, even with `force`), or a
    file is there without `force`."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise InputError([Problem.about(str(path), "", f"cannot look at -o: {error.strerror}")]) from None
    if not stat.S_ISREG(info.st_mode):
        kind = next((name for test, name in _KINDS if test(info.st_mode)), "not a regular file")
        raise InputError([Problem.about(str(path), "", f"is {kind}; {command} replaces only a regular file, even "
                                        "with --force: choose another -o")])
    if not force:
        raise InputError([Problem.about(str(path), "", "the file exists: pass --force to replace it, or choose "
                                        "another -o")])
    return info.st_mode & 0o777
