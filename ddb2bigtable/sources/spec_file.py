"""The imported spec before it is written: checked by the spec loader first.

The check loads the text exactly as `validate` would (a private temporary copy), so a spec
the importer cannot make valid (an AWS region the tool does not map, an instance id
Bigtable refuses) is bad input and nothing is written (`spec.output_file` writes it, whole,
over nothing but a regular file).
"""

from __future__ import annotations

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
