"""`ddb2bigtable` command line. Exit codes: 0 ok, 1 a check failed, 2 bad input.

Commands only parse arguments, call the engine and print; every decision is elsewhere.
One module per command group: `plan` (validate, plan), `diff`, `load` (load, verify, up),
`replicate_cmd` (replicate), `cutover_cmd` (cutover check), `import_cmd` (import), `advise_cmd` (advise),
`prices_cmd` (prices refresh), `serve_cmd` (serve), `export_cmd` (export).
"""

from __future__ import annotations

import sys
from typing import Any

import click

from ..spec.errors import Ddb2BigtableError
from .advise_cmd import advise_command
from .cutover_cmd import cutover
from .diff import diff
from .export_cmd import export
from .import_cmd import import_
from .load import load, up, verify
from .output import report_error, report_interrupt
from .plan import plan, validate
from .prices_cmd import prices
from .replicate_cmd import replicate
from .serve_cmd import serve


class _Commands(click.Group):
    """The one place an engine error becomes a message and an exit code, so no command
    repeats the handling and none can forget it."""

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


for command in (validate, plan, load, verify, up, export, diff, replicate, cutover, import_, advise_command, prices,
                serve):
    main.add_command(command)
