"""`diff`: every stage's plan at two git refs, compared for a pull-request review."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click

from .fail_on import exit_if_tripped
from .grammar import Formats
from .prices_cmd import prices_option, warn_if_stale

if TYPE_CHECKING:
    from ..review.fail_rules import Rule


def _rules(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> list[Rule]:
    """The --fail-on rules, checked before any plan is made."""
    from ..review.fail_rules import parse_rule

    try:
        return [parse_rule(value) for value in values]
    except ValueError as error:
        raise click.BadParameter(str(error)) from None


@click.command()
@click.option("--base", required=True, help="Git ref to compare from (e.g. origin/main).")
@click.option("--head", default=None, help="Git ref to compare to (default: the working tree).")
@click.option("--stage", "stages", multiple=True, help="Only these stages (repeatable; default: all).")
@click.option("--format", "fmt", type=Formats("text", "markdown", "json"), default="text",
              show_default=True, help="text for a terminal, markdown for the pull-request comment, json for tools.")
@click.option("--fail-on", "fail_on", multiple=True, callback=_rules,
              help="Exit 1 on `destructive` changes, or on a stage's Bigtable cost rising by more than "
                   "`cost-increase:PCT` percent; repeatable. Each rule that trips is named on stderr with its figure.")
@click.option("--root", type=click.Path(file_okay=False, path_type=Path), default=Path("."), show_default=True,
              help="Project root: a git work tree holding stacks/ and the specs.")
@prices_option
def diff(base: str, head: str | None, stages: tuple[str, ...], fmt: str, fail_on: list[Rule], root: Path,
         prices: Path | None) -> None:
    """Capacity, cost and destructive changes of every stage between two versions of the specs.

    Each side is priced with its own prices.lock.json (or --prices FILE for both), so a
    refreshed lock shows as price changes apart from capacity changes."""
    from rich.console import Console

    from ..plan.price_lock import lock_for
    from ..render.diff_format import print_diff, to_json, to_markdown
    from ..review.diff_run import run_diff
    from ..review.fail_rules import tripped

    diffs = run_diff(root, base, head, list(stages) or None, prices)
    if head is None and (lock := lock_for(root, prices)) is not None:
        warn_if_stale(lock)
    if fmt == "json":
        click.echo(json.dumps(to_json(diffs, base, head), indent=2))
    elif fmt == "markdown":
        click.echo(to_markdown(diffs, base, head), nl=False)
    else:
        print_diff(diffs, base, head, Console())
    exit_if_tripped(tripped(fail_on, diffs))
