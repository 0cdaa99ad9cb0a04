"""What every command shares: how an engine error is reported and which exit code it gets."""

from __future__ import annotations

import os
import shlex
import sys
import textwrap
from typing import NoReturn

import click

from ..spec.errors import Ddb2BigtableError, InputError, clip_message

# What each command did not do when its input is bad, true whenever the problem is found:
# before anything ran, or (load, up, replicate) part-way, when rows may already be written,
# so those say they stopped and claim nothing about writes.
NOT_DONE = {
    "validate": "no spec passed validation",
    "plan": "no plan was made",
    "diff": "no diff was made",
    "load": "the load stopped before its end",
    "verify": "no verdict was given",
    "up": "up stopped before its end",
    "export": "no export was finished (after a crash or Ctrl-C, the same command resumes)",
    "replicate": "replicate stopped",
    "cutover": "no verdict was given",
    "import": "no spec was written",
    "advise": "no advice was given",
    "prices": "no price lock was written",
    "serve": "nothing was served",
}


# What an interrupted command (Ctrl-C) leaves and how it goes on: the commands that write
# keep their progress (work folder, checkpoint), so the same command line resumes them.
RESUMES = {
    "load": "the load keeps what it wrote and its finished files; the same command resumes it",
    "up": "each load keeps what it wrote and its finished files; the same command resumes them",
    "export": "the export keeps its checkpoint; the same command resumes it",
    "replicate": "replicate keeps its checkpoint; the same command resumes it",
}
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report a command Ctrl-C stopped


def report_interrupt(command: str | None, argv: list[str]) -> NoReturn:
    """Ctrl-C as one line saying what is kept and the command line to run again (`argv`:
    the arguments after the program's name), instead of click's `Aborted!`."""
    kept = RESUMES.get(command or "", "nothing is left half-done; run it again")
    click.echo(f"interrupted (Ctrl-C): {kept}: ddb2bigtable {shlex.join(argv)}", err=True)
    sys.exit(EXIT_INTERRUPTED)


def echo_warning(text: str, *, err: bool = True) -> None:
    """A warning (or a note, a deprecation line, a problem with the input) for a person, on stderr (`err=False`:
    stdout, for a report's own notes): at a terminal, folded at its width on word
    boundaries with the lines after the first indented (an import's notices ran to 560
    characters a line), a path never cut; into a pipe or a file, one whole line, for grep
    and scripts. The width is COLUMNS when set, else that stream's terminal's (stdout is
    often a file while stderr is not: `import ... > spec.yaml`). Every warning the command
    line prints goes through here (tests/cli/test_wrapped_warnings.py checks)."""
    stream = sys.stderr if err else sys.stdout
    if stream.isatty():
        try:
            width = int(os.environ.get("COLUMNS") or os.get_terminal_size(stream.fileno()).columns)
        except (OSError, ValueError):
            width = 80
        text = textwrap.fill(text, width=max(width, 40), subsequent_indent="  ", break_long_words=False,
                             break_on_hyphens=False)
    click.echo(text, err=err)


def report_error(error: Ddb2BigtableError, command: str | None = None) -> NoReturn:
    """Bad input as one located line per problem, then what `command` did not do (exit 2);
    any other engine error as its message, which says what to do (its class's exit code).
    Never a traceback."""
    if isinstance(error, InputError):
        for problem in error.problems:
            echo_warning(str(problem))  # its file:line: first, as editors read it; folded after
        count = len(error.problems)
        not_done = error.not_done or NOT_DONE.get(command or "")
        click.echo(f"{count} problem{'s' if count != 1 else ''} found" + (f"; {not_done}." if not_done else "."),
                   err=True)
    else:
        click.echo(f"error: {clip_message(str(error))}", err=True)
    sys.exit(error.exit_code)
