"""ItemCount and TableSizeBytes of a created table (and of each of its indexes) for
DescribeTable.

DynamoDB updates these figures about every six hours, so they are estimates there too
(AWS, "DescribeTable", TableDescription.ItemCount and TableSizeBytes,
https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TableDescription.html,
read 2026-11-25). Bigtable keeps no item count, so serve counts: a scan of the table
through the serving profile, at most COUNT_ROWS rows, decoding each row's items (expired
ones left out) and sizing them as DynamoDB does (wire.item_bytes), an index's entries by
its projection. The figures are kept by the worker for FRESH_SECONDS, so a waiter polling
DescribeTable does not scan the table at every poll. Past COUNT_ROWS rows the figures are
those of the rows counted (a lower bound): created tables live on emulator stages, whose
tables are small. A spec table is counted the same way on emulator stages (`served_counts`),
so DescribeTable says what serve serves (it gave the spec's `item_count`, the source
table's, while serving what the load and later writes left); where the count stops at
COUNT_ROWS before the table's end, or on a cloud stage (tables of millions of rows), the
spec's figures stay: an estimate, as DynamoDB's own. So do they where a row cannot be read
with the table's mapping (a row written by hand): such a row serves no item, and
DescribeTable, which names no item, still answers (a created table's count is then a lower
bound).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

from ..capacity import index_entry, indexes
from ..catalog import ServedTable
from ..errors import ServeError
from ..session import Session
from ..wire import item_bytes

COUNT_ROWS = 10_000
FRESH_SECONDS = 60.0
PAGE_ROWS = 500


@dataclass(frozen=True)
class Counts:
    items: int
    size: int
    indexes: dict[str, tuple[int, int]]  # index name -> (entries, bytes)
    complete: bool = True  # every row was counted (False: stopped at COUNT_ROWS, a lower bound)


async def served_counts(session: Session, table: ServedTable) -> Counts | None:
    """The counts DescribeTable gives: a created table's; a spec table's on an emulator
    stage when every row was counted; None for the spec's own figures."""
    if table.created is None and not session.catalog.emulator:
        return None
    found = await counted(session, table)
    return found if table.created is not None or found.complete else None


async def counted(session: Session, table: ServedTable) -> Counts:
    """The table's counts, as this worker last made them if they are fresh enough. Requests
    that ask while the worker counts the table wait for that count (one scan): 32
    DescribeTables at once (a benchmark's clients starting) made 32 scans of Movies, 16 s,
    and under load one past its deadline answered InternalServerError."""
    key = (table.instance_id, table.spec.id, repr(table.created))  # a changed definition counts anew
    kept = session.counts.get(key)
    if kept is not None and time.monotonic() - kept[0] < FRESH_SECONDS:
        return kept[1]
    flight = (id(session), key)
    task = _COUNTING.get(flight)
    if task is None:
        task = _COUNTING[flight] = asyncio.ensure_future(_count(session, table, key))
        task.add_done_callback(lambda _: _COUNTING.pop(flight, None))
    return await asyncio.shield(task)  # a waiter that gives up leaves the count to the others


_COUNTING: dict[tuple[int, tuple[str, str, str]], asyncio.Future[Counts]] = {}  # (session, table) -> its count


async def _count(session: Session, table: ServedTable, key: tuple[str, str, str]) -> Counts:
    """A scan of the table, up to COUNT_ROWS rows, its counts kept under `key`."""
    store = session.store(table, consistent=False)
    items = size = rows_read = 0
    complete = unreadable = False
    by_index = {index.name: [0, 0] for _, index in indexes(table)}
    position, start_open = None, False
    while rows_read < COUNT_ROWS:
        rows = await store.scan(position, None, start_open=start_open, limit=min(PAGE_ROWS, COUNT_ROWS - rows_read))
        for row in rows:
            try:
                items_of_row = session.decode(table, row)
            except ServeError:  # a row the codec cannot read serves nothing; DescribeTable still answers
                unreadable = True
                continue
            for item in items_of_row:
                items, size = items + 1, size + item_bytes(item)
                for _, index in indexes(table):
                    entry = index_entry(table, index, item)
                    if entry is not None:
                        by_index[index.name][0] += 1
                        by_index[index.name][1] += item_bytes(entry)
        rows_read += len(rows)
        if len(rows) < PAGE_ROWS:
            complete = True
            break
        position, start_open = rows[-1].row_key, True
    found = Counts(items, size, {name: (n, b) for name, (n, b) in by_index.items()}, complete and not unreadable)
    session.counts[key] = (time.monotonic(), found)
    return found
