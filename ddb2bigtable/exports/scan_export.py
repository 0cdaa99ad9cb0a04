"""`ddb2bigtable export aws://REGION/TABLE -o DIR`: a parallel Scan written as AWS writes an
export to S3, for tables without point-in-time recovery and for DynamoDB Local (which has
no export API). `advise`, `load`, `verify` and `replicate --since DIR` read it unchanged.

- Segments: DynamoDB's parallel Scan (`Segment`/`TotalSegments`), one thread each; each
  writes its own data files (`layout.py`, the same files `writer.py` writes), exactly
  `items_per_file` items per file but the segment's last.
- A scan, not a point in time: items are read over minutes while the table takes writes.
  The manifest's `exportTime` is the moment the Scan began, and its `ddb2bigtable` field
  says it was a scan. Replaying the stream from `exportTime` (`replicate --since DIR`)
  brings every write made during the scan: a replayed record writes the item's whole
  image, so an item the scan read after a write gets the same image again (replicate/apply.py).
  The stream keeps 24 hours, so a scan older than that is refused by `replicate`, and
  an older checkpoint is not resumed here.
- Reads are bounded: at most `max_rcu` read capacity units per second over all segments,
  measured from each page's ConsumedCapacity; a throttled page is retried after a pause
  (botocore's retries first, then ours) and the rate halved.
- Resume: scan_state.py. Every AWS call has the timeouts of spec/aws_endpoints.py.
- To a bucket (`bucket`: `s3://BUCKET/PREFIX` or `gs://BUCKET/PREFIX`): `dest` is the local
  work folder, and bucket_upload.py uploads what the scan writes there.
"""

from __future__ import annotations

import base64
import hashlib
import math
import os
import re
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from ..spec.aws_endpoints import AwsFailures, bounded_retries, call_aws, client_config
from ..spec.errors import InputError, Problem, ServiceError
from . import scan_state
from .bucket_upload import BucketUpload
from .layout import (
    S3Location,
    Summary,
    data_file_name,
    epoch_millis,
    file_entry,
    iso_millis,
    write_data_file,
    write_manifests,
)
from .manifests import AWS_FOLDER
from .scan_state import DoneFile, Key, ScanState, Segment
from .writer import item_line

# The share of the table's read capacity the export takes unless --max-rcu says otherwise:
# a quarter, so the application keeps three quarters of a live table. (AWS Glue's crawler,
# which reads a table while it serves, takes half of a provisioned table's RCU and a
# quarter of an on-demand table's maximum by default: Glue API, DynamoDBTarget.scanRate;
# read 2026-11-29.)
DEFAULT_SHARE = 0.25
# On-demand tables have no provisioned reads: the share is of their MaxReadRequestUnits
# when set, else of the 12,000 reads/s a new on-demand table sustains (AWS, "DynamoDB
# on-demand capacity mode", Initial throughput; read 2026-11-29), so 3,000 RRU/s.
ON_DEMAND_READS = 12_000
RETENTION = timedelta(hours=24)  # DynamoDB Streams keeps 24 hours of records
THROTTLED_PAUSES = 8  # pauses of 1, 2, 4 ... 30 s after botocore's own retries, then the export stops
BURST_SECONDS = 1.0  # the budget lets one second's worth of units be spent at once
_TABLE_NAME = re.compile(r"[A-Za-z0-9_.-]{3,255}")
_REGION = re.compile(r"[a-z0-9-]{2,40}")
_THROTTLED = {"ProvisionedThroughputExceededException", "ThrottlingException", "RequestLimitExceeded",
              "LimitExceededException"}
_NO_TABLE = {"ResourceNotFoundException"}
_USAGE = "give aws://REGION/TABLE (e.g. aws://us-east-1/Orders)"


@dataclass(frozen=True)
class ScanOptions:
    region: str
    table: str
    dest: Path
    segments: int = 4
    max_rcu: float | None = None  # None: DEFAULT_SHARE of the table's reads (ON_DEMAND_READS when on-demand)
    items_per_file: int = 10_000
    endpoint_url: str | None = None  # None: boto3's (AWS_ENDPOINT_URL_DYNAMODB, else AWS)
    bucket: str | None = None  # s3:// or gs:// URL the export is uploaded to; `dest` is then the work folder


@dataclass(frozen=True)
class ScanResult:
    export_dir: str  # the folder, or the bucket URL, holding manifest-summary.json
    items: int
    files: int
    consumed: float  # read capacity units
    rate: float  # the budget, units per second
    rate_reason: str
    start: datetime
    seconds: float
    resumed: bool


def parse_source(source: str) -> tuple[str, str]:
    """(region, table) of `aws://REGION/TABLE`; InputError (exit 2) for anything else."""
    scheme, sep, rest = source.partition("://")
    region, _, table = rest.partition("/")
    if scheme != "aws" or not sep:
        raise InputError([Problem.about(source, "", f"not an aws:// table: {_USAGE}")])
    if not _REGION.fullmatch(region) or not _TABLE_NAME.fullmatch(table):
        raise InputError([Problem.about(source, "", f"expected a region and a DynamoDB table name (3-255 of "
                                        f"A-Z a-z 0-9 _ . -): {_USAGE}")])
    return region, table


def read_budget(described: dict[str, Any], max_rcu: float | None) -> tuple[float, str]:
    """Units per second the export may read, and why (pure: DescribeTable's `Table`)."""
    if max_rcu is not None:
        return max_rcu, "--max-rcu"
    provisioned = (described.get("ProvisionedThroughput") or {}).get("ReadCapacityUnits") or 0
    on_demand = (described.get("BillingModeSummary") or {}).get("BillingMode") == "PAY_PER_REQUEST" or not provisioned
    if not on_demand:
        return provisioned * DEFAULT_SHARE, f"{DEFAULT_SHARE:.0%} of the table's {provisioned:,} provisioned RCU"
    ceiling = (described.get("OnDemandThroughput") or {}).get("MaxReadRequestUnits") or 0
    if ceiling > 0:
        return ceiling * DEFAULT_SHARE, f"{DEFAULT_SHARE:.0%} of the on-demand table's {ceiling:,} MaxReadRequestUnits"
    return ON_DEMAND_READS * DEFAULT_SHARE, (f"{DEFAULT_SHARE:.0%} of the {ON_DEMAND_READS:,} reads/s a new "
                                             f"on-demand table sustains")


class Budget:
    """Read units per second shared by every segment: each page's units are paid for by
    sleeping until the budget has refilled (one second's worth may be spent at once)."""

    def __init__(self, rate: float, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep):
        self.rate, self._clock, self._sleep = rate, clock, sleep
        self._free_at = clock()
        self._lock = threading.Lock()

    def spend(self, units: float) -> None:
        with self._lock:
            now = self._clock()
            self._free_at = max(self._free_at, now - BURST_SECONDS) + units / self.rate
            wait_for = self._free_at - now - BURST_SECONDS
        if wait_for > 0:
            self._sleep(wait_for)

    def slow_down(self) -> None:
        """DynamoDB throttled a page: the table has less room than the budget assumed."""
        with self._lock:
            self.rate = max(self.rate / 2, 1.0)


class _Throttled(ServiceError):
    pass


class _Stopped(Exception):
    """Another segment failed: this one stops at its next page (its partial file is redone on resume)."""


class ScanExport:
    """One run of the export: the table described, the checkpoint loaded or begun, the
    segments run side by side, the manifests written."""

    def __init__(self, options: ScanOptions, progress: Callable[[int], None] = lambda n: None):
        self.options, self.progress = options, progress
        self.where = f"aws://{options.region}/{options.table}"
        self._failures = AwsFailures(
            bad_input=lambda m: InputError([Problem.about(self.where, "", m)]),
            unavailable=lambda m: ServiceError(f"{self.where}: {m}; the export stopped, rerun it to resume"),
            client_error=self._client_error,
            unreachable="is DynamoDB (or DynamoDB Local) running there? check AWS_ENDPOINT_URL_DYNAMODB",
            silent="the endpoint accepted the connection but did not answer")
        import boto3

        config = client_config(5, max_pool_connections=options.segments + 1, user_agent_extra="ddb2bigtable-export")
        self._db = bounded_retries(boto3.session.Session().client(
            "dynamodb", region_name=options.region, endpoint_url=options.endpoint_url, config=config))
        self._lock, self._stop = threading.Lock(), threading.Event()
        self._upload = BucketUpload(options.bucket) if options.bucket is not None else None

    def _client_error(self, operation: str, code: str, message: str) -> Exception:
        if code in _THROTTLED:
            return _Throttled(f"{self.where}: {operation} throttled ({code})")
        if code in _NO_TABLE:
            return InputError([Problem.about(self.where, "", f"no table {self.options.table!r} in "
                                             f"{self.options.region} ({message}); check the name and the region")])
        return ServiceError(f"{self.where}: {operation}: {code}: {message}; the export stopped, rerun it to resume")

    def run(self) -> ScanResult:
        began = time.monotonic()
        table = call_aws("DescribeTable", lambda: self._db.describe_table(TableName=self.options.table),
                         self._failures)["Table"]
        rate, reason = read_budget(table, self.options.max_rcu)
        dest = self.options.dest
        if dest.exists() and not dest.is_dir():
            raise InputError([Problem.about(str(dest), "-o", "is not a folder: give -o a folder (a new one is made)")])
        _private_folders(dest)
        with scan_state.only_writer(dest):
            result = self._scan(table["TableArn"], rate, reason, began)
        (dest / scan_state.LOCK).unlink()
        return result

    def _scan(self, table_arn: str, rate: float, reason: str, began: float) -> ScanResult:
        state, resumed = self._opening(table_arn)
        self.budget = Budget(rate)
        self.state = state
        data_dir = self.options.dest / AWS_FOLDER / state.export_id / "data"
        _private_folders(data_dir)
        with ThreadPoolExecutor(self.options.segments, thread_name_prefix="scan") as pool:
            futures = [pool.submit(self._segment, s, data_dir) for s in range(self.options.segments)]
            try:
                wait(futures, return_when=FIRST_EXCEPTION)
            finally:  # done, failed or Ctrl-C: any segment still running stops at its next page
                self._stop.set()
        errors = [e for f in futures if (e := f.exception()) is not None]
        if errors:  # the failure itself, not a segment that stopped because of it
            raise next((e for e in errors if not isinstance(e, _Stopped)), errors[0])
        files = [f for s in state.segments for f in s.files]
        self._manifests(state, files, rate)
        scan_state.checkpoint_path(self.options.dest).unlink()
        where = self._upload.export_url(state.export_id) if self._upload else \
            str(self.options.dest / AWS_FOLDER / state.export_id)
        return ScanResult(where, sum(f.count for f in files), len(files),
                          state.consumed, rate, reason, state.start, time.monotonic() - began, resumed)

    def _opening(self, table_arn: str) -> tuple[ScanState, bool]:
        """The checkpoint to resume, or a new one; refuses a folder that holds a finished
        export, a checkpoint of another table or shape, and one older than the stream keeps."""
        dest, opts = self.options.dest, self.options
        saved = scan_state.load(dest)
        where = str(scan_state.checkpoint_path(dest))
        if saved is None:
            if self._upload is not None and self._upload.holds_export():
                raise InputError([Problem.about(self._upload.url, "-o", f"already holds {AWS_FOLDER}/ (an export) and "
                                                f"{dest} holds no checkpoint to resume: give -o a new prefix")])
            if (dest / AWS_FOLDER).exists():
                raise InputError([Problem.about(str(dest), "-o", f"already holds {AWS_FOLDER}/ (an export) and no "
                                                f"checkpoint to resume: give -o a new folder")])
            start = datetime.now(UTC)
            export_id = f"{epoch_millis(start):014d}-{secrets.token_hex(4)}"
            state = ScanState(table_arn, export_id, start, opts.items_per_file,
                              [Segment() for _ in range(opts.segments)])
            scan_state.save(dest, state)
            return state, False
        if saved.table_arn != table_arn:
            raise InputError([Problem.about(where, "", f"this checkpoint is of {saved.table_arn}, not {table_arn}: "
                                            f"give -o another folder")])
        if len(saved.segments) != opts.segments or saved.items_per_file != opts.items_per_file:
            raise InputError([Problem.about(where, "", f"the export being resumed runs --segments "
                                            f"{len(saved.segments)} --items-per-file {saved.items_per_file}: "
                                            f"rerun with those")])
        if datetime.now(UTC) - saved.start > RETENTION:
            raise InputError([Problem.about(where, "", f"the scan began at {iso_millis(saved.start)}, more than 24 h "
                                            f"ago: the stream no longer holds every write since, so `replicate` "
                                            f"could not catch up from it; give -o a new folder to export again")])
        return saved, True

    def _segment(self, number: int, data_dir: Path) -> None:
        part = self.state.segments[number]
        while not part.done:
            name = data_file_name(hashlib.sha256(f"{self.state.export_id}|{number}|{len(part.files)}".encode())
                                  .digest())
            path = data_dir / f"{name}.json.gz"
            cursor: list[Key | None] = [part.key]
            count, size, digest = write_data_file(path, self._lines(number, cursor))
            kept = count or not part.files  # a segment's only file may be empty, as an empty partition's
            if kept and self._upload is not None:  # uploaded before the checkpoint says it is done
                self._upload.data_file(self.state.export_id, path)
            with self._lock:
                if kept:
                    part.files.append(DoneFile(name, count, base64.b64encode(digest).decode(), size))
                else:
                    path.unlink()
                part.key, part.done = cursor[0], cursor[0] is None
                scan_state.save(self.options.dest, self.state)

    def _lines(self, number: int, cursor: list[Key | None]) -> Iterator[bytes]:
        """The next file's lines: pages of the segment from `cursor[0]` until the file is
        full or the segment ends; `cursor[0]` is left at the key after the last line."""
        written, per_file = 0, self.state.items_per_file
        while written < per_file:
            if self._stop.is_set():
                raise _Stopped
            page = self._page(number, cursor[0], per_file - written)
            size = 0
            for item in page.get("Items", []):
                line = item_line(item)
                size += len(line)
                written += 1
                yield line
            units = (page.get("ConsumedCapacity") or {}).get("CapacityUnits")
            self._paid(units if units is not None else math.ceil(size / 4096) * 0.5, len(page.get("Items", [])))
            cursor[0] = page.get("LastEvaluatedKey")
            if cursor[0] is None:
                return

    def _paid(self, units: float, items: int) -> None:
        with self._lock:
            self.state.consumed += units
        self.progress(items)
        self.budget.spend(units)

    def _page(self, number: int, key: Key | None, limit: int) -> dict[str, Any]:
        request: dict[str, Any] = {"TableName": self.options.table, "Segment": number,
                                   "TotalSegments": self.options.segments, "Limit": limit,
                                   "ReturnConsumedCapacity": "TOTAL"}
        if key is not None:
            request["ExclusiveStartKey"] = key
        for pause in range(THROTTLED_PAUSES + 1):
            try:
                return call_aws("Scan", lambda: self._db.scan(**request), self._failures)
            except _Throttled:
                if pause == THROTTLED_PAUSES:
                    raise ServiceError(f"{self.where}: Scan still throttled after {THROTTLED_PAUSES} pauses: the "
                                       f"table has no room for the export now; rerun later (it resumes) or with a "
                                       f"lower --max-rcu") from None
                self.budget.slow_down()
                time.sleep(min(2 ** pause, 30))
        raise AssertionError("unreachable")

    def _manifests(self, state: ScanState, files: list[DoneFile], rate: float) -> None:
        export_dir = self.options.dest / AWS_FOLDER / state.export_id
        data_folder = f"{AWS_FOLDER}/{state.export_id}/data"
        entries = [file_entry(f"{data_folder}/{f.name}.json.gz", f.count, base64.b64decode(f.md5)) for f in files]
        (export_dir / "_started").write_bytes(b"")
        summary = Summary(state.table_arn, state.export_id, state.start, datetime.now(UTC),
                          sum(f.count for f in files), sum(f.size for f in files), s3=S3Location(bucket=None))
        write_manifests(export_dir, entries, summary, {
            "exportTime": iso_millis(state.start),
            "ddb2bigtable": {"exportKind": "PARALLEL_SCAN", "scanStartTime": iso_millis(state.start),
                             "totalSegments": len(state.segments), "readCapacityUnits": round(state.consumed, 1),
                             "maxReadCapacityUnitsPerSecond": round(rate, 1)}})
        if self._upload is not None:
            self._upload.manifests(state.export_id, export_dir)


def _private_folders(folder: Path) -> None:
    """`folder` and its missing parents made 0700 (the export is table data); a folder
    that already exists is left as it is."""
    missing = [f for f in reversed([folder, *folder.parents]) if not f.exists()]
    for made in missing:
        made.mkdir(mode=0o700)
        os.chmod(made, 0o700)
