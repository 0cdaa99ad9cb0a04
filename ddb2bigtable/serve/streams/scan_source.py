"""Emulator stages' records: a scan of the table's stream cells (docs/streams.md).

The emulator has no change streams, so a GetRecords reads the table's `_ddb2bigtable_stream`
cells committed between the iterator's position and the moment the read began, keeps the
shard's, and orders them by sequence number. The upper bound is the read's own start,
rounded down to the millisecond (the emulator stamps server-time cells in milliseconds,
under the row's lock): a cell stamped before it is already visible to the scan, a later
one is left for the next read, so a reader polling with NextShardIterator neither skips
nor repeats a record. Local scale: each read visits every row of the table on the
emulator's side, so the filter is the cheapest the emulator evaluates: the time range first
(it drops a row's older cells, records and item alike, before anything else looks at them),
then the family as a column range (the emulator compiles a family-name regex again for
every row and cell it tests: 54 us a row holding 10 records against 8 us in this order,
10,000 rows, 2026-12-07; docs/streams.md).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from google.cloud.bigtable.data import ReadRowsQuery, RowRange
from google.cloud.bigtable.data import row_filters as rf

from ...bigtable.deadlines import SCAN_ATTEMPT_SECONDS, SCAN_SECONDS
from ..errors import validation
from ..session import Session
from ..store import bigtable_errors
from .positions import RETENTION_MICROS, SHARDS, Position, at_time, sequence, sequence_micros, shard_id, shard_of_row
from .records import FAMILY, number_of, parsed, stream_record
from .registry import Stream

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
PAGE_BYTES = 1024 * 1024  # "a maximum of 1 MB of data" (GetRecords, DynamoDB Streams API reference, read 2026-12-07)
# A record's size on a page, counted without writing it out: its stored value (the keys and
# images as GetRecords gives them) and this bound on the rest (event, ids, sequence number,
# region, view type, TTL identity: about 400 bytes of JSON). Writing each record out to
# measure it took 60 % of a GetRecords of 1,000 records (2026-12-07).
RECORD_FIELDS_BYTES = 512


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
    if position.shard >= SHARDS:
        raise validation("Invalid ShardIterator")
    bound = now_micros // 1000 * 1000
    if stream.closed_ms is not None:
        bound = min(bound, stream.closed_ms * 1000)
    start = max(stream.created_ms * 1000, now_micros - RETENTION_MICROS,
                sequence_micros(position.after) if position.after else 0)
    found: list[tuple[str, int, bytes]] = []
    if start < bound:
        scan = _scanned(stream, start)
        if scan is None:  # a reader catching up: a page the last scan fills needs no new one
            held = _held(stream, start)
            scan = held if held is not None and _fills(_found(held, position, bound), limit) else None
        if scan is None:
            scan = await _scan(session, stream, start, bound)
        bound = min(bound, scan.bound)
        found = _found(scan, position, bound)
    records: list[dict] = []
    size, after = 0, position
    for number, micros, value in found:
        stored = parsed(value)
        if stored is None:
            continue
        made = stream_record(stored, stream.view, stream.region, number, micros)
        size += len(value) + RECORD_FIELDS_BYTES
        if len(records) == limit or (records and size > PAGE_BYTES):
            return Page(records, Position(position.shard, after.after, after.inclusive, position.issued_ms), False)
        records.append(made)
        after = Position(position.shard, number, False, position.issued_ms)
    finished = stream.closed_ms is not None and bound >= stream.closed_ms * 1000
    if not records and position.after >= at_time(bound):  # nothing read past where it stood: it stays
        return Page(records, position, finished)
    return Page(records, Position(position.shard, at_time(bound), True, position.issued_ms), finished)


def _found(scan: Scan, position: Position, bound: int) -> list[tuple[str, int, bytes]]:
    """The shard's records in the scan that the position admits, committed before `bound`, in
    sequence order: (sequence number, commit time, stored value)."""
    found = []
    for row_key, micros, column, value in scan.cells:
        if micros < bound and shard_of_row(row_key) == position.shard:
            number = sequence(micros, row_key, number_of(column))
            if position.admits(number):
                found.append((number, micros, value))
    found.sort()
    return found


def _fills(found: list[tuple[str, int, bytes]], limit: int) -> bool:
    """Whether these records fill a page (Limit, or 1 MB of values): then what was committed
    after the scan would not be on it anyway."""
    return len(found) > limit or sum(len(value) for _, _, value in found) > PAGE_BYTES


@dataclass(frozen=True)
class Scan:
    """One read of a stream's cells committed in [start, bound): every shard's."""

    start: int
    bound: int
    cells: tuple[tuple[bytes, int, bytes, bytes], ...]  # row key, commit time, column, value
    taken: float  # time.monotonic() when it was read


# This worker's last scan of each stream, which a read of another shard of it begun within
# SHARED_SECONDS reuses: a reader polling the stream's four shards pays one scan of the
# table, not four. Its bound is then that scan's, so a record committed since waits for the
# next read; the position handed back says so, and nothing is skipped. A read that the scan
# fills (a reader catching up: more records after its position than a page holds) reuses it
# however old it is, so a backlog of N records costs one scan, not one per page.
SHARED_SECONDS = 0.1
_recent: dict[str, Scan] = {}


def _held(stream: Stream, start: int) -> Scan | None:
    """The last scan of the stream when it holds everything from `start` to its bound."""
    recent = _recent.get(stream.arn)
    if recent is None or recent.start > start // 1000 * 1000 or recent.bound <= start:
        return None
    return recent


def _scanned(stream: Stream, start: int) -> Scan | None:
    recent = _held(stream, start)
    return recent if recent is not None and time.monotonic() - recent.taken <= SHARED_SECONDS else None


async def _scan(session: Session, stream: Stream, start: int, bound: int) -> Scan:
    query = ReadRowsQuery(row_ranges=[RowRange()], row_filter=rf.RowFilterChain([
        rf.TimestampRangeFilter(start=_micros(start // 1000 * 1000), end=_micros(bound)),
        rf.ColumnRangeFilter(FAMILY)]))
    store = session.table_store(stream.instance_id, stream.table_id, None, stream.table)
    async with bigtable_errors(stream.table):
        rows = await store.handle.read_rows(query, operation_timeout=SCAN_SECONDS,
                                            attempt_timeout=SCAN_ATTEMPT_SECONDS)
    cells = tuple((row.row_key, cell.timestamp_micros, cell.qualifier, cell.value)
                  for row in rows for cell in row.cells)
    scan = Scan(start // 1000 * 1000, bound, cells, time.monotonic())
    _recent[stream.arn] = scan
    return scan


def _micros(value: int) -> datetime:
    """TimestampRange takes datetimes in the data client; microseconds kept exact."""
    return EPOCH + timedelta(microseconds=value)
