"""The engine's errors: one root, two kinds a user can act on, each with its exit code.

`Ddb2BigtableError` is the root every engine error derives from, so the CLI has one
place that turns any of them into a message and an exit code (never a traceback):
`InputError` (bad input: spec, stage, export, arguments; exit 2, every problem listed)
and `ServiceError` (a part the tool talks to failed: the emulator, Bigtable, DynamoDB,
Dataflow; exit 1, since rerunning may succeed). Nothing else in the engine prints or
exits. The root lives in `spec` because every package may import `spec`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .model import Location

EXIT_FAILED = 1
EXIT_BAD_INPUT = 2

# Messages echo what they are about (an attribute name, an option's value); hostile input
# makes those a megabyte long. A value is shown up to CLIP characters, a message up to
# MAX_MESSAGE: enough for any real name or path, and the end (what to do) is always kept.
CLIP = 200
MAX_MESSAGE = 2_000
_LONG_WORD = re.compile(rf"\S{{{CLIP + 1},}}")
# `scheme://user:password@`: what a URL carries before its host.
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@]*@")


def redact_userinfo(text: str) -> str:
    """`text` with the user-info of every URL in it hidden (`http://user:secret@host` ->
    `http://***@host`): an endpoint URL may carry a password, and botocore's messages
    repeat the URL whole."""
    return _USERINFO.sub(r"\1***@", text)


def clip(text: str, limit: int = CLIP) -> str:
    """`text`, or its first `limit` characters and how many more there were."""
    return text if len(text) <= limit else f"{text[:limit]}...[{len(text) - limit:,} more characters]"


def clip_message(message: str) -> str:
    """`message` with each run of more than CLIP characters without a space cut, and the
    whole kept under about MAX_MESSAGE (its start and its end, which says what to do);
    first, every URL's user-info hidden (`redact_userinfo`), so no cut can leave half a password."""
    message = redact_userinfo(message)
    if len(message) <= CLIP:
        return message
    message = _LONG_WORD.sub(lambda word: clip(word.group()), message)
    if len(message) <= MAX_MESSAGE:
        return message
    head, tail = MAX_MESSAGE // 2, MAX_MESSAGE // 4
    return f"{message[:head]}...[{len(message) - head - tail:,} more characters]...{message[-tail:]}"


class Ddb2BigtableError(Exception):
    """Root of the engine's errors; `exit_code` is what the CLI exits with."""

    exit_code = EXIT_FAILED


class ServiceError(Ddb2BigtableError):
    """A service the tool talks to failed or is missing; the input may be fine."""


@dataclass(frozen=True)
class Problem:
    """One problem: `file:line:column: json.path: message`.

    `line` and `column` are None where the source has no lines (a URL, a git ref, a
    folder, a command-line option, a file the tool reads whole): printing `:1:1` there
    would send a reader to a line that has nothing to do with the problem.
    """

    file: str
    line: int | None
    column: int | None
    path: str
    message: str

    @classmethod
    def about(cls, subject: str, path: str, message: str) -> Problem:
        """A problem with no line to point at: `subject` is a URL, ref, folder or option."""
        return cls(subject, None, None, path, message)

    @classmethod
    def at(cls, where: Location | None, file: str, path: str, message: str) -> Problem:
        """A problem at a value's place in its YAML, or about `file` as a whole when the
        value was not read from a file (a default, a stage built in code)."""
        if where is None:
            return cls(file, None, None, path, message)
        return cls(where.file, where.line, where.column, path, message)

    def __str__(self) -> str:
        # a file keeps its name whole up to the longest path a system takes (4,096): an editor jumps to it
        file, path, message = clip(redact_userinfo(self.file), 4096), clip_message(self.path), \
            clip_message(self.message)
        where = file if self.line is None else f"{file}:{self.line}"
        if self.line is not None and self.column is not None:
            where += f":{self.column}"
        return f"{where}: {path}: {message}" if path else f"{where}: {message}"


class InputError(Ddb2BigtableError):
    """Bad input (spec, stage, export, CLI arguments): exit code 2, every problem listed."""

    exit_code = EXIT_BAD_INPUT

    def __init__(self, problems: list[Problem]):
        self.problems = sorted(problems, key=lambda p: (p.file, p.line or 0, p.column or 0, p.path))
        # what the command did not do, when its own words (cli/output.NOT_DONE) would claim
        # too much: a load that meets bad input before it wrote anything says so
        self.not_done: str | None = None
        super().__init__("\n".join(str(p) for p in self.problems))
