"""`ddb2bigtable` command line. Exit codes: 0 ok, 1 a check failed, 2 bad input.

Commands only parse arguments, call the engine and print; every decision is elsewhere.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
from rich.console import Console

from ..plan.planner import plan_files
from ..render.json_format import to_json
from ..render.markdown import to_markdown
from ..render.terminal import print_plan
from ..spec.errors import InputError
from ..spec.loader import load_specs

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



@main.command()
@click.argument("spec")
@click.option("--table", "table_id", required=True, help="The spec's table id to load.")
@click.option("--export", "export", required=True, help="DynamoDB export: local folder, gs:// or s3://.")
@click.option("--stage", default="local", show_default=True, help="Stage giving project, instance suffix, sample.")
@click.option("--create-tables", is_flag=True, help="Create the plan's tables, families and GC rules when missing.")
@click.option("--runner", type=click.Choice(["local", "beam"]), default="local", show_default=True)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--work-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Resume state and dead letters (default .ddb2bigtable/<stage>/<instance>/<table>).")
@click.option("--root", type=click.Path(file_okay=False, path_type=Path), default=Path("."), show_default=True)
def load(spec: str, table_id: str, export: str, stage: str, create_tables: bool, runner: str, fmt: str,
         work_dir: Path | None, root: Path) -> None:
    """Load one table from a DynamoDB export; exit 1 unless every item is accounted for."""
    from .load import run_load_command

    try:
        code = run_load_command(root, spec, table_id, export, stage, create_tables, runner, work_dir, fmt)
    except InputError as error:
        _fail(error)
    sys.exit(code)


@main.command()
@click.argument("spec")
@click.option("--table", "table_id", required=True)
@click.option("--export", "export", required=True)
@click.option("--stage", default="local", show_default=True)
@click.option("--sample", type=click.IntRange(min=1), default=None, help="Check N items chosen at random.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--work-dir", type=click.Path(file_okay=False, path_type=Path), default=None)
@click.option("--root", type=click.Path(file_okay=False, path_type=Path), default=Path("."), show_default=True)
def verify(spec: str, table_id: str, export: str, stage: str, sample: int | None, fmt: str,
           work_dir: Path | None, root: Path) -> None:
    """Decode every row back into DynamoDB items and compare with the export; exit 1 on any difference."""
    from .load import run_verify_command

    try:
        code = run_verify_command(root, spec, table_id, export, stage, sample, work_dir, fmt)
    except InputError as error:
        _fail(error)
    sys.exit(code)


@main.command()
@click.option("--stage", default="local", show_default=True)
@click.option("--keep-running", is_flag=True, help="Leave the emulator running for your application.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--root", type=click.Path(file_okay=False, path_type=Path), default=Path("."), show_default=True)
def up(stage: str, keep_running: bool, fmt: str, root: Path) -> None:
    """The emulator stage: create tables, families and GC; load the exports; verify; report."""
    from .load import run_up_command

    try:
        code = run_up_command(root, stage, keep_running, fmt)
    except InputError as error:
        _fail(error)
    sys.exit(code)


@main.command()
@click.option("--base", required=True, help="Git ref to compare from (e.g. origin/main).")
@click.option("--head", default=None, help="Git ref to compare to (default: the working tree).")
@click.option("--stage", "stages", multiple=True, help="Only these stages (repeatable; default: all).")
@click.option("--format", "fmt", type=click.Choice(["markdown", "json", "table"]), default="table",
              show_default=True)
@click.option("--fail-on", "fail_on", default=None,
              help="Exit 1 on `destructive` changes, or on a Bigtable cost increase above `cost-increase:PCT`.")
@click.option("--root", type=click.Path(file_okay=False, path_type=Path), default=Path("."), show_default=True)
def diff(base: str, head: str | None, stages: tuple[str, ...], fmt: str, fail_on: str | None, root: Path) -> None:
    """Capacity, cost and destructive changes of every stage between two versions of the specs."""
    from ..render.diff_format import print_diff, to_json, to_markdown
    from ..review.diff_run import run_diff

    threshold = _fail_on(fail_on)
    try:
        diffs = run_diff(root, base, head, list(stages) or None)
    except InputError as error:
        _fail(error)
    if fmt == "json":
        click.echo(json.dumps(to_json(diffs, base, head), indent=2))
    elif fmt == "markdown":
        click.echo(to_markdown(diffs, base, head), nl=False)
    else:
        print_diff(diffs, base, head, Console())
    if threshold == "destructive" and any(d.destructive for d in diffs):
        sys.exit(1)
    if isinstance(threshold, float) and any((d.bigtable_percent or 0) > threshold for d in diffs):
        sys.exit(1)


def _fail_on(value: str | None) -> str | float | None:
    if value is None or value == "destructive":
        return value
    if value.startswith("cost-increase:"):
        try:
            return float(value.split(":", 1)[1].rstrip("%"))
        except ValueError:
            pass
    raise click.BadParameter("expected `destructive` or `cost-increase:PCT` (e.g. cost-increase:10)",
                             param_hint="--fail-on")
