"""Errors a user can act on: every one names a file, a line, what was expected.

The CLI turns `InputError` into exit code 2 with one line per problem and no traceback;
nothing else in the engine prints or exits.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    """One located problem: `file:line:column: json.path: message`."""

    file: str
    line: int
    column: int
    path: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}:{self.column}"
        return f"{where}: {self.path}: {self.message}" if self.path else f"{where}: {self.message}"


class InputError(Exception):
    """Bad input (spec, stage, CLI arguments): exit code 2, every problem listed."""

    def __init__(self, problems: list[Problem]):
        self.problems = sorted(problems, key=lambda p: (p.file, p.line, p.column, p.path))
        super().__init__("\n".join(str(p) for p in self.problems))
