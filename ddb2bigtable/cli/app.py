"""`ddb2bigtable` command line. Exit codes: 0 ok, 1 a check failed, 2 bad input.

Commands only parse arguments, call the engine and print; every decision is elsewhere.
One module per command group: `plan` (validate, plan), `diff`, `load` (load, verify, up),
`replicate_cmd` (replicate), `cutover_cmd` (cutover check), `import_cmd` (import), `advise_cmd` (advise).
"""

from __future__ import annotations

import click

from .advise_cmd import advise_command
from .cutover_cmd import cutover
from .diff import diff
from .import_cmd import import_
from .load import load, up, verify
from .plan import plan, validate
from .replicate_cmd import replicate


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="ddb2bigtable")
def main() -> None:
    """Move DynamoDB workloads onto Cloud Bigtable, declaratively."""


for command in (validate, plan, load, verify, up, diff, replicate, cutover, import_, advise_command):
    main.add_command(command)
