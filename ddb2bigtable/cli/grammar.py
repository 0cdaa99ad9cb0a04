"""The command line's grammar where commands share words (docs/cli.md, "Grammar"): `--stage`
names one stage and defaults to `local`, `--format` says `text` for a terminal on every
command, and the spellings a release renamed keep working for one more release, each with
one `deprecated:` line on stderr naming the new spelling (stdout stays what scripts read)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import click

from .output import echo_warning

# The stage a command acts in when none is named: the emulator's, the one stage that reaches
# no cloud resource, so a forgotten --stage never plans, loads or serves production.
DEFAULT_STAGE = "local"


def deprecated(ctx: click.Context | None, old: str, new: str) -> None:
    """One line on stderr: `old` still works in this release; `new` is its spelling now."""
    names: list[str] = []
    while ctx is not None and ctx.parent is not None:  # the root's name is how it was started (python -m, a script)
        names.insert(0, ctx.info_name or "")
        ctx = ctx.parent
    command = " ".join(["ddb2bigtable", *names])
    echo_warning(f"deprecated: `{command} {old}` is now `{command} {new}`; the old spelling goes in the next release")


class Formats(click.Choice):
    """--format's choices, `text` (a terminal) first among them. `table`, the old name of
    `text` on plan, diff and advise, is read as `text` with a deprecation line."""

    def __init__(self, *choices: str) -> None:
        super().__init__(list(choices))

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if value == "table" and "text" in self.choices:
            deprecated(ctx, "--format table", "--format text")
            return "text"
        return super().convert(value, param, ctx)


def renamed_option(old: str, new: str, dest: str, **attrs: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Option `old`, hidden, kept for a release as the former spelling of `new` (whose
    parameter is `dest`): given, it prints the deprecation line and is taken as `new`;
    given with `new`, it is a usage error (two values for one thing)."""
    hidden = f"deprecated_{dest}"

    def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(command)
        def run(*args: Any, **kwargs: Any) -> Any:
            value = kwargs.pop(hidden)
            if value not in (None, ()):  # given (a repeatable option's default is empty)
                ctx = click.get_current_context()
                if kwargs.get(dest) not in (None, ()):
                    raise click.UsageError(f"{old} is the old spelling of {new}: give {new} alone", ctx)
                values = value if isinstance(value, tuple) else (value,)  # a repeatable option: each given
                deprecated(ctx, " ".join(f"{old} {v}" for v in values), " ".join(f"{new} {v}" for v in values))
                kwargs[dest] = value
            return command(*args, **kwargs)

        return click.option(old, hidden, hidden=True, default=None, **attrs)(run)

    return decorate
