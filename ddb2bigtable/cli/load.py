"""`load`, `verify` and `up`: the data commands' options. What they run is in `load_runs.py`,
imported only when one of them runs, so `validate`, `plan` and `diff` never import the
Bigtable client."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from .grammar import renamed_option


@click.command()
@click.argument("specs", nargs=-1)
@click.option("--table", "table_id", required=True, help="The table id to load.")
@click.option("--export", "export", required=True, help="DynamoDB export: local folder, gs:// or s3://.")
@click.option("--stage", default="local", show_default=True, help="Stage giving project, instance suffix, sample.")
@click.option("--create-tables", is_flag=True, help="Create the plan's tables, families and GC rules when missing.")
@click.option("--runner", type=click.Choice(["local", "beam"]), default="local", show_default=True,
              help="local: this machine's writer; beam: the Apache Beam pipeline (DirectRunner, or Dataflow "
                   "per the stage's load settings).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="text for a person, json (docs/json-formats.md) for a pipeline.")
@click.option("--work-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Resume state and dead letters (default .ddb2bigtable/<stage>/<instance>/<table>).")
@click.option("--fresh", is_flag=True, help="Ignore the resume state: reload every data file.")
@click.option("--allow-other-table", is_flag=True,
              help="Load an export whose tableArn names another table than the spec's source.table.")
@click.option("--dead-letters-redact", "redact", is_flag=True,
              help="Dead letters keep the export file, line and reason, never the line's text or quoted values.")
@click.option("--chain", is_flag=True,
              help="--export is a prefix holding a full export and its incrementals: load them all, in order.")
@click.option("--root", type=click.Path(file_okay=False, path_type=Path), default=Path("."), show_default=True,
              help="Project root holding stacks/ and the specs.")
def load(specs: tuple[str, ...], table_id: str, export: str, stage: str, create_tables: bool, runner: str, fmt: str,
         work_dir: Path | None, fresh: bool, allow_other_table: bool, redact: bool, chain: bool, root: Path) -> None:
    """Load one table from a DynamoDB export; exit 1 unless every item is accounted for.

    --table names the table among the SPECS given, or the specs the stage lists when none are."""
    from .load_runs import run_load_command

    code = run_load_command(root, list(specs), table_id, export, stage, create_tables, runner, work_dir, fmt,
                            redact=redact, fresh=fresh, allow_other_table=allow_other_table, chain=chain)
    sys.exit(code)


@click.command()
@click.argument("specs", nargs=-1)
@click.option("--table", "table_id", required=True, help="The table id to verify.")
@click.option("--export", "export", required=True,
              help="The DynamoDB export the table was loaded from: local folder, gs:// or s3://.")
@click.option("--stage", default="local", show_default=True,
              help="Stage giving project and instance suffix (local: the emulator).")
@click.option("--sample", type=click.IntRange(min=1), default=None, help="Check N items chosen at random.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="text for a person, json (docs/json-formats.md) for a pipeline.")
@click.option("--work-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="The load's work folder, whose dead letters and skips are not counted missing "
                   "(default .ddb2bigtable/<stage>/<instance>/<table>).")
@click.option("--chain", is_flag=True,
              help="--export is a prefix holding a full export and its incrementals: compare with their final state.")
@click.option("--root", type=click.Path(file_okay=False, path_type=Path), default=Path("."), show_default=True,
              help="Project root holding stacks/ and the specs.")
def verify(specs: tuple[str, ...], table_id: str, export: str, stage: str, sample: int | None, fmt: str,
           work_dir: Path | None, chain: bool, root: Path) -> None:
    """Decode every row back into DynamoDB items and compare with the export; exit 1 on any difference.

    --table names the table among the SPECS given, or the specs the stage lists when none are."""
    from .load_runs import run_verify_command

    code = run_verify_command(root, list(specs), table_id, export, stage, sample, work_dir, fmt, chain=chain)
    sys.exit(code)


@click.command()
@click.argument("specs", nargs=-1)
@click.option("--stage", default="local", show_default=True)
@click.option("--exports", "exports", type=click.Path(path_type=Path), default=None,
              help="Folder holding one export per table id (<DIR>/<table id>/); default: the stage's load.export.")
@renamed_option("--export", "--exports", "exports", type=click.Path(path_type=Path))
@click.option("--keep-running", is_flag=True, help="Leave the emulator running for your application.")
@click.option("--verbose", is_flag=True, help="Also print the whole plan and every load's and verify's report.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--root", type=click.Path(file_okay=False, path_type=Path), default=Path("."), show_default=True)
def up(specs: tuple[str, ...], stage: str, exports: Path | None, keep_running: bool, verbose: bool, fmt: str,
       root: Path) -> None:
    """The emulator stage: create tables, families and GC; load the exports; verify; report.

    Without SPEC arguments, the specs the stage lists. The whole report (plan, loads,
    verifies, the mapping's notes) is written to .ddb2bigtable/<stage>/up-report.txt."""
    from .load_runs import run_up_command

    code = run_up_command(root, stage, keep_running, fmt, specs=list(specs), exports=exports, verbose=verbose)
    sys.exit(code)
