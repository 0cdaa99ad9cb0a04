"""Query and Scan (on an index: index_ops.py).

Query on a table with the default mapping alone reads only the key range of its
condition and its Limit of rows (key_ranges.py: the row key keeps DynamoDB's order).
Otherwise it reads the rows that can hold the partition (tables.partition_ranges: one
range per mapping rule; the whole table only when a rule's row key does not start with
the partition key), decodes their items, keeps those of the partition whose sort key
meets the key condition, orders them by sort key as DynamoDB does (S and B by bytes, N by
value) and pages them. Either way Limit counts items evaluated, a page stops at 1 MB of
items read, and LastEvaluatedKey / ExclusiveStartKey carry the position. Scan reads rows in key order
from ExclusiveStartKey's row, a row's items by key; Segment/TotalSegments cut the table
into contiguous row ranges that depend only on the mapping and TotalSegments
(key_ranges.segment_range), so each segment reads only its own rows and every item is in
exactly one segment, on every page.
"""

from __future__ import annotations

from typing import Any

from ...codec.items import AttributeValue, Item
from ..catalog import ServedTable
from ..errors import validation as invalid
from ..items.locked_rows import settled
from ..requests import Query, Scan
from ..session import Session, key_text
from ..store import Store
from . import index_ops, key_ranges
from .paging import item_order, meets, page, take

SCAN_ROWS = 200  # rows read per Bigtable call while scanning


async def query(session: Session, request: Query) -> dict[str, Any]:
    table = request.table
    if request.index is not None:
        return await index_ops.query_index(session, request, request.index)
    op, wanted = request.sort if request.sort is not None else (None, [])
    if key_ranges.ordered(table):
        taken, more = await _ranged(session, request, key_ranges.sort_range(table, request.partition, op, wanted))
        return page(request, taken, more)
    items = await _partition_items(session, table, request.partition, request.consistent)
    if op is not None:
        items = [i for i in items if meets(i.get(table.keys[1]), op, wanted)]
    items.sort(key=lambda i: item_order(table, i), reverse=request.reverse)
    taken, more = take(_after(table, items, request.start, request.reverse), request.limit)
    return page(request, taken, more)


async def _ranged(session: Session, request: Query, found: key_ranges.RowRange) -> tuple[list[Item], bool]:
    """One page of an `ordered` table's query, reading only its rows, as many as Limit asks
    (or 1 MB): forward, or in reverse with Bigtable's reverse scan. Where the server
    refuses reverse scans, the range is read forward whole and reversed."""
    table, reverse, limit = request.table, request.reverse, request.limit
    start_row = table.row_key(request.start) if request.start else None
    found = key_ranges.resumed(found, start_row, reverse)
    store = session.store(table, request.consistent)
    if reverse:
        read = await _backwards(session, table, store, found, limit)
        if read is not None:
            return read
    items: list[Item] = []
    position, start_open, exhausted = found.start, found.start_open, False
    while True:
        want = SCAN_ROWS if reverse or limit is None else min(SCAN_ROWS, limit - len(items))
        rows = await store.scan(position, found.end, start_open=start_open, limit=want)
        for row in await settled(session, table, rows):
            items += session.decode(table, row)
        exhausted = len(rows) < want
        if exhausted or (not reverse and _page_full(items, limit)):
            break
        position, start_open = rows[-1].row_key, True
    if reverse:
        items.reverse()
        return take(items, limit)
    taken, more = take(items, limit)
    return taken, more or not exhausted


async def _backwards(session: Session, table: ServedTable, store: Store, found: key_ranges.RowRange,
                     limit: int | None) -> tuple[list[Item], bool] | None:
    """A reverse page through Bigtable's reverse scan, from the range's end down (an
    `ordered` table's row is one item, so rows come in the page's order); None when the
    server refuses reverse scans."""
    items: list[Item] = []
    end = found.end
    if end is not None and end <= found.start:  # resumed at the range's first row: nothing left
        return [], False
    while True:
        want = SCAN_ROWS if limit is None else min(SCAN_ROWS, limit - len(items))
        rows = await store.scan_reversed(found.start, end, start_open=found.start_open, limit=want)
        if rows is None:
            return None
        for row in await settled(session, table, rows):
            items += session.decode(table, row)
        exhausted = len(rows) < want
        if exhausted or _page_full(items, limit):
            break
        end = rows[-1].row_key
    taken, more = take(items, limit)
    return taken, more or not exhausted


def _page_full(items: list[Item], limit: int | None) -> bool:
    return (limit is not None and len(items) >= limit) or take(items, None)[1]


def _after(table: ServedTable, items: list[Item], start: Item | None, reverse: bool) -> list[Item]:
    """The items past ExclusiveStartKey in the query's direction (the item itself may be gone)."""
    if start is None:
        return items
    mark = item_order(table, start)
    return [i for i in items if (item_order(table, i) < mark if reverse else item_order(table, i) > mark)]


async def _partition_items(session: Session, table: ServedTable, partition: AttributeValue,
                           consistent: bool) -> list[Item]:
    ranges = table.partition_ranges(partition) or [(b"", None)]
    store = session.store(table, consistent)
    pk = table.keys[0]
    items: list[Item] = []
    for start, end in ranges:
        position, open_start = start, False
        while True:
            rows = await store.scan(position or None, end, start_open=open_start, limit=SCAN_ROWS)
            for row in await settled(session, table, rows):
                items += [i for i in session.decode(table, row) if pk in i and key_text(i[pk]) == key_text(partition)]
            if len(rows) < SCAN_ROWS:
                break
            position, open_start = rows[-1].row_key, True
    return items


async def scan(session: Session, request: Scan) -> dict[str, Any]:
    table, limit, start_key = request.table, request.limit, request.start
    if request.index is not None:
        return await index_ops.scan_index(session, request, request.index)
    bounds = (key_ranges.segment_range(table.codec.mapping.salt, table.codec.mapping.delimiter, request.segment,
                                       request.total) if request.total else key_ranges.RowRange(b"", None))
    store = session.store(table, request.consistent)
    position = table.row_key(start_key) if start_key else bounds.start
    if start_key and not bounds.holds(position):
        raise invalid("The provided Exclusive start key does not map to the provided segment; "
                      "Exclusive start key must lie within the segment")
    open_start, items, done = False, [], False
    while not done:
        rows = await store.scan(position or None, bounds.end, start_open=open_start, limit=SCAN_ROWS)
        for row in await settled(session, table, rows):
            found = sorted(session.decode(table, row), key=lambda i: item_order(table, i))
            if start_key is not None and row.row_key == position and not open_start:
                found = [i for i in found if item_order(table, i) > item_order(table, start_key)]
            items += found
        done = len(rows) < SCAN_ROWS or take(items, limit)[1]
        if rows:
            position, open_start = rows[-1].row_key, True
    taken, more = take(items, limit)
    return page(request, taken, more)
