"""`ddb2bigtable` command line. Exit codes: 0 ok, 1 a check failed, 2 bad input.

Commands only parse arguments, call the engine and print; every decision is elsewhere.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
from rich.console import Console

from .errors import InputError
from .loader import load_specs
from .planner import plan_files
from .render.json_format import to_json
from .render.markdown import to_markdown
from .render.terminal import print_plan

EXIT_BAD_INPUT = 2


def _fail(error: InputError) -> None:
    for problem in error.problems:
        click.echo(str(problem), err=True)
    count = len(error.problems)
    click.echo(f"{count} problem{'s' if count != 1 else ''} found; nothing was planned or written.", err=True)
    sys.exit(EXIT_BAD_INPUT)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="ddb2bigtable")
def main() -> None:
    """Move DynamoDB workloads onto Cloud Bigtable, declaratively."""


@main.command()
@click.argument("specs", nargs=-1, required=True)
def validate(specs: tuple[str, ...]) -> None:
    """Check spec files: schema, then what a schema cannot check. All problems at once."""
    try:
        load_specs(list(specs))
    except InputError as error:
        _fail(error)
    for spec in specs:
        click.echo(f"ok: {spec}")


@main.command()
@click.argument("specs", nargs=-1)
@click.option("--stage", required=True, help="Stage name: stacks/Pulumi.<stage>.yaml.")
@click.option("--format", "fmt", type=click.Choice(["table", "markdown", "json"]), default="table", show_default=True)
@click.option("--root", type=click.Path(file_okay=False, path_type=Path), default=Path("."), show_default=True,
              help="Project root holding stacks/ (and the specs the stage lists).")
def plan(specs: tuple[str, ...], stage: str, fmt: str, root: Path) -> None:
    """Plan a stage: clusters, nodes, tables, GC, app profiles and monthly cost, each with its why.

    Without SPEC arguments, plans the specs the stage lists.
    """
    try:
        stage_plan = plan_files(root, stage, list(specs))
    except InputError as error:
        _fail(error)
    if fmt == "json":
        click.echo(json.dumps(to_json(stage_plan), indent=2))
    elif fmt == "markdown":
        click.echo(to_markdown(stage_plan))
    else:
        print_plan(stage_plan, Console())
