"""Emulator stages' records: a scan of the table's stream cells (docs/streams.md).

The emulator has no change streams, so a GetRecords reads the table's `_ddb2bigtable_stream`
cells committed between the iterator's position and the moment the read began, keeps the
shard's, and orders them by sequence number. The upper bound is the read's own start,
rounded down to the millisecond (the emulator stamps server-time cells in milliseconds,
under the row's lock): a cell stamped before it is already visible to the scan, a later
one is left for the next read, so a reader polling with NextShardIterator neither skips
nor repeats a record. The worker keeps what its scans found (scanned.py), so a read scans
only the time since the last scan. Local scale: each scan still visits every row of the
table on the emulator's side, so the filter is the cheapest the emulator evaluates: the time range first
(it drops a row's older cells, records and item alike, before anything else looks at them),
then the family as a column range (the emulator compiles a family-name regex again for
every row and cell it tests: 54 us a row holding 10 records against 8 us in this order,
10,000 rows, 2026-12-07; docs/streams.md).
"""

from __future__ import annotations

import asyncio
import time
import weakref
from dataclasses import dataclass

from google.cloud.bigtable.data import ReadRowsQuery, RowRange
from google.cloud.bigtable.data import row_filters as rf

from ...bigtable.deadlines import SCAN_ATTEMPT_SECONDS, SCAN_SECONDS
from ...codec.timestamps import moment_of
from ..errors import validation
from ..session import Session
from ..store import bigtable_errors
from .positions import RETENTION_MICROS, SHARDS, Position, at_time, sequence_micros, shard_id
from .records import FAMILY, parsed, stream_record
from .registry import Stream
from .scanned import Cell, Record, Scanned, evicted

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
    found: list[Record] = []
    if start < bound:
        held = await _held(session, stream, position, start, bound, limit, now_micros)
        bound = min(bound, held.bound)
        found = held.after(position, start, bound, limit + 1)
    length, full = page_length(found, limit)
    records = [stream_record(stored, stream.view, stream.region, number, micros)
               for number, micros, value in found[:length] if (stored := parsed(value)) is not None]
    if full:  # more records after the page's last: the next read starts after it
        return Page(records, Position(position.shard, found[length - 1][0], False, position.issued_ms), False)
    finished = stream.closed_ms is not None and bound >= stream.closed_ms * 1000
    if not found and position.after >= at_time(bound):  # nothing read past where it stood: it stays
        return Page(records, position, finished)
    return Page(records, Position(position.shard, at_time(bound), True, position.issued_ms), finished)


def page_length(found: list[Record], limit: int) -> tuple[int, bool]:
    """How many of these records (in order) one page holds, and whether records are left
    after them: `limit` records or 1 MB, the first record always. A record counts as its
    stored value and RECORD_FIELDS_BYTES for the rest, so nothing is written out to be measured."""
    size = 0
    for i, (_, _, value) in enumerate(found):
        size += len(value) + RECORD_FIELDS_BYTES
        if i == limit or (i and size > PAGE_BYTES):
            return i, True
    return len(found), False


# Each stream's records as this worker's scans found them (scanned.py). A read whose page
# they fill (a reader catching up: more of the shard's records after its position than a
# page holds) is answered from them however old the last scan is, since a record committed
# after it would not be on the page anyway; so is a read begun within SHARED_SECONDS of the
# last scan from a position before its bound (a reader polling the stream's four shards
# pays one scan, not four; a LATEST iterator issued since then scans), its bound then that
# scan's, so a record committed since waits for the next read (the position handed back
# says so: nothing is skipped). Any other read scans only the time since the last scan's
# bound. Reads of one stream take turns for the scan (`_turns`): four shards' reads
# arriving together make one scan, not four.
SHARED_SECONDS = 0.1
_scanned: dict[str, Scanned] = {}
_turns: weakref.WeakValueDictionary[tuple[int, str], asyncio.Lock] = weakref.WeakValueDictionary()


async def _held(session: Session, stream: Stream, position: Position, start: int, bound: int, limit: int,
                now_micros: int) -> Scanned:
    """The stream's records this worker holds, scanned up to `bound` unless they need not be."""
    key = (id(asyncio.get_running_loop()), stream.arn)
    turn = _turns.get(key)
    if turn is None:
        turn = _turns[key] = asyncio.Lock()
    async with turn:
        held = _scanned.get(stream.arn)
        if held is None or not held.covers(start // 1000 * 1000):
            held = Scanned(start // 1000 * 1000, start // 1000 * 1000, 0.0)
        elif (held.bound > start and time.monotonic() - held.taken <= SHARED_SECONDS) or \
                page_length(held.after(position, start, held.bound, limit + 1), limit)[1]:
            return held
        if bound > held.bound:
            held.extend(await _scan(session, stream, held.bound, bound), bound, time.monotonic())
        held.trim(now_micros - RETENTION_MICROS)
        _scanned[stream.arn] = held
        for arn in evicted(_scanned, stream.arn):
            del _scanned[arn]
        return held


async def _scan(session: Session, stream: Stream, start: int, bound: int) -> tuple[Cell, ...]:
    """The stream's cells committed in [start, bound): `start` whole milliseconds."""
    query = ReadRowsQuery(row_ranges=[RowRange()], row_filter=rf.RowFilterChain([
        rf.TimestampRangeFilter(start=moment_of(start), end=moment_of(bound)),
        rf.ColumnRangeFilter(FAMILY)]))
    store = session.table_store(stream.instance_id, stream.table_id, None, stream.table)
    async with bigtable_errors(stream.table):
        rows = await store.handle.read_rows(query, operation_timeout=SCAN_SECONDS,
                                            attempt_timeout=SCAN_ATTEMPT_SECONDS)
    return tuple((row.row_key, cell.timestamp_micros, cell.qualifier, cell.value) for row in rows for cell in row.cells)
