"""Cloud stages' records: Bigtable change streams read with ReadChangeStream (docs/streams.md).

A GetRecords reads the shard's partition from where its iterator stands: the continuation
token the last read ended on, or, before the first read, a start time (the stream's
creation, the retention's start, or the position's sequence number's time) for a partition
the stream began with, and its parents' continuation tokens for a partition a split or merge
opened. Bigtable's messages come as google.bigtable.v2.ReadChangeStreamResponse defines
them; partitions.py maps them (pure), this module does the I/O:

- a DataChange is taken whole (its messages up to `done`) and its `token` becomes the
  position: the next read resumes after it. Before the first token (a read from a time),
  records the position does not admit are left out (AFTER_SEQUENCE_NUMBER and the like);
  after it, none is: Bigtable orders one row's changes by commit time, not two rows', so a
  later change may carry an earlier time (docs/streams.md, "Every way it differs");
- a Heartbeat means the partition is read up to now: its token is kept and the read ends
  (Bigtable sends one every `heartbeat_duration` when no change comes, so a caught-up
  reader waits at most HEARTBEAT_SECONDS);
- a CloseStream ends the shard: its new partitions are recorded as the shard's children
  (cloud_shards.py) and the page is the shard's last (no NextShardIterator).

A read also stops at `Limit` records or 1 MB, between two changes, and at READ_SECONDS. A
disabled stream's partitions are read up to the time it was disabled (`end_time`), where
Bigtable closes them.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import orjson
from google.cloud.bigtable_v2.types import (
    ReadChangeStreamRequest,
    RowRange,
    StreamContinuationToken,
    StreamContinuationTokens,
    StreamPartition,
)

from ...codec.timestamps import moment_of
from ..errors import ServeError
from ..session import Session
from ..store import bigtable_errors
from . import cloud_shards, partitions
from .cloud_shards import gapic_client
from .partitions import Partition
from .positions import RETENTION_MICROS, Position, sequence_micros
from .records import stream_record
from .registry import Stream
from .scan_source import PAGE_BYTES, Page, Shard

HEARTBEAT_SECONDS = 1  # how long a caught-up GetRecords waits for Bigtable to say so
READ_SECONDS = 10  # one GetRecords' longest read of a partition; the rest is for the next


async def shards(session: Session, stream: Stream) -> list[Shard]:
    return (await cloud_shards.lineage(session, stream)).shards(stream)


def _request(session: Session, stream: Stream, partition: Partition, position: Position,
             parents: list[StreamContinuationToken], now_micros: int) -> ReadChangeStreamRequest:
    gapic = gapic_client(session)
    request = ReadChangeStreamRequest(
        table_name=gapic.table_path(session.catalog.project, stream.instance_id, stream.table_id),
        partition=StreamPartition(row_range=RowRange(start_key_closed=partition.start, end_key_open=partition.end)),
        heartbeat_duration=timedelta(seconds=HEARTBEAT_SECONDS))
    if position.token:
        token = StreamContinuationToken(partition=request.partition, token=position.token)
        request.continuation_tokens = StreamContinuationTokens(tokens=[token])
    elif parents:
        request.continuation_tokens = StreamContinuationTokens(tokens=parents)
    else:
        since = max(stream.created_ms * 1000, now_micros - RETENTION_MICROS,
                    sequence_micros(position.after) if position.after else 0)
        request.start_time = moment_of(since)
    if stream.closed_ms is not None:
        request.end_time = moment_of(stream.closed_ms * 1000)
    return request


async def read(session: Session, stream: Stream, position: Position, limit: int, now_micros: int) -> Page:
    """Up to `limit` records (and 1 MB) of the shard's partition from `position`."""
    lineage = await cloud_shards.lineage(session, stream)
    partition = lineage.partition(stream, position.shard)
    if partition is None:
        raise ServeError("ValidationException", "Invalid ShardIterator")
    parents = [] if position.token else lineage.start_tokens(partition)
    if parents is None:  # a merge's other parent is still open: its records come first
        return Page([], position, False)
    request = _request(session, stream, partition, position, parents, now_micros)
    records: list[dict[str, Any]] = []
    size, token, finished, change = 0, position.token, False, []
    after = position
    async with bigtable_errors(stream.table):
        responses = await gapic_client(session).read_change_stream(request=request, timeout=READ_SECONDS)
        try:
            async for message in responses:
                if "data_change" in message:
                    change.append(message)
                    if not message.data_change.done:
                        continue
                    made = [r for r in partitions.records(change) if position.token or after.admits(r.sequence)]
                    change = []
                    shaped = [stream_record(r.record, stream.view, stream.region, r.sequence, r.commit_micros)
                              for r in made]
                    grown = size + sum(len(orjson.dumps(s)) for s in shaped)  # images as stored: copied, not walked
                    if records and (len(records) + len(shaped) > limit or grown > PAGE_BYTES):
                        break  # the change is the next page's: the token stays before it
                    records.extend(shaped)
                    size, token = grown, message.data_change.token
                    if made:
                        after = Position(position.shard, made[-1].sequence, False, position.issued_ms, token)
                    if len(records) >= limit:
                        break
                elif "heartbeat" in message:
                    token = partitions.heartbeat_token(message) or token
                    break
                elif "close_stream" in message:
                    await cloud_shards.closed(session, stream, partition, message)
                    finished = True
                    break
        finally:
            _cancel(responses)
    return Page(records, Position(position.shard, after.after, after.inclusive, position.issued_ms, token), finished)


def _cancel(responses: Any) -> None:
    """Ends the server stream a read left (ReadChangeStream runs until cancelled)."""
    cancel = getattr(responses, "cancel", None)
    if cancel is not None:
        cancel()

