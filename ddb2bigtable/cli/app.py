"""`ddb2bigtable` command line. Exit codes: 0 ok, 1 a check failed, 2 bad input.

Commands only parse arguments, call the engine and print; every decision is elsewhere.
One module per command group: `plan` (validate, plan), `diff`, `load` (load, verify, up),
`replicate_cmd` (replicate), `cutover_cmd` (cutover check), `import_cmd` (import), `advise_cmd` (advise),
`prices_cmd` (prices refresh), `serve_cmd` (serve), `export_cmd` (export).
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

import click

from ..spec.errors import Ddb2BigtableError
from .output import report_error, report_interrupt

# Each command's module and name in it, imported when that command runs (or --help lists
# them all): a command's engine (gRPC, boto3, the planner, rich) costs about a second of CPU
# to import, and a process runs one command (benchmarks/README.md, "CLI start-up").
COMMANDS = {
    "validate": ("plan", "validate"), "plan": ("plan", "plan"), "load": ("load", "load"),
    "verify": ("load", "verify"), "up": ("load", "up"), "export": ("export_cmd", "export"),
    "diff": ("diff", "diff"), "replicate": ("replicate_cmd", "replicate"), "cutover": ("cutover_cmd", "cutover"),
    "import": ("import_cmd", "import_"), "advise": ("advise_cmd", "advise_command"),
    "prices": ("prices_cmd", "prices"), "serve": ("serve_cmd", "serve"),
}


class _Commands(click.Group):
    """The one place an engine error becomes a message and an exit code, so no command
    repeats the handling and none can forget it; and the commands, each imported when
    it is asked for."""

    def list_commands(self, ctx: click.Context | None) -> list[str]:
        return sorted({*COMMANDS, *self._added})

    def get_command(self, ctx: click.Context | None, cmd_name: str) -> click.Command | None:
        if cmd_name in self._added or cmd_name not in COMMANDS:
            return self._added.get(cmd_name)
        module, name = COMMANDS[cmd_name]
        command = getattr(importlib.import_module(f"{__package__}.{module}"), name)
        assert isinstance(command, click.Command) and command.name == cmd_name, cmd_name
        return command

    @property  # type: ignore[override]
    def commands(self) -> dict[str, click.Command]:
        """Every command, imported (for tools and tests that read the whole group)."""
        return {name: command for name in self.list_commands(None)
                if (command := self.get_command(None, name)) is not None}

    @commands.setter
    def commands(self, value: dict[str, click.Command]) -> None:  # click.Group's __init__ sets it
        self._added = dict(value)

    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        """A command added in code (a test's), beside COMMANDS."""
        self._added[name or cmd.name or ""] = cmd

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except Ddb2BigtableError as error:
            report_error(error, ctx.invoked_subcommand)
        except KeyboardInterrupt:
            report_interrupt(ctx.invoked_subcommand, sys.argv[1:])


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="ddb2bigtable")
def main() -> None:
    """Move DynamoDB workloads onto Cloud Bigtable, declaratively."""
