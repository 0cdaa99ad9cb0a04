"""Cloud stages: Bigtable change-stream messages -> DynamoDB shards and records (pure).

A table's change stream comes in partitions, each a row range read with ReadChangeStream;
its messages (google.bigtable.v2.ReadChangeStreamResponse, as google-cloud-bigtable's
protos define them) are data changes, heartbeats and a CloseStream. They map onto
DynamoDB Streams so (docs/streams.md):

- a partition is a shard; its id is DynamoDB's form with a crc32 of its row range, so
  every worker names it alike;
- a USER DataChange setting cells of the stream family (records.FAMILY) carries one record
  per cell, the value reassembled when Bigtable sent it in chunks and a change split over
  several messages (`done`); the sequence number is the commit time and the row's change
  number (positions.sequence). Every other mutation (the item's own cells) and every
  GARBAGE_COLLECTION change (records aged out) is no record;
- a Heartbeat carries no record, only the continuation token where the partition stands,
  which the next shard iterator holds;
- a CloseStream with new partitions ends the shard; each new partition becomes a shard
  whose ParentShardId is the closing partition holding the new one's first row. "To read
  the new partition [A,C), supply the continuation tokens whose ranges cover the new
  partition" (ReadChangeStreamResponse.CloseStream, read 2026-12-07), so a merged
  partition has a parent per token; DynamoDB names one: the first.

The calls that read the stream (GenerateInitialChangeStreamPartitions, ReadChangeStream)
and the registry of shards they need are the next step (docs/streams.md, State).
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable
from dataclasses import dataclass

from google.cloud.bigtable_v2.types import ReadChangeStreamResponse, StreamPartition

from .positions import sequence
from .records import FAMILY, Stored, number_of, parsed

USER = ReadChangeStreamResponse.DataChange.Type.USER


@dataclass(frozen=True)
class Partition:
    """A partition's row range: [start, end), b"" for the table's start or end."""

    start: bytes
    end: bytes

    def holds(self, key: bytes) -> bool:
        return self.start <= key and (not self.end or key < self.end)


@dataclass(frozen=True)
class Child:
    """A partition a CloseStream opens: its shard, its parent's (None when another closing
    partition holds its first row: that one names it), and this parent's tokens for it."""

    shard: str
    partition: Partition
    parent: str | None
    tokens: tuple[str, ...]


@dataclass(frozen=True)
class CloudRecord:
    sequence: str
    commit_micros: int
    record: Stored


def partition_of(message: StreamPartition) -> Partition:
    rows = message.row_range
    return Partition(rows.start_key_closed or rows.start_key_open, rows.end_key_open or rows.end_key_closed)


def shard_id(created_ms: int, partition: Partition) -> str:
    """A partition's shard id: DynamoDB's form, the stream's creation and a crc32 of the range."""
    return f"shardId-{created_ms:020d}-{zlib.crc32(partition.start + b'|' + partition.end):08x}"


def records(messages: Iterable[ReadChangeStreamResponse]) -> list[CloudRecord]:
    """The stream records in a partition's messages, in the order Bigtable sent them."""
    found: list[CloudRecord] = []
    pending: dict[bytes, bytearray] = {}  # a chunked value, by qualifier, until its last chunk
    for message in messages:
        if "data_change" not in message:
            continue
        change = message.data_change
        if change.type_ != USER:
            continue
        committed = change.commit_timestamp.timestamp_pb()
        micros = committed.seconds * 1_000_000 + committed.nanos // 1000
        for chunk in change.chunks:
            cell = chunk.mutation.set_cell
            if "set_cell" not in chunk.mutation or cell.family_name != FAMILY:
                continue
            value = bytes(cell.value)
            if chunk.chunk_info.chunked_value_size:
                pending.setdefault(cell.column_qualifier, bytearray()).extend(value)
                if not chunk.chunk_info.last_chunk:
                    continue
                value = bytes(pending.pop(cell.column_qualifier))
            stored = parsed(value)
            if stored is not None:
                number = sequence(micros, change.row_key, number_of(cell.column_qualifier))
                found.append(CloudRecord(number, micros, stored))
    return found


def heartbeat_token(message: ReadChangeStreamResponse) -> str | None:
    """Where a partition stands after a heartbeat (the next iterator's token), or None."""
    if "heartbeat" not in message:
        return None
    return message.heartbeat.continuation_token.token


def children(message: ReadChangeStreamResponse, closing: Partition, created_ms: int) -> list[Child] | None:
    """The shards a CloseStream opens, with lineage; [] when the stream simply ended (an end
    time was reached), None when the message is not a CloseStream."""
    if "close_stream" not in message:
        return None
    close = message.close_stream
    parent = shard_id(created_ms, closing)
    out = []
    for new in close.new_partitions:
        partition = partition_of(new)
        tokens = tuple(t.token for t in close.continuation_tokens if partition.holds(partition_of(t.partition).start))
        out.append(Child(shard_id(created_ms, partition), partition,
                         parent if closing.holds(partition.start) else None, tokens))
    return out


@dataclass(frozen=True)
class CloudShard:
    """A shard as DescribeStream lists it on a cloud stage."""

    id: str
    partition: Partition
    parent: str | None
    closed: bool


def shards(created_ms: int, initial: Iterable[Partition],
           closes: Iterable[tuple[Partition, ReadChangeStreamResponse]]) -> list[CloudShard]:
    """Every shard of a stream, from its first partitions (GenerateInitialChangeStreamPartitions)
    and the CloseStreams its partitions ended with since, in the order they came: parents
    before children, each partition's shard once though a merge's two parents both name it
    (the parent holding its first row is its ParentShardId)."""
    found: dict[str, CloudShard] = {}
    for partition in initial:
        shard = shard_id(created_ms, partition)
        found[shard] = CloudShard(shard, partition, None, False)
    for closing, message in closes:
        opened = children(message, closing, created_ms) or []
        ended = shard_id(created_ms, closing)
        if ended in found:
            found[ended] = CloudShard(ended, closing, found[ended].parent, True)
        for child in opened:
            known = found.get(child.shard)
            parent = child.parent or (known.parent if known else None)
            found[child.shard] = CloudShard(child.shard, child.partition, parent, known.closed if known else False)
    return list(found.values())
