"""`validate` and `plan`: spec files in, every problem or the plan out."""

from __future__ import annotations

import json
from pathlib import Path

import click

from ..spec.errors import InputError
from ..spec.model import Spec
from .grammar import DEFAULT_STAGE, Formats
from .output import echo_warning
from .prices_cmd import prices_option, read_prices

ESTIMATE_MARK = "# estimate:"  # how `import` comments a value no source gave


def _warn_estimates(path: Path) -> None:
    """On stderr: `path` still holds values `import` marked as estimates (YAML comments), so
    the plan's numbers rest on guesses until they are replaced."""
    try:
        left = sum(ESTIMATE_MARK in line and not line.lstrip().startswith("#")  # a value's comment, not prose
                   for line in path.read_text(encoding="utf-8").splitlines())
    except (OSError, UnicodeDecodeError):
        return
    if left:
        echo_warning(f"warning: {path}: {left} value(s) still marked `{ESTIMATE_MARK}` by import: replace each with "
                     "the real figure before trusting the plan's numbers [estimate]")


def _warn_index_keys(specs: list[Spec], exports: tuple[str, ...]) -> None:
    """On stderr: an index keyed on an attribute no item of a given export has (a misspelt
    key attribute validates and plans, and the index stays empty), by advise's own check."""
    if not exports:
        return
    from ..advise.run import export_key_findings

    for finding in export_key_findings(specs, list(exports)):
        echo_warning(f"warning: {finding.table}: {finding.evidence}: {finding.suggestion} [{finding.code}]")


EXPORT_HELP = ("A DynamoDB export of one of the tables (folder, gs:// or s3://; repeatable, one export each): "
               "warn when an index key attribute is absent from every item of its sample.")


@click.command()
@click.argument("specs", nargs=-1, required=True)
@click.option("--export", "exports", multiple=True, help=EXPORT_HELP)
@click.option("--stage", "stages", multiple=True,
              help="Also plan every spec in this stage (repeatable). Default: each spec in the stages that list it.")
@click.option("--root", type=click.Path(file_okay=False, path_type=Path), default=Path("."), show_default=True,
              help="Project root holding stacks/.")
def validate(specs: tuple[str, ...], exports: tuple[str, ...], stages: tuple[str, ...], root: Path) -> None:
    """Check spec files: schema, then what a schema cannot check, then each stage that plans
    them. All problems at once."""
    from ..plan.planner import stage_problems
    from ..spec.reading import read_specs

    loaded = read_specs(list(specs))
    problems = stage_problems(root, loaded, list(stages) or None)
    if problems:
        raise InputError(problems)
    for spec in specs:
        click.echo(f"ok: {spec}")
        _warn_estimates(Path(spec))
    _warn_index_keys(loaded, exports)


@click.command()
@click.argument("specs", nargs=-1)
@click.option("--stage", default=DEFAULT_STAGE, show_default=True, help="Stage name: stacks/Pulumi.<stage>.yaml.")
@click.option("--export", "exports", multiple=True, help=EXPORT_HELP)
@click.option("--format", "fmt", type=Formats("text", "markdown", "json"), default="text", show_default=True,
              help="text for a terminal, markdown for a pull request, json (docs/json-formats.md) for tools.")
@click.option("--root", type=click.Path(file_okay=False, path_type=Path), default=Path("."), show_default=True,
              help="Project root holding stacks/ (and the specs the stage lists).")
@prices_option
def plan(specs: tuple[str, ...], stage: str, exports: tuple[str, ...], fmt: str, root: Path,
         prices: Path | None) -> None:
    """Plan a stage: clusters, nodes, tables, GC, app profiles and monthly cost, each with its why.

    Without SPEC arguments, plans the specs the stage lists.
    """
    from rich.console import Console

    from ..plan.planner import plan_files
    from ..render.json_format import to_json
    from ..render.markdown import to_markdown
    from ..render.terminal import print_plan
    from ..spec.reading import read_specs
    from ..spec.stage import load_stage

    stage_plan = plan_files(root, stage, list(specs), read_prices(root, prices))
    for spec_file in dict.fromkeys(i.spec_file for i in stage_plan.instances):
        given = Path(spec_file)  # as given on the command line, or as the stage lists it (under --root)
        _warn_estimates(given if given.exists() or specs else root / spec_file)
    if exports:
        _warn_index_keys(read_specs(list(specs) or [str(p) for p in load_stage(stage, root).spec_paths(root)]), exports)
    if fmt == "json":
        click.echo(json.dumps(to_json(stage_plan), indent=2))
    elif fmt == "markdown":
        click.echo(to_markdown(stage_plan))
    else:
        print_plan(stage_plan, Console())
