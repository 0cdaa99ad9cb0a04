"""The imported spec on disk: checked by the spec loader first, written atomically, and never
over an existing file without `force`.

The check loads the text exactly as `validate` would (a private temporary copy), so a spec
the importer cannot make valid (an AWS region the tool does not map, an instance id
Bigtable refuses) is bad input and nothing is written. The write goes to a temporary file
in the target's folder, then a hard link (no `force`: fails if the name exists, with no
window for a race) or an atomic rename (`force`): the target is never half-written. Only a
regular file is ever replaced: a device (`-o /dev/null --force`), a FIFO, a folder or a
symbolic link at `-o` is refused, whatever `force` says.
"""

from __future__ import annotations

import os
import secrets
import stat
import tempfile
from pathlib import Path

from ..spec.errors import InputError, Problem
from ..spec.reading import read_spec


def check_spec(text: str, shown_as: str) -> None:
    """`InputError` (problems named against `shown_as`, the sources) unless `text` is a valid
    spec. The problems carry no line: the text was written nowhere, so no line points into it."""
    with tempfile.TemporaryDirectory(prefix="ddb2bigtable-import-") as folder:
        path = Path(folder) / "spec.yaml"
        path.write_text(text, encoding="utf-8")
        try:
            read_spec(path)
        except InputError as error:
            raise InputError([Problem.about(shown_as, p.path, f"the imported spec is not valid: {p.message}; fix "
                                            "the source or pass --region/--parameter")
                              for p in error.problems]) from None


def check_output(path: Path, force: bool) -> None:
    """Before anything is read: `-o`'s folder exists, and what is at `-o` may be replaced."""
    if not path.parent.is_dir():
        raise InputError([Problem.about(str(path), "", f"the folder {path.parent} does not exist (or is not a "
                                        "folder): create it, or choose another -o")])
    refuse_existing(path, force)


_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISLNK, "a symbolic link"), (stat.S_ISFIFO, "a FIFO"),
          (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a device"), (stat.S_ISBLK, "a device"))


def refuse_existing(path: Path, force: bool) -> int | None:
    """The permission bits of the regular file at `path`, None when nothing is there;
    `InputError` when something else is there (a device, a FIFO, a folder, a link: never
    replaced, even with `force`), or a file is there without `force`."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise InputError([Problem.about(str(path), "", f"cannot look at -o: {error.strerror}")]) from None
    if not stat.S_ISREG(info.st_mode):
        kind = next((name for test, name in _KINDS if test(info.st_mode)), "not a regular file")
        raise InputError([Problem.about(str(path), "", f"is {kind}; import replaces only a regular file, even "
                                        "with --force: choose another -o")])
    if not force:
        raise InputError([Problem.about(str(path), "", "the file exists: pass --force to replace it, or choose "
                                        "another -o")])
    return info.st_mode & 0o777


def write_spec(path: Path, text: str, force: bool) -> None:
    """Write `text` to `path` all at once; without `force`, never replace an existing file.
    The new file has the replaced file's permissions, else the umask's (as any new file)."""
    mode = refuse_existing(path, force)
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
            refuse_existing(path, force)  # still a regular file (or nothing) just before the rename
            os.replace(temporary, path)
        else:
            try:
                os.link(temporary, path)
            except FileExistsError:
                refuse_existing(path, force)
    except OSError as error:
        raise InputError([Problem.about(str(path), "", f"cannot write the spec: {error.strerror}; choose a "
                                        "folder you may write to")]) from None
    finally:
        if os.path.lexists(temporary):
            os.unlink(temporary)
