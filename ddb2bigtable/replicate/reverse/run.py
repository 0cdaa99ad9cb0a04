"""`replicate --reverse`: serve's stream applied to the source DynamoDB table, the way back
after the application's writes moved to Bigtable.

serve answers the DynamoDB Streams API for the tables it serves (docs/streams.md), so
the stream is read with forward replication's own reader (stream.StreamReader) at serve's
endpoint (`--stream-endpoint-url`, else AWS_ENDPOINT_URL_DYNAMODB_STREAMS), and the run
around it is forward's (run.Run): shards in lineage order, `--shards I/N`, per-shard
checkpoints saved after DynamoDB acknowledged, dead letters, outages waited out, lag.
Only the sink differs (writes.py: whole images written to DynamoDB), and the names of
its files in the work folder (shares.REVERSE: `replicate-reverse.json`, ...), kept apart
from forward's so neither resumes from or merges the other's.

Forward and reverse never write at once: reverse writes land in DynamoDB's stream, and
a forward replicate still running would copy them back into Bigtable, an older image
over a newer one whenever the application wrote the item again meanwhile. So forward
refuses to start while reverse runs (opening.py), and reverse, started before the write
switch as the runbook says, holds its writes while forward runs in the folder
(`forward_running`), saying so; it starts once forward stopped, from its start point,
which the runbook puts before the switch, so no write through serve is missed.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from pathlib import Path

from ...load.work_folder import locked
from ...spec.errors import InputError, Problem, redact_userinfo
from ...spec.model import TableSpec
from ..checkpoint import save_checkpoint
from ..opening import opening_checkpoint, require_seconds
from ..outage import Outage, answer, limit_for
from ..report import ReplicateReport
from ..run import ReplicateOptions, Run, run_and_report, tell_outage
from ..shares import FORWARD, REVERSE, running
from ..stream import StreamReader
from .writes import IN_FLIGHT, DynamoDBSink

STREAMS_ENDPOINT_ENV = "AWS_ENDPOINT_URL_DYNAMODB_STREAMS"
FIRST_SINCE = "a time (with its zone) before the application's first write through serve: the write switch"
# What to do when serve's stream cannot reach the start point (made after it, or 24 h gone).
NO_WAY_BACK = ("serve makes a table's stream when it first serves the table, and keeps 24 hours of it: give --since "
               "a time after serve first served it and before the write switch; writes through serve outside the "
               "stream cannot be copied back")


SERVE_NO_STREAM = ("give the table's spec `stream: new_and_old_images` and apply the plan (`up` on an emulator "
                   "stage, `pulumi up` on a cloud one) before writes move to serve: a spec table's stream is its "
                   "spec's, and writes made through serve before it existed are in no stream, so they cannot be "
                   "brought back this way")


def serves_stream(table: TableSpec, url: str, connections: int = 10) -> StreamReader:
    """A reader of serve's stream of `table` at `url`, named and advised as serve's."""
    stream = StreamReader(table.source.table, table.source.region, url, connections=connections)
    stream.where = f"serve's stream of table {table.source.table} ({redact_userinfo(url)})"
    stream.no_stream = SERVE_NO_STREAM
    return stream


def reverse_target(table: TableSpec, options: ReplicateOptions) -> dict[str, str]:
    """What a reverse checkpoint is bound to: the DynamoDB table written and the stream's endpoint."""
    return {"dynamodb_table": table.source.table, "region": table.source.region,
            "endpoint": redact_userinfo(options.endpoint_url or "AWS"),
            "stream_endpoint": redact_userinfo(options.stream_endpoint_url or "AWS")}


def forward_running(work_dir: Path) -> str | None:
    """Why reverse writes nothing now: forward replication (or a load) at work in the folder."""
    found = running(work_dir, FORWARD)
    if not found:
        return None
    return (f"waiting for forward replication ({', '.join(found)}) to stop: DynamoDB's stream would carry "
            f"this direction's writes back into Bigtable")


def stream_endpoint(given: str | None) -> str:
    """`--stream-endpoint-url`, else AWS_ENDPOINT_URL_DYNAMODB_STREAMS: serve's endpoint.
    Never AWS's own: the stream to read is serve's, which only serve answers."""
    url = given or os.environ.get(STREAMS_ENDPOINT_ENV)
    if not url:
        raise InputError([Problem.about("replicate --reverse", "--stream-endpoint-url", f"give serve's endpoint "
                                        f"(http(s)://HOST:PORT), whose DynamoDB Streams API carries the writes "
                                        f"made through it, or set {STREAMS_ENDPOINT_ENV}")])
    return url


async def reverse_table(table: TableSpec, options: ReplicateOptions,
                        progress: Callable[[ReplicateReport], None] | None = None,
                        stream: StreamReader | None = None, dynamodb: StreamReader | None = None) -> ReplicateReport:
    """`stream`: serve's stream to read (default: at options.stream_endpoint_url);
    `dynamodb`: the table to write (default: the spec's source table at options.endpoint_url)."""
    if options.outage_limit is not None:
        require_seconds(options.outage_limit, "replicate", "--outage-limit")
    options = replace(options, share=replace(options.share, prefix=REVERSE))
    source = table.source
    if stream is None:
        stream = serves_stream(table, stream_endpoint(options.stream_endpoint_url), connections=options.workers + 2)
    # The images go to BatchWriteItem as they came, binaries in base64 as its JSON carries them (no
    # walk of every value to bytes and back: a third of the replicator's work a record, 2026-12-08);
    # not with --fetch-keys-only, whose BatchGetItem through botocore takes keys' binaries as bytes.
    stream.binary_text = not options.fetch_keys_only
    dynamodb = dynamodb or StreamReader(source.table, source.region, options.endpoint_url,
                                        connections=options.workers * IN_FLIGHT + 2)
    waiting = ReplicateReport(table.id, "", 0, resumed=False)  # what the live line shows while a side is out
    stopping = lambda: options.stop is not None and options.stop.is_set()  # noqa: E731
    outage = Outage(limit_for(options.follow, options.outage_limit), partial(tell_outage, waiting, progress),
                    "nothing was read yet")
    found = await answer(partial(stream.listed_stream, options.fetch_keys_only), outage, stopping)
    await answer(partial(dynamodb.call, "describe_table", "Table", TableName=source.table), outage, stopping)
    share, path = options.share, options.work_dir / options.share.checkpoint_name
    with locked(options.work_dir, share.lock_name, f"replicate --reverse --shards {share}"):
        checkpoint = opening_checkpoint(options.since_micros, share, path, found.arn, reverse_target(table, options),
                                        found.created_micros, FIRST_SINCE, NO_WAY_BACK)
        save_checkpoint(path, checkpoint)  # a rerun resumes from the start point even if nothing came
        report = ReplicateReport(table.id, found.arn, checkpoint.start_micros, resumed=options.since_micros is None,
                                 checkpoint_file=str(path), share=str(share))
        report.outages = outage.count
        sink = DynamoDBSink(dynamodb)
        run = Run(stream, sink, checkpoint, report, options, progress, table,
                  hold=partial(forward_running, options.work_dir))
        try:
            return await run_and_report(run)
        finally:
            sink.pool.shutdown(wait=False, cancel_futures=True)


def run_reverse(table: TableSpec, options: ReplicateOptions,
                progress: Callable[[ReplicateReport], None] | None = None) -> ReplicateReport:
    return asyncio.run(reverse_table(table, options, progress))
