"""Emulator stages' records: a scan of the table's stream cells (docs/streams.md).

The emulator has no change streams, so a GetRecords reads the table's `_ddb2bigtable_stream`
cells committed between the iterator's position and the moment the read began, keeps the
shard's, and orders them by sequence number. The upper bound is the read's own start,
rounded down to the millisecond (the emulator stamps server-time cells in milliseconds,
under the row's lock): a cell stamped before it is already visible to the scan, a later
one is left for the next read, so a reader polling with NextShardIterator neither skips
nor repeats a record. Local scale: each read scans the table's stream family (the filter
keeps every other cell on the emulator's side).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from google.cloud.bigtable.data import ReadRowsQuery, RowRange
from google.cloud.bigtable.data import row_filters as rf

from ...bigtable.deadlines import SCAN_ATTEMPT_SECONDS, SCAN_SECONDS
from ..session import Session
from ..store import bigtable_errors
from .positions import RETENTION_MICROS, SHARDS, Position, at_time, sequence, sequence_micros, shard_id, shard_of_row
from .records import FAMILY, number_of, parsed, stream_record
from .registry import Stream

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
PAGE_BYTES = 1024 * 1024  # "a maximum of 1 MB of data" (GetRecords, DynamoDB Streams API reference, read 2026-12-07)


@dataclass(frozen=True)
class Shard:
    id: str
    index: int
    start: str  # StartingSequenceNumber
    end: str | None  # EndingSequenceNumber of a closed shard
    parent: str | None = None


@dataclass(frozen=True)
class Page:
    records: list[dict]  # DynamoDB Records
    position: Position  # where the next read starts
    finished: bool  # a closed shard read to its end: no NextShardIterator


def shards(stream: Stream) -> list[Shard]:
    """The stream's SHARDS shards, all born with it and closed with it (no lineage)."""
    end = at_time(stream.closed_ms * 1000) if stream.closed_ms is not None else None
    return [Shard(shard_id(stream.created_ms, stream.label, i), i, at_time(stream.created_ms * 1000), end)
            for i in range(SHARDS)]


async def read(session: Session, stream: Stream, position: Position, limit: int, now_micros: int) -> Page:
    """Up to `limit` records (and 1 MB) of the shard from `position`, read up to now."""
    bound = now_micros // 1000 * 1000
    if stream.closed_ms is not None:
        bound = min(bound, stream.closed_ms * 1000)
    start = max(stream.created_ms * 1000, now_micros - RETENTION_MICROS,
                sequence_micros(position.after) if position.after else 0)
    found: list[tuple[str, int, bytes]] = []
    if start < bound:
        query = ReadRowsQuery(row_ranges=[RowRange()], row_filter=rf.RowFilterChain([
            rf.FamilyNameRegexFilter(FAMILY), rf.TimestampRangeFilter(
                start=_micros(start // 1000 * 1000), end=_micros(bound))]))
        store = session.table_store(stream.instance_id, stream.table_id, None, stream.table)
        async with bigtable_errors(stream.table):
            rows = await store.handle.read_rows(query, operation_timeout=SCAN_SECONDS,
                                                attempt_timeout=SCAN_ATTEMPT_SECONDS)
        for row in rows:
            if shard_of_row(row.row_key) != position.shard:
                continue
            for cell in row.cells:
                number = sequence(cell.timestamp_micros, row.row_key, number_of(cell.qualifier))
                if position.admits(number):
                    found.append((number, cell.timestamp_micros, cell.value))
    found.sort()
    records: list[dict] = []
    size, after = 0, position
    for number, micros, value in found:
        stored = parsed(value)
        if stored is None:
            continue
        made = stream_record(stored, stream.view, stream.region, number, micros)
        size += len(json.dumps(made))
        if len(records) == limit or (records and size > PAGE_BYTES):
            return Page(records, Position(position.shard, after.after, after.inclusive, position.issued_ms), False)
        records.append(made)
        after = Position(position.shard, number, False, position.issued_ms)
    finished = stream.closed_ms is not None and bound >= stream.closed_ms * 1000
    return Page(records, Position(position.shard, at_time(bound), True, position.issued_ms), finished)


def _micros(value: int) -> datetime:
    """TimestampRange takes datetimes in the data client; microseconds kept exact."""
    return EPOCH + timedelta(microseconds=value)
