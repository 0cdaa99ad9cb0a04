"""`cutover check`: a sample of the live DynamoDB table compared with Bigtable, and the
replication lag, before switching the application over. A group, so the later cutover
steps can join it; the check itself is in replicate/cutover.py."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from .output import echo_warning

if TYPE_CHECKING:
    from ..replicate.cutover import CutoverReport

SHOWN = 20  # differences listed in text; JSON has them all


@click.group()
def cutover() -> None:
    """Steps of switching a replicated table over to Bigtable."""


@cutover.command()
@click.argument("specs", nargs=-1)
@click.option("--table", "table_id", required=True, help="The table id to check.")
@click.option("--stage", default="local", show_default=True, help="Stage giving project and instance.")
@click.option("--sample", type=int, default=1000, show_default=True, help="Items to read from DynamoDB and compare.")
@click.option("--segments", type=int, default=4, show_default=True,
              help="Parallel Scan segments read at once (picked at random among 8 times as many).")
# --max-lag's default is replicate.cutover.LAG_LIMIT_SECONDS (the engine is imported only when a command runs).
@click.option("--max-lag", "max_lag", type=float, default=60.0, show_default=True,
              help="Seconds Bigtable may trail DynamoDB (replicate's lag) and still be ready to switch.")
@click.option("--endpoint-url", default=None,
              help="DynamoDB endpoint (DynamoDB Local); default AWS_ENDPOINT_URL_DYNAMODB, else AWS's.")
@click.option("--through", default=None, metavar="URL",
              help="A `serve` endpoint of the stage: the sample is also read through it, as the application "
                   "will read once switched.")
@click.option("--reverse", is_flag=True,
              help="The way back: a sample of Bigtable's items looked up in DynamoDB, and reverse replication's "
                   "lag; ready when DynamoDB holds them all again.")
@click.option("--stream-endpoint-url", default=None,
              help="With --reverse: serve's endpoint, whose stream reverse replication reads; default "
                   "AWS_ENDPOINT_URL_DYNAMODB_STREAMS.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="text for a person, json (docs/json-formats.md) for a pipeline.")
@click.option("--work-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="The load's work folder: its types and replicate's checkpoint "
                   "(default .ddb2bigtable/<stage>/<instance>/<table>).")
@click.option("--root", type=click.Path(file_okay=False, path_type=Path), default=Path("."), show_default=True,
              help="Project root holding stacks/ and the specs.")
def check(specs: tuple[str, ...], table_id: str, stage: str, sample: int, segments: int, max_lag: float,
          endpoint_url: str | None, through: str | None, reverse: bool, stream_endpoint_url: str | None, fmt: str,
          work_dir: Path | None, root: Path) -> None:
    """Compare a random sample of the live table with Bigtable (--reverse: of Bigtable with DynamoDB); exit 0
    when ready to switch, 1 when not.

    --table names the table among the SPECS given, or the specs the stage lists when none are."""
    if through is not None and reverse or stream_endpoint_url is not None and not reverse:
        from ..spec.errors import InputError, Problem

        option = "--through" if reverse else "--stream-endpoint-url"
        raise InputError([Problem.about("cutover check", option, "--through reads the forward check's sample "
                                        "through serve; --stream-endpoint-url names serve's stream for --reverse: "
                                        "give each with its own direction")])
    code = _run(root, list(specs), table_id, stage, sample, segments, endpoint_url, work_dir, fmt, max_lag=max_lag,
                through=through, reverse=reverse, stream_endpoint_url=stream_endpoint_url)
    sys.exit(code)


def _run(root: Path, specs: list[str], table_id: str, stage_name: str, sample: int, segments: int,
         endpoint_url: str | None, work_dir: Path | None, fmt: str, *, max_lag: float, through: str | None,
         reverse: bool = False, stream_endpoint_url: str | None = None) -> int:
    from ..bigtable.emulator import quiet_connection_warning
    from ..load.local_stage import WORK_DIR
    from ..plan.app_profiles import load_profile_id
    from ..replicate.cutover import CutoverOptions, run_cutover_check
    from ..replicate.stream import ENDPOINT_ENV
    from ..spec.aws_endpoints import check_endpoint_url
    from .load_runs import resolve

    endpoint_url = check_endpoint_url(endpoint_url, "cutover check") or os.environ.get(ENDPOINT_ENV)
    through = check_endpoint_url(through, "cutover check", "--through")
    target = resolve(root, specs, table_id, stage_name)
    profile = load_profile_id(target.instance)  # replicate's: reads what it wrote, on the cluster it wrote
    options = CutoverOptions(project=target.project, instance_id=target.instance.id, app_profile_id=profile,
                             work_dir=work_dir or root / WORK_DIR / stage_name / target.instance.id / table_id,
                             sample=sample, segments=segments, lag_limit_seconds=max_lag,
                             endpoint_url=endpoint_url, through=through)
    with quiet_connection_warning():
        if reverse:
            from ..replicate.reverse.check import run_reverse_check

            stream_url = check_endpoint_url(stream_endpoint_url, "cutover check", "--stream-endpoint-url")
            report = run_reverse_check(target.table, options, stream_url)
        else:
            report = run_cutover_check(target.table, options)
    if fmt == "json":
        click.echo(json.dumps(report.as_json(), indent=2))
    else:
        _print(report)
    return 0 if report.ready else 1


def _print(report: CutoverReport) -> None:
    from ..replicate.cutover import key_text

    verdict = "ready" if report.ready else "not ready: " + "; ".join(report.reasons)
    click.echo(f"cutover check {report.table}: {verdict}")  # why first; the counts and the verdict line follow
    click.echo(f"{report.table}: {report.checked:,} checked, {report.matches:,} match, "
               f"{len(report.mismatches):,} differ, {len(report.missing):,} missing in {report.missing_side}"
               + (f", {report.expired:,} expired (TTL)" if report.expired else "")
               + (f", {len(report.only_in_bigtable):,} only in Bigtable" if report.only_in_bigtable else ""))
    for mismatch in report.mismatches[:SHOWN]:
        click.echo(f"  differs: {key_text(mismatch['key'])}: {mismatch['detail']}")
    for gone in report.missing[:SHOWN]:
        click.echo(f"  missing in {report.missing_side}: {key_text(gone['key'])} (row {gone['row_key']})")
    for extra in report.only_in_bigtable[:SHOWN]:
        click.echo(f"  only in Bigtable: {key_text(extra['key'])} (row {extra['row_key']})")
    if report.through:
        click.echo(f"through serve ({report.through}): {report.through_checked:,} read, "
                   f"{len(report.through_serve):,} differ")
    for served in report.through_serve[:SHOWN]:
        click.echo(f"  differs through serve: {key_text(served['key'])}: {served['detail']}")
    if report.locked_rows:
        from ..load.locks import locked_note

        echo_warning(f"note: {locked_note(report.locked_rows)}; a difference in such a row may be that transaction",
                     err=False)
    lag = report.lag_note if report.lag_seconds is None else f"{report.lag_seconds:,.1f} s ({report.lag_note})"
    click.echo(f"replication lag: {lag}; limit {report.lag_limit_seconds:g} s (--max-lag)")
    if report.ready:
        click.echo(f"verdict: ready (0 differences in the sample, lag under the {report.lag_limit_seconds:g} s limit)")
    else:
        click.echo("verdict: not ready: " + "; ".join(report.reasons))
