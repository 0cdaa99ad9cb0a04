"""`advise`: the schema-design seeds applied to specs and a sample of an export. Prints
the report; exit 1 with --fail-on when a finding is that severe, 2 on bad input."""

from __future__ import annotations

import json
from pathlib import Path

import click
from rich.console import Console

from ..advise.report import counts, sections, to_json, to_markdown, tripped
from ..advise.run import DEFAULT_SAMPLE, advise
from ..advise.sample import sample_size
from ..render.terminal import print_section
from ..spec.reading import read_specs
from .fail_on import exit_if_tripped
from .prices_cmd import prices_option, read_prices


def _sample(ctx: click.Context, param: click.Parameter, value: str) -> str:
    """A count or a fraction, checked before the export is opened."""
    try:
        sample_size(value, 1)
    except ValueError as error:
        raise click.BadParameter(str(error).removeprefix(f"--sample {value!r}: ")) from None
    return value


@click.command(name="advise")
@click.argument("specs", nargs=-1, required=True)
@click.option("--table", "table_id", default=None, help="Only this table id of the specs.")
@click.option("--export", default=None, help="DynamoDB export of the table to sample: local folder, gs:// or s3://.")
@click.option("--sample", default=DEFAULT_SAMPLE, show_default=True, callback=_sample,
              help="Items to read: a count (10000) or a fraction of the export (0.01).")
@click.option("--stage", default=None,
              help="Price this stage's plan (default: the specs as written) and check it for instances to consolidate.")
@click.option("--format", "fmt", type=click.Choice(["table", "markdown", "json"]), default="table",
              show_default=True, help="table for a terminal, markdown for a pull request, json for tools.")
@click.option("--fail-on", type=click.Choice(["warning", "error"]), default=None,
              help="Exit 1 when a finding of this severity or worse exists, naming them on stderr.")
@click.option("--root", type=click.Path(file_okay=False, path_type=Path), default=Path("."), show_default=True,
              help="Project root holding stacks/ (for --stage) and the price lock.")
@prices_option
def advise_command(specs: tuple[str, ...], table_id: str | None, export: str | None, sample: str,
                   stage: str | None, fmt: str, fail_on: str | None, root: Path, prices: Path | None) -> None:
    """Check specs (and a sample of an export) against Bigtable's schema design advice."""
    lock = read_prices(root, prices)
    report = advise(read_specs(list(specs)), table_id=table_id, export=export, sample=sample, root=root,
                    stage=stage, lock=lock)
    if fmt == "json":
        click.echo(json.dumps(to_json(report), indent=2))
    elif fmt == "markdown":
        click.echo(to_markdown(report))
    else:
        console = Console()
        for section in sections(report):
            print_section(section, console)
        console.print(counts(report), highlight=False)
    exit_if_tripped(tripped(report, fail_on))
