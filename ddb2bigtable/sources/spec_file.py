"""The imported spec on disk: checked by the spec loader first, written atomically, and never
over an existing file without `force`.

The check loads the text exactly as `validate` would (a private temporary copy), so a spec
the importer cannot make valid (an AWS region the tool does not map, an instance id
Bigtable refuses) is bad input and nothing is written. The write goes to a temporary file
in the target's folder, then a hard link (no `force`: fails if the name exists, with no
window for a race) or an atomic rename (`force`): the target is never half-written.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from ..spec.errors import InputError, Problem
from ..spec.reading import read_spec


def check_spec(text: str, shown_as: str) -> None:
    """`InputError` (problems named against `shown_as`) unless `text` is a valid spec."""
    with tempfile.TemporaryDirectory(prefix="ddb2bigtable-import-") as folder:
        path = Path(folder) / "spec.yaml"
        path.write_text(text, encoding="utf-8")
        try:
            read_spec(path)
        except InputError as error:
            raise InputError([Problem(shown_as, p.line, p.column, p.path,
                                      f"the imported spec is not valid: {p.message}; fix the source or pass "
                                      "--region/--parameter") for p in error.problems]) from None


def refuse_existing(path: Path, force: bool) -> None:
    if path.exists() and not force:
        raise InputError([Problem.about(str(path), "", "the file exists: pass --force to replace it, or choose "
                                        "another -o")])


def write_spec(path: Path, text: str, force: bool) -> None:
    """Write `text` to `path` all at once; without `force`, never replace an existing file."""
    refuse_existing(path, force)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        if force:
            os.replace(temporary, path)
        else:
            try:
                os.link(temporary, path)
            except FileExistsError:
                refuse_existing(path, force)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)
