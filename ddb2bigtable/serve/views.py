"""Query and Scan with IndexName on cloud stages: the GSI's continuous materialized view,
read with Bigtable's SQL (PrepareQuery + ExecuteQuery, the data client's `execute_query`),
then the items themselves from the table.

The view (plan/tables.py `view_query`) holds each table row's index key cells and its row
key (`source_key`), keyed and so ordered by them. A page is the view's rows in index-key
order (view_sql.py pushes the key condition, the position and Limit into the SQL where the
view's byte order is DynamoDB's), then one ReadRows of the table for those row keys,
decoded with the codec as every read of serve is (types, TTL cells already expired hidden).
The index's projection is applied to the items as on emulator stages (index_ops.py).

Like a GSI the view is eventually consistent: Bigtable brings it up to date after each
write. An item changed since its view row was written (its index key moved, or the item
deleted) is left out of the page, since its current values do not meet the query; it
appears under its new index key once the view catches up. Limit counts view rows read, as
DynamoDB's counts index entries evaluated, and a page also stops at 1 MB of items.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

from ..codec.cell_values import decode_value, encode_value
from ..codec.items import AttributeValue, Item
from ..codec.mutations import Cell
from ..plan.tables import view_id
from ..spec.model import Gsi
from .errors import ServeError, unsupported, validation
from .paging import PAGE_BYTES
from .session import Session
from .store import ATTEMPT_SECONDS, READ_SECONDS, bigtable_errors
from .tables import ServedTable
from .view_sql import Statement, ViewRow, query_statement, scan_statement, view_row
from .wire import value_bytes

PAGE_ROWS = 500  # view rows asked of one ExecuteQuery
FETCH_ROWS = 100  # table rows asked of one ReadRows while a page is put together
ORDERED_BYTES = ("S", "B")  # key types whose cell bytes sort as DynamoDB sorts them
Position = tuple[bytes, ...]  # a place in the view: key cells, then the source row key
Maker = Callable[[Position | None, int], Statement]  # the statement of the rows past a position, so many


def check_readable(table: ServedTable, gsi: Gsi) -> None:
    """Refused, saying why, where the plan's view cannot index the items: its SQL reads each
    index key as one plain cell of the default family, one item per row."""
    mapping = table.codec.mapping
    if len(mapping.plans) != 1:
        raise unsupported(f"index {gsi.name} of a table with mapping rules on a cloud stage",
                          "its rows hold several items each, and the view indexes rows; query the table")
    for key in _key_attributes(gsi):
        if key.name in mapping.keys:
            raise unsupported(f"index {gsi.name} on the table's key attribute {key.name} on a cloud stage",
                              "the key is in the row key, not in a cell the view reads")
        plan = mapping.plans[0]
        if (key.name in mapping.layout or mapping.stored(key.name) != key.type
                or mapping.json_family(plan, key.name) != mapping.default_family):
            raise unsupported(f"index {gsi.name} on a cloud stage",
                              f"{key.name} is not stored as its own {key.type} cell of family "
                              f"{mapping.default_family}, which the view reads")


def _key_attributes(gsi: Gsi) -> list[Any]:
    return [k for k in (gsi.key.partition, gsi.key.sort) if k is not None]


def cell(value: AttributeValue, kind: str) -> bytes:
    """A key value as the cell the view holds; a value of another type is DynamoDB's error."""
    (tag, _), = value.items()
    if tag != kind:
        raise validation("One or more parameter values were invalid: Condition parameter type does not match "
                         "schema type")
    return encode_value(value, kind)


def _order(kind: str, data: bytes | None) -> Any:
    """A sort-key cell in DynamoDB's order: numbers by value, S and B by their bytes."""
    return Decimal(data.decode()) if kind == "N" and data is not None else data


async def view_rows(session: Session, table: ServedTable, gsi: Gsi, statement: Statement) -> list[ViewRow]:
    """One ExecuteQuery on the view, through the serving profile, bounded like every read."""
    keys = tuple(k.name for k in _key_attributes(gsi))
    from google.cloud.bigtable.data.execute_query.metadata import SqlType

    try:
        async with bigtable_errors(table.name):
            answer = await session.client.execute_query(
                statement.sql, table.instance_id, parameters=dict(statement.params),
                parameter_types={name: SqlType.Bytes() for name in statement.params},
                app_profile_id=table.serving_profile, operation_timeout=READ_SECONDS,
                attempt_timeout=ATTEMPT_SECONDS, prepare_operation_timeout=READ_SECONDS,
                prepare_attempt_timeout=ATTEMPT_SECONDS)
            return [view_row(row, keys) async for row in answer]
    except ServeError as error:  # NOT_FOUND here is the view's: the table was found (catalog, plan)
        if error.name != "ResourceNotFoundException":
            raise
    view = view_id(table.spec.id, gsi.name)
    raise validation(f"The index {gsi.name} of table {table.name} has no materialized view {view} in Bigtable "
                     f"instance {table.instance_id}: create it with `pulumi up` for this stage")


async def _read(session: Session, table: ServedTable, gsi: Gsi, make: Maker, after: Position | None,
                want: int | None, position: Callable[[ViewRow], Position]) -> list[ViewRow]:
    """The view's rows from `after` on, in its order, PAGE_ROWS per ExecuteQuery: `want`
    of them (all with None)."""
    found: list[ViewRow] = []
    while want is None or len(found) < want:
        ask = PAGE_ROWS if want is None else min(PAGE_ROWS, want - len(found))
        rows = await view_rows(session, table, gsi, make(after, ask))
        found += rows
        if len(rows) < ask:
            break
        after = position(rows[-1])
    return found


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
    for key, have in zip(_key_attributes(gsi), row.keys, strict=True):
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
    for key, data in zip(_key_attributes(gsi), row.keys, strict=True):
        if data is not None:
            found[key.name] = decode_value(data, key.type)
    return found


def start_position(table: ServedTable, gsi: Gsi, start: Item) -> tuple[tuple[bytes, ...], bytes]:
    """ExclusiveStartKey as the view's position: the index key cells and the row key."""
    keys = _key_attributes(gsi)
    if set(start) != {*table.keys, *(k.name for k in keys)}:
        raise validation("The provided starting key is invalid: it must hold the table's and the index's keys")
    row_key = table.row_key(table.checked_key({n: start[n] for n in table.keys}))
    return tuple(cell(start[k.name], k.type) for k in keys), row_key


async def query_page(session: Session, table: ServedTable, gsi: Gsi, partition: AttributeValue,
                     sort: tuple[str, list[AttributeValue]] | None, start: Item | None, backward: bool,
                     limit: int | None) -> tuple[list[Item], Item | None]:
    """One page of a Query on the index: its items and LastEvaluatedKey (None: the end)."""
    check_readable(table, gsi)
    keys = _key_attributes(gsi)
    names = tuple(k.name for k in keys)
    view = view_id(table.spec.id, gsi.name)
    pk = cell(partition, keys[0].type)
    bounds = (sort[0], [cell(b, keys[1].type) for b in sort[1]]) if sort is not None else None
    begun = start_position(table, gsi, start) if start is not None else None
    pushed = len(keys) == 1 or keys[1].type in ORDERED_BYTES

    def at(row: ViewRow) -> tuple[bytes, ...]:
        return (*[k for k in row.keys[1:] if k is not None], row.source_key)

    def make(after: tuple[bytes, ...] | None, ask: int) -> Statement:
        return query_statement(view, names, pk, bounds if pushed else None, after, False, ask)

    if pushed and not backward:  # the view's order is the answer's: Limit (+1, to know if more) in the SQL
        after = (*begun[0][1:], begun[1]) if begun is not None else None
        rows = await _read(session, table, gsi, make, after, _cap(limit) + 1, at)
    else:  # the partition's rows, ordered (numbers by value) and bounded here
        rows = await _read(session, table, gsi, make, None, None, at)
        kind = keys[-1].type if len(keys) == 2 else "S"

        def order(row: ViewRow) -> tuple[Any, bytes]:
            return (_order(kind, row.keys[1]) if len(keys) == 2 else b"", row.source_key)

        if not pushed and bounds is not None:
            rows = [r for r in rows if _meets(order(r)[0], bounds[0], [_order(kind, b) for b in bounds[1]])]
        rows.sort(key=order, reverse=backward)
        if begun is not None:
            mark = (_order(kind, begun[0][1]) if len(keys) == 2 else b"", begun[1])
            rows = [r for r in rows if (order(r) < mark if backward else order(r) > mark)]
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
    """One page of a Scan of the index, in the view's key order."""
    check_readable(table, gsi)
    names = tuple(k.name for k in _key_attributes(gsi))
    view = view_id(table.spec.id, gsi.name)
    begun = start_position(table, gsi, start) if start is not None else None

    def at(row: ViewRow) -> tuple[bytes, ...]:
        return (*[k for k in row.keys if k is not None], row.source_key)

    def make(after: tuple[bytes, ...] | None, ask: int) -> Statement:
        return scan_statement(view, names, after, ask)

    after = (*begun[0], begun[1]) if begun is not None else None
    rows = await _read(session, table, gsi, make, after, _cap(limit) + 1, at)
    items, last = await _evaluate(session, table, gsi, rows, _cap(limit))
    return items, position_item(table, gsi, last) if last is not None else None
