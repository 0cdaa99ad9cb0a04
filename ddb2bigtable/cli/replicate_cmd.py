"""`replicate`: a table's DynamoDB stream applied to Bigtable after the load (zero-downtime
migration). Resolves spec, stage and target as `load` does; the run is in replicate/run.py."""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..spec.errors import InputError, Problem

if TYPE_CHECKING:
    from ..replicate.report import ReplicateReport
    from ..replicate.shares import Share

# Each worker is a reading thread and a Bigtable batcher with its own buffers: past a few
# dozen, one process only adds memory and contention; --shards spreads the shards over processes.
MAX_SHARD_WORKERS = 64
PARENTS_FINISHED = "the parent shards another --shards process reads are finished: reading their children"


@click.command()
@click.argument("specs", nargs=-1)
@click.option("--table", "table_id", required=True, help="The table id to replicate.")
@click.option("--stage", default="local", show_default=True, help="Stage giving project and instance.")
@click.option("--since", default=None,
              help="Start point: the export that was loaded (its exportTime) or an ISO time with zone; "
                   "omit to resume from the checkpoint.")
@click.option("--until-caught-up", "until_caught_up", is_flag=True,
              help="Stop once every shard has no more records; what a run without --follow does, so the flag "
                   "only says it.")
@click.option("--follow", is_flag=True, help="Keep polling the stream until Ctrl-C or SIGTERM (checkpoint saved).")
@click.option("--fetch-keys-only", is_flag=True,
              help="For a KEYS_ONLY (or OLD_IMAGE) stream: read each changed item with a consistent BatchGetItem.")
@click.option("--shards", "shares", default="0/1", show_default=True,
              help="I/N: this process reads the shards whose id hashes to I of N (N processes, e.g. a Cloud Run "
                   "job's tasks, sharing the work folder).")
@click.option("--shard-workers", type=click.IntRange(min=1, max=MAX_SHARD_WORKERS), default=4, show_default=True,
              help=f"Shards read and applied at once in this process (at most {MAX_SHARD_WORKERS}: each is a thread "
                   "and a Bigtable batcher; more shards at once take --shards processes).")
@click.option("--outage-limit", "outage_limit", type=float, default=None,
              help="Seconds DynamoDB or Bigtable out of reach is waited out (retried from the checkpoint) before "
                   "the run ends with exit 1 [default: 900 with --follow, 60 otherwise].")
@click.option("--endpoint-url", default=None,
              help="DynamoDB endpoint (DynamoDB Local); default AWS_ENDPOINT_URL_DYNAMODB, else AWS's.")
@click.option("--reverse", is_flag=True,
              help="The way back after the write switch: serve's stream (the writes made through serve) applied "
                   "to the source DynamoDB table.")
@click.option("--stream-endpoint-url", default=None,
              help="With --reverse: serve's endpoint, whose DynamoDB Streams API is read; default "
                   "AWS_ENDPOINT_URL_DYNAMODB_STREAMS.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="text for a person, json (docs/json-formats.md) for a pipeline.")
@click.option("--work-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="The load's work folder: its types, the checkpoint, dead letters "
                   "(default .ddb2bigtable/<stage>/<instance>/<table>).")
@click.option("--root", type=click.Path(file_okay=False, path_type=Path), default=Path("."), show_default=True,
              help="Project root holding stacks/ and the specs.")
def replicate(specs: tuple[str, ...], table_id: str, stage: str, since: str | None, until_caught_up: bool, follow: bool,
              fetch_keys_only: bool, shares: str, shard_workers: int, outage_limit: float | None,
              endpoint_url: str | None, reverse: bool, stream_endpoint_url: str | None, fmt: str,
              work_dir: Path | None, root: Path) -> None:
    """Apply the table's DynamoDB stream to Bigtable from the export's time (--reverse: serve's stream to
    DynamoDB); exit 1 on dead letters.

    --table names the table among the SPECS given, or the specs the stage lists when none are."""
    if follow and until_caught_up:
        raise InputError([Problem.about("replicate", "--follow", "give --follow or --until-caught-up, not both")])
    if stream_endpoint_url is not None and not reverse:
        raise InputError([Problem.about("replicate", "--stream-endpoint-url", "reads serve's stream: give it with "
                                        "--reverse (forward replication reads the table's own stream at "
                                        "--endpoint-url)")])
    from ..replicate.shares import FORWARD, REVERSE, parse_share

    share = parse_share(shares, REVERSE if reverse else FORWARD)
    code = _run(root, list(specs), table_id, stage, since, follow, fetch_keys_only, endpoint_url, work_dir, fmt,
                share=share, workers=shard_workers, outage_limit=outage_limit,
                stream_endpoint_url=stream_endpoint_url if reverse else None, reverse=reverse)
    sys.exit(code)


def _run(root: Path, specs: list[str], table_id: str, stage_name: str, since: str | None, follow: bool,
         fetch_keys_only: bool, endpoint_url: str | None, work_dir: Path | None, fmt: str, *,
         share: Share, workers: int, outage_limit: float | None, stream_endpoint_url: str | None = None,
         reverse: bool = False) -> int:
    from ..bigtable.emulator import quiet_connection_warning
    from ..bigtable.table_types import types_profile
    from ..load.local_stage import WORK_DIR
    from ..load.work_folder import private_dir
    from ..plan.app_profiles import load_profile_id
    from ..replicate.opening import start_point
    from ..replicate.run import ReplicateOptions, run_replicate
    from ..replicate.stream import ENDPOINT_ENV
    from ..spec.aws_endpoints import check_endpoint_url
    from .load_runs import resolve

    endpoint_url = check_endpoint_url(endpoint_url, "replicate") or os.environ.get(ENDPOINT_ENV)
    if reverse:
        from ..replicate.reverse.run import stream_endpoint

        stream_endpoint_url = stream_endpoint(check_endpoint_url(stream_endpoint_url, "replicate",
                                                                 "--stream-endpoint-url"))
    target = resolve(root, specs, table_id, stage_name)
    profile = load_profile_id(target.instance)
    options = ReplicateOptions(project=target.project, instance_id=target.instance.id, app_profile_id=profile,
                               work_dir=private_dir(work_dir or root / WORK_DIR / stage_name / target.instance.id
                                                    / table_id),  # refused or made before any stream is read
                               since_micros=start_point(since) if since else None, follow=follow,
                               endpoint_url=endpoint_url, stream_endpoint_url=stream_endpoint_url,
                               fetch_keys_only=fetch_keys_only, share=share, workers=workers,
                               outage_limit=outage_limit, types_profile_id=types_profile(target.instance))
    with quiet_connection_warning(), _progress_line(fmt, share) as progress:
        if reverse:
            from ..replicate.reverse.run import run_reverse

            report = run_reverse(target.table, options, progress)
        else:
            report = run_replicate(target.table, options, progress)
    if fmt == "json":
        click.echo(json.dumps(report.as_json(), indent=2))
    else:
        for line in text_lines(report, table_id):
            click.echo(line)
    return 1 if report.dead_letters else 0


# Why `replicate`'s lag and `cutover check`'s, read seconds apart, differ (49.9 s against 5.1 s).
LAG_WHY = ("lag: the run's end minus the newest applied record's stream time, which the stream rounds down "
           "(DynamoDB Local: to the minute, so up to 60 s high); `cutover check` counts from the later of that "
           "record and replicate's last catch-up (every shard found empty), so it reads lower")


def text_lines(report: ReplicateReport, table_id: str) -> list[str]:
    """The text report: what was applied and the lag, then what the lag is measured from."""
    summary = report.as_json()
    lag = "-" if summary["lag_seconds"] is None else f"{summary['lag_seconds']:,.1f} s"
    lines = [f"{table_id}: {report.stopped}; {summary['applied']:,} records applied "
             f"({summary['inserts']:,} inserts, {summary['modifies']:,} modifies, {summary['removes']:,} "
             f"removes, {summary['ttl_deletes']:,} TTL deletes), {summary['dead_letters']:,} dead letters, "
             f"{summary['records_per_second']:,.0f} records/s, lag {lag}"]
    lines += [LAG_WHY] if summary["lag_seconds"] is not None else []
    if report.share != "0/1":
        lines.append(f"shards {report.share}: {report.shards_owned} of {report.shards_seen} are this process's")
    lines.append(f"checkpoint: {report.checkpoint_file}")
    if report.dead_letter_file:
        lines.append(f"dead letters: {report.dead_letter_file}")
    return lines


@contextmanager
def _progress_line(fmt: str, share: Share) -> Iterator[Callable[[ReplicateReport], None]]:
    """A live line (applied, rate, lag, shards waiting on another process) while it runs,
    on a terminal; elsewhere (and with --format json) a line on stderr each time an
    outage (DynamoDB or Bigtable out of reach) starts, is retried or ends, and when
    waiting on another process's parent shards starts and ends."""
    from rich.console import Console

    console = Console(stderr=True)
    if fmt == "json" or not console.is_terminal:
        said: list[str | None] = [None, None, None]  # the outage, the waiting, the hold

        def news(report: ReplicateReport) -> None:
            if report.held != said[2]:
                click.echo(f"replicate: {report.held or 'nothing holds it back any more: writing'}", err=True)
                said[2] = report.held
            if report.outage != said[0]:
                click.echo(f"replicate: {report.outage or f'{report.outage_side} answers again: resuming'}", err=True)
                said[0] = report.outage
            waiting = _waiting_text(report, share) if report.waiting_parents else None
            if (waiting is None) != (said[1] is None):
                click.echo(f"replicate: {waiting or PARENTS_FINISHED}", err=True)
                said[1] = waiting
        yield news
        return
    began = time.monotonic()
    with console.status("replicating: waiting for the stream") as status:
        def show(report: ReplicateReport) -> None:
            if report.outage or report.held:
                status.update(f"replicating: {report.outage or report.held}")
                return
            rate = (report.applied + report.dead_letters) / max(time.monotonic() - began, 1e-6)
            lag = "-" if report.newest_micros is None else f"{time.time() - report.newest_micros / 1e6:,.0f} s"
            waiting = f"; {_waiting_text(report, share)}" if report.waiting_parents else ""
            status.update(f"replicating: {report.applied:,} applied, {report.dead_letters:,} dead letters, "
                          f"{rate:,.0f} records/s, lag {lag}{waiting}")
        yield show


def _waiting_text(report: ReplicateReport, share: Share) -> str:
    """Why a --shards process may show no progress: its shards' parents are another's."""
    return (f"waiting for {len(report.waiting_parents)} parent shard(s) that another --shards process reads "
            f"(all {share.count} processes must share this work folder)")
