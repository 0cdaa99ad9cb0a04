"""`advise`: the schema-design seeds applied to specs and a sample of an export. Prints
the report; exit 1 with --fail-on when a finding is that severe, 2 on bad input."""

from __future__ import annotations

import json
from pathlib import Path

import click

from ..advise.sample import DEFAULT_SAMPLE, sample_size
from .fail_on import exit_if_tripped
from .grammar import Formats, deprecated
from .prices_cmd import prices_option, read_prices


def _sample(ctx: click.Context, param: click.Parameter, value: str) -> str:
    """A count, checked before the export is opened. A fraction here is the spelling of the
    release before --sample-fraction: still read, with the deprecation line."""
    try:
        sample_size(value, 1)
    except ValueError as error:
        raise click.BadParameter(str(error).removeprefix(f"--sample {value!r}: ")) from None
    if not value.isdigit():
        deprecated(ctx, f"--sample {value}", f"--sample-fraction {value}")
    return value


def _fraction(ctx: click.Context, param: click.Parameter, value: float | None) -> str | None:
    """The fraction as the engine's sample text (`0.01`), or None when not given."""
    return None if value is None else f"{value:.12f}".rstrip("0")  # 1.0 stays a fraction: "1."


@click.command(name="advise")
@click.argument("specs", nargs=-1, required=True)
@click.option("--table", "table_id", default=None, help="Only this table id of the specs.")
@click.option("--export", default=None, help="DynamoDB export of the table to sample: local folder, gs:// or s3://.")
@click.option("--sample", default=DEFAULT_SAMPLE, show_default=True, callback=_sample,
              help="Items to read from the export (a count).")
@click.option("--sample-fraction", type=click.FloatRange(0, 1, min_open=True), default=None, callback=_fraction,
              help="Items to read as a fraction of the export (0.01), instead of --sample's count.")
@click.option("--stage", default=None,
              help="Price this stage's plan (default: the specs as written) and check it for instances to consolidate.")
@click.option("--format", "fmt", type=Formats("text", "markdown", "json"), default="text",
              show_default=True, help="text for a terminal, markdown for a pull request, json for tools.")
@click.option("--fail-on", type=click.Choice(["warning", "error"]), default=None,
              help="Exit 1 when a finding of this severity or worse exists, naming them on stderr.")
@click.option("--root", type=click.Path(file_okay=False, path_type=Path), default=Path("."), show_default=True,
              help="Project root holding stacks/ (for --stage) and the price lock.")
@prices_option
def advise_command(specs: tuple[str, ...], table_id: str | None, export: str | None, sample: str,
                   sample_fraction: str | None, stage: str | None, fmt: str, fail_on: str | None, root: Path,
                   prices: Path | None) -> None:
    """Check specs (and a sample of an export) against Bigtable's schema design advice."""
    from rich.console import Console

    from ..advise.report import counts, sections, to_json, to_markdown, tripped
    from ..advise.run import advise
    from ..render.terminal import print_section
    from ..spec.reading import read_specs

    lock = read_prices(root, prices)
    report = advise(read_specs(list(specs)), table_id=table_id, export=export, sample=sample_fraction or sample,
                    root=root, stage=stage, lock=lock)
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
