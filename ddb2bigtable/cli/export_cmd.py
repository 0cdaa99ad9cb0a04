"""`export aws://REGION/TABLE -o DIR`: a live table (or DynamoDB Local's) as a DynamoDB
export, by a parallel Scan (exports/scan_export.py). Rerunning the same command after a
crash or Ctrl-C resumes it. `-o s3://...` or `gs://...` uploads it, the checkpoint and
lock staying in a local work folder (`--work-dir`)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ..exports.locations import bucket_path
from ..exports.scan_export import DEFAULT_SHARE, ScanExport, ScanOptions, ScanResult, parse_source
from ..exports.scan_state import checkpoint_path
from ..spec.aws_endpoints import check_endpoint_url
from ..spec.errors import InputError, Problem


@click.command("export")
@click.argument("source")
@click.option("-o", "--output", "dest", required=True,
              help="Folder to write the export into (made 0700 if new), or s3://BUCKET/PREFIX or "
                   "gs://BUCKET/PREFIX to upload it to (the manifests last).")
@click.option("--work-dir", default=None,
              help="With a bucket -o: the local folder (0700) holding the checkpoint, the lock and the data file "
                   "being written (default .ddb2bigtable/export/<hash of the URL>); rerun with the same to resume.")
@click.option("--segments", type=click.IntRange(1, 1000), default=4, show_default=True,
              help="Parallel Scan segments, one thread each.")
@click.option("--max-rcu", type=click.FloatRange(min=0, min_open=True), default=None,
              help=f"Read capacity units per second at most (default {DEFAULT_SHARE:.0%} of the table's "
                   f"provisioned reads; on-demand: of MaxReadRequestUnits, else of 12,000).")
@click.option("--items-per-file", type=click.IntRange(1, 10_000_000), default=10_000, show_default=True,
              help="Items per data file (a segment's last holds fewer); a resume redoes at most one file per segment.")
@click.option("--endpoint-url", default=None,
              help="DynamoDB endpoint (default: AWS_ENDPOINT_URL_DYNAMODB, else AWS); e.g. DynamoDB Local's.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def export(source: str, dest: str, work_dir: str | None, segments: int, max_rcu: float | None,
           items_per_file: int, endpoint_url: str | None, fmt: str) -> None:
    """Export a DynamoDB table by a parallel Scan, in the layout of AWS's export to S3.

    SOURCE is aws://REGION/TABLE. The manifest's exportTime is the scan's start: replicate
    --since DIR within 24 h replays every write made during the scan."""
    region, table = parse_source(source)
    bucket, folder = _places(dest, work_dir)
    options = ScanOptions(region, table, folder, segments, max_rcu, items_per_file,
                          check_endpoint_url(endpoint_url, "export"), bucket)
    console = Console(stderr=True)
    resuming = checkpoint_path(options.dest).is_file()
    bars = Progress(TextColumn(f"export {table}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    console=console, disable=not console.is_terminal)
    with bars:
        task = bars.add_task("scan", total=None)
        result = ScanExport(options, lambda n: bars.advance(task, n)).run()
    if fmt == "json":
        click.echo(json.dumps(_json(result), indent=2))
        return
    said = "resumed and finished" if resuming else "finished"
    click.echo(f"export {table} ({region}) {said}: {result.items:,} items in {result.files} data files, "
               f"{result.consumed:,.1f} read units at most {result.rate:,.1f}/s ({result.rate_reason}), "
               f"{result.seconds:.1f} s")
    click.echo(f"  {result.export_dir}")
    click.echo(f"  a scan, not a point in time: its exportTime is the scan's start ({_iso(result)}); "
               f"replicate --since {dest} before 24 h have passed brings every write made since")


def _places(dest: str, work_dir: str | None) -> tuple[str | None, Path]:
    """(the bucket URL or None, the local folder written): `-o` a folder, or a bucket URL and
    the work folder for its checkpoint."""
    scheme, sep, rest = dest.partition("://")
    if not sep:
        if work_dir is not None:
            raise InputError([Problem.about(work_dir, "--work-dir", "is for a bucket -o (s3://, gs://); a local "
                                            "-o folder holds its own checkpoint: leave --work-dir out")])
        return None, Path(dest)
    if scheme not in ("s3", "gs"):
        raise InputError([Problem.about(dest, "-o", f"{scheme}:// is not a place exports are written to; give a "
                                        f"folder, s3://BUCKET/PREFIX or gs://BUCKET/PREFIX")])
    url = bucket_path(dest, rest)
    if work_dir is None:
        work_dir = f".ddb2bigtable/export/{hashlib.sha256(url.encode()).hexdigest()[:16]}"
    return url, Path(work_dir)


def _iso(result: ScanResult) -> str:
    return result.start.isoformat(timespec="seconds").replace("+00:00", "Z")


def _json(result: ScanResult) -> dict[str, object]:
    return {"export": str(result.export_dir), "items": result.items, "files": result.files,
            "read_units": round(result.consumed, 1), "max_rcu": round(result.rate, 1),
            "max_rcu_reason": result.rate_reason, "scan_start": _iso(result), "seconds": round(result.seconds, 3),
            "resumed": result.resumed}
