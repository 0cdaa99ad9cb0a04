"""Query and Scan with IndexName on cloud stages: the GSI's continuous materialized view,
read with Bigtable's SQL (ExecuteQuery, its PrepareQuery made once per statement shape:
prepared_views.py), then the items themselves from the table.

The view (plan/tables.py `view_query`) holds each table row's index key cells (an N key
also as FLOAT64) and its row key (`source_key`), ordered by them. A page is the view's rows
in DynamoDB's order (view_sql.py pushes the key condition, the position and Limit into the
SQL; view_reads.py reads the rows, those whose numbers are equal as FLOAT64 put in exact
order with the conditions decided here), then one
ReadRows of the table for those row keys, decoded with the codec as every read of serve is
(types, TTL cells already expired hidden). The index's projection is applied to the items
as on emulator stages (index_ops.py).

Bigtable's SQL reads only ascending, so a backward page (ScanIndexForward false) halves
its sort key's values to find where its last rows start (view_reads.last_rows); without a sort key
it reads its range forward from the start, keeping only the rows the page can return
(memory bounded by Limit), refused past BACKWARD_ROWS view rows, saying how to narrow it.

Like a GSI the view is eventually consistent: Bigtable brings it up to date after each
write. An item changed since its view row was written (its index key moved, or the item
deleted) is left out of the page, since its current values do not meet the query; it
appears under its new index key once the view catches up. Limit counts view rows read, as
DynamoDB's counts index entries evaluated, and a page also stops at 1 MB of items.
"""

from __future__ import annotations

import math
from typing import Any

from ...codec.cell_values import decode_value, encode_value
from ...codec.items import AttributeValue, Item
from ...codec.mutations import Cell
from ...plan.tables import view_id
from ...spec.model import Gsi
from ..catalog import ServedTable, after_prefix
from ..errors import unsupported, validation
from ..items.locked_rows import settled
from ..session import Session
from ..wire import value_bytes
from .paging import PAGE_BYTES
from .view_reads import (
    BYTES,
    NUMBERS,
    PAGE_ROWS,
    Halving,
    Maker,
    Position,
    Reading,
    key_attributes,
    last_rows,
    ordered,
)
from .view_sql import (
    Statement,
    ViewRow,
    float_range,
    float_rank,
    number,
    query_statement,
    scan_statement,
)

FETCH_ROWS = 100  # table rows asked of one ReadRows while a page is put together


def check_readable(table: ServedTable, gsi: Gsi) -> None:
    """Refused, saying why, where the plan's view cannot index the items: its SQL reads each
    index key as one plain cell of the default family, one item per row."""
    mapping = table.codec.mapping
    if len(mapping.plans) != 1:
        raise unsupported(f"index {gsi.name} of a table with mapping rules on a cloud stage",
                          "its rows hold several items each, and the view indexes rows; query the table")
    for key in key_attributes(gsi):
        if key.name in mapping.keys:
            raise unsupported(f"index {gsi.name} on the table's key attribute {key.name} on a cloud stage",
                              "the key is in the row key, not in a cell the view reads")
        plan = mapping.plans[0]
        if (key.name in mapping.layout or mapping.stored(key.name) != key.type
                or mapping.json_family(plan, key.name) != mapping.default_family):
            raise unsupported(f"index {gsi.name} on a cloud stage",
                              f"{key.name} is not stored as its own {key.type} cell of family "
                              f"{mapping.default_family}, which the view reads")


def cell(value: AttributeValue, kind: str) -> bytes:
    """A key value as the cell the view holds; a value of another type is DynamoDB's error."""
    (tag, _), = value.items()
    if tag != kind:
        raise validation("One or more parameter values were invalid: Condition parameter type does not match "
                         "schema type")
    return encode_value(value, kind)


async def _evaluate(session: Session, table: ServedTable, gsi: Gsi, rows: list[ViewRow], limit: int,
                    ) -> tuple[list[Item], ViewRow | None]:
    """The items of the view rows, read from the table, up to Limit rows or 1 MB; and the
    last row evaluated when more may follow (the page's position)."""
    store = session.store(table, consistent=False)
    chosen = rows[:limit]
    items: list[Item] = []
    size, done = 0, 0
    while done < len(chosen) and size < PAGE_BYTES:
        batch = chosen[done:done + FETCH_ROWS]
        read = await store.read_rows([r.source_key for r in batch])
        read = dict(zip(read, await settled(session, table, list(read.values())), strict=True))
        for row in batch:
            done += 1
            found = session.decode(table, read[row.source_key]) if row.source_key in read else []
            item = found[0] if found else None
            if item is not None and _still_indexed(item, gsi, row):
                items.append(item)
                size += sum(len(n) + value_bytes(v) for n, v in item.items())
            if size >= PAGE_BYTES:
                break
    more = done < len(rows)
    return items, chosen[done - 1] if more and done else None


def _still_indexed(item: Item, gsi: Gsi, row: ViewRow) -> bool:
    """Whether the item read now still has the index keys its view row has."""
    for key, have in zip(key_attributes(gsi), row.keys, strict=True):
        value = item.get(key.name)
        if value is None or next(iter(value)) != key.type or encode_value(value, key.type) != have:
            return False
    return True


def position_item(table: ServedTable, gsi: Gsi, row: ViewRow) -> Item:
    """LastEvaluatedKey of a page that stopped at `row`: the table's key (from the row key,
    read as the codec reads a keys-only item) and the index keys (from the view's cells)."""
    mapping = table.codec.mapping
    marker = Cell(mapping.marker_family(mapping.plans[0]), b"", b"", 0)
    (keys,) = table.codec.decode(row.source_key, [marker])
    found = {n: keys[n] for n in table.keys}
    for key, data in zip(key_attributes(gsi), row.keys, strict=True):
        if data is not None:
            found[key.name] = decode_value(data, key.type)
    return found


def start_position(table: ServedTable, gsi: Gsi, start: Item) -> tuple[tuple[bytes, ...], bytes]:
    """ExclusiveStartKey as the view's position: the index key cells and the row key."""
    keys = key_attributes(gsi)
    if set(start) != {*table.keys, *(k.name for k in keys)}:
        raise validation("The provided starting key is invalid: it must hold the table's and the index's keys")
    row_key = table.row_key(table.checked_key({n: start[n] for n in table.keys}))
    return tuple(cell(start[k.name], k.type) for k in keys), row_key


async def query_page(session: Session, table: ServedTable, gsi: Gsi, partition: AttributeValue,
                     sort: tuple[str, list[AttributeValue]] | None, start: Item | None, backward: bool,
                     limit: int | None) -> tuple[list[Item], Item | None]:
    """One page of a Query on the index: its items and LastEvaluatedKey (None: the end)."""
    check_readable(table, gsi)
    keys = tuple(key_attributes(gsi))
    view = view_id(table.spec.id, gsi.name)
    pk = cell(partition, keys[0].type)
    bounds = (sort[0], [cell(b, keys[1].type) for b in sort[1]]) if sort is not None else None
    begun = start_position(table, gsi, start) if start is not None else None
    since = (*begun[0][1:], begun[1]) if begun is not None else None

    def place(row: ViewRow) -> Position:
        return (*row.order[1:], row.source_key)

    halving: Halving
    high: Any  # the place just past the range's top, for a backward page's halving (None: no top)
    if len(keys) == 2 and keys[1].type == "N":  # numbers equal as FLOAT64 ordered and bounded exactly here
        def exact(row: ViewRow) -> tuple[Any, bytes]:
            return number(row.keys[1] or b"0"), row.source_key

        mark = (number(since[0]), since[1]) if since is not None else None
        wanted = (bounds[0], [number(b) for b in bounds[1]]) if bounds is not None else None

        def keep(row: ViewRow) -> bool:
            here = exact(row)
            return ((wanted is None or _meets(here[0], *wanted))
                    and (mark is None or (here < mark if backward else here > mark)))

        def window(floor: Any, tail: bool) -> Reading:
            return Reading(floored(floor), place, tail, run=lambda r: r.order[1], exact=exact, keep=keep)

        highs = [float_range(since[0])[1]] if since is not None and backward else []
        if bounds is not None and bounds[0] in ("EQ", "LT", "LE", "BETWEEN"):
            highs.append(float_range(bounds[1][-1])[1])
        halving, high = NUMBERS, float_rank(min(highs, default=math.inf)) + 1
    else:  # bytes: the view's order is DynamoDB's, every bound exact in the SQL
        def window(floor: Any, tail: bool) -> Reading:
            return Reading(floored(floor), place, tail)

        ends = [since[0]] if since is not None and backward and len(keys) == 2 else []
        if bounds is not None and bounds[0] in ("EQ", "LT", "LE", "BETWEEN", "BEGINS_WITH"):
            end = after_prefix(bounds[1][0]) if bounds[0] == "BEGINS_WITH" else bounds[1][-1]
            ends += [end] if end is not None else []
        halving, high = BYTES, (min(ends) + b"\0" if ends else None)

    def floored(floor: Any) -> Maker:
        def make(after: Position | None, ask: int) -> Statement:
            return query_statement(view, keys, pk, bounds, start=since, backward=backward, after=after,
                                   floor=floor, limit=ask)
        return make

    if backward and len(keys) == 2:
        rows = await last_rows(session, table, gsi, window, _cap(limit) + 1, halving, high)
    else:
        rows = await ordered(session, table, gsi, window(None, backward), _cap(limit) + 1)
    items, last = await _evaluate(session, table, gsi, rows, _cap(limit))
    return items, position_item(table, gsi, last) if last is not None else None


def _cap(limit: int | None) -> int:
    """The view rows one page evaluates at most: Limit, else PAGE_ROWS (a page without
    Limit ends at 1 MB or there, with LastEvaluatedKey to go on from)."""
    return limit if limit is not None else PAGE_ROWS


def _meets(have: Any, op: str, bounds: list[Any]) -> bool:
    """A numeric sort key's condition (begins_with takes only S and B, so it is never here)."""
    first = bounds[0]
    return {"EQ": have == first, "LT": have < first, "LE": have <= first, "GT": have > first,
            "GE": have >= first, "BETWEEN": len(bounds) == 2 and first <= have <= bounds[-1]}.get(op, False)


async def scan_page(session: Session, table: ServedTable, gsi: Gsi, start: Item | None,
                    limit: int | None) -> tuple[list[Item], Item | None]:
    """One page of a Scan of the index, in the view's order (DynamoDB promises an index
    scan no order; paging goes on from the view's position of ExclusiveStartKey, an N key's
    as Python rounds it to FLOAT64, which GoogleSQL's CAST is taken to round alike)."""
    check_readable(table, gsi)
    keys = tuple(key_attributes(gsi))
    view = view_id(table.spec.id, gsi.name)
    begun = start_position(table, gsi, start) if start is not None else None

    def place(row: ViewRow) -> Position:
        return (*row.order, row.source_key)

    def make(after: Position | None, ask: int) -> Statement:
        return scan_statement(view, keys, after, ask)

    first = None
    if begun is not None:
        first = (*(float(number(c)) if k.type == "N" else c for k, c in zip(keys, begun[0], strict=True)), begun[1])
    rows = await ordered(session, table, gsi, Reading(lambda after, ask: make(after or first, ask), place),
                          _cap(limit) + 1)
    items, last = await _evaluate(session, table, gsi, rows, _cap(limit))
    return items, position_item(table, gsi, last) if last is not None else None
