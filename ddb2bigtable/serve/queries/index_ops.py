"""Query and Scan on a secondary index (`IndexName`, global or local).

In the cloud the plan stands a GSI in as a continuous materialized view (plan/tables.py,
`view_query`), which views.py reads with Bigtable's SQL (ExecuteQuery). The emulator has
no SQL and no views (it answers PrepareQuery with 501, gcloud 528.0.0), so on an emulator
stage serve answers an index from the base table itself: it reads every row, keeps the
items that hold the index's key attributes (a GSI is sparse), orders them by the index key
and applies the index's projection, so an application's index queries work on a laptop
with the answers DynamoDB gives (eventually consistent only, as a GSI). It reads the whole
table for each page, which is fine for the emulator's data and why cloud stages read the
view instead. Either way the checks, the projection and the page are the ones here.
"""

from __future__ import annotations

from typing import Any

from ...codec.items import Item
from ...spec.model import Gsi, KeySchema
from ..catalog import ServedTable
from ..errors import unsupported, validation
from ..items.locked_rows import settled
from ..requests import Query, Reading, Scan
from ..session import Session, key_text
from ..wire import item_to_wire
from . import views
from .paging import check_select, meets, page, sort_value, take

SCAN_ROWS = 500


def named_index(emulator: bool, table: ServedTable, body: dict[str, Any]) -> Gsi:
    """The index a request names, a local one as the GSI of the table's partition key and
    its sort key (read the same way: a local index is a global one with the table's
    partition), checked as DynamoDB checks it (protocol/query_requests.py reads it)."""
    name = body.get("IndexName")
    source = table.spec.source
    gsi = next((g for g in source.gsis if g.name == name), None)
    lsi = next((Gsi(s.name, KeySchema(source.key.partition, s.sort), s.projection) for s in source.lsis
                if s.name == name), None)
    index = gsi or lsi
    if index is None:
        raise validation(f"The table does not have the specified index: {name}")
    if gsi is not None and body.get("ConsistentRead"):
        raise validation("Consistent reads are not supported on global secondary indexes")
    if gsi is not None and gsi.projection != "all" and body.get("Select") == "ALL_ATTRIBUTES":
        raise validation(f"One or more parameter values were invalid: Select type ALL_ATTRIBUTES is not supported for "
                         f"global secondary index {name} because its projection type is not ALL")
    check_select(body)
    if gsi is None and not emulator:
        raise unsupported(f"the local secondary index {name} on a cloud stage", "the plan makes no view for a local "
                          "index (see its plan warning); query the table and filter on the sort attribute")
    return index


def keys(gsi: Gsi) -> tuple[str, ...]:
    return tuple(k.name for k in (gsi.key.partition, gsi.key.sort) if k is not None)


def _projected(request: Reading, gsi: Gsi, items: list[Item]) -> list[Item]:
    """The items as the index holds them; a local index asked for every attribute or named
    ones gives the whole item (DynamoDB fetches what it lacks from the table)."""
    table = request.table
    local = any(s.name == gsi.name for s in table.spec.source.lsis)
    if gsi.projection == "all" or (local and (request.select == "ALL_ATTRIBUTES" or request.projection)):
        return items
    kept = {*table.keys, *keys(gsi), *(() if gsi.projection == "keys_only" else gsi.projection)}
    return [{n: v for n, v in item.items() if n in kept} for item in items]


async def _indexed(session: Session, table: ServedTable, gsi: Gsi) -> list[Item]:
    """Every item of the table that the index holds (it has each index key attribute with the
    key's type), in table order."""
    store = session.store(table, consistent=False)
    kinds = {k.name: k.type for k in (gsi.key.partition, gsi.key.sort) if k is not None}
    items: list[Item] = []
    position, start_open = None, False
    while True:
        rows = await store.scan(position, None, start_open=start_open, limit=SCAN_ROWS)
        # an empty key (an item written before UpdateTable added the index) is left out
        for row in await settled(session, table, rows):
            items += [i for i in session.decode(table, row)
                      if all(n in i and next(iter(i[n])) == kind and i[n][kind] not in ("", b"")
                             for n, kind in kinds.items())]
        if len(rows) < SCAN_ROWS:
            return items
        position, start_open = rows[-1].row_key, True


def _after(items: list[Item], start: Item | None, order: Any) -> list[Item]:
    """The items past ExclusiveStartKey (the table's and the index's keys) in index order."""
    if start is None:
        return items
    for pos, item in enumerate(items):
        if all(key_text(item[n]) == key_text(v) for n, v in start.items() if n in item):
            return items[pos + 1:]
    mark = order(start)
    return [i for i in items if order(i) > mark]


async def query_index(session: Session, request: Query, gsi: Gsi) -> dict[str, Any]:
    table, limit, partition, sort = request.table, request.limit, request.partition, request.sort
    names = keys(gsi)
    if not session.catalog.emulator:
        taken, last = await views.query_page(session, table, gsi, partition, sort, request.start or None,
                                             request.reverse, limit)
        return _cloud_page(request, gsi, taken, last)
    items = [i for i in await _indexed(session, table, gsi) if key_text(i[names[0]]) == key_text(partition)]
    if sort is not None and len(names) > 1:
        items = [i for i in items if meets(i.get(names[1]), *sort)]

    def order(item: Item) -> tuple:
        return tuple(sort_value(item.get(k)) for k in (*names[1:], *table.keys))

    items.sort(key=order, reverse=request.reverse)
    taken, more = take(_after(items, request.start, order), limit)
    return page(request, _projected(request, gsi, taken), more, names)


async def scan_index(session: Session, request: Scan, gsi: Gsi) -> dict[str, Any]:
    table, names = request.table, keys(gsi)
    if not session.catalog.emulator:
        taken, last = await views.scan_page(session, table, gsi, request.start or None, request.limit)
        return _cloud_page(request, gsi, taken, last)

    def order(item: Item) -> tuple:
        return tuple(sort_value(item.get(k)) for k in (*table.keys, *names))

    taken, more = take(_after(await _indexed(session, table, gsi), request.start, order), request.limit)
    return page(request, _projected(request, gsi, taken), more, names)


def _cloud_page(request: Reading, gsi: Gsi, items: list[Item], last: Item | None) -> dict[str, Any]:
    """A page read from the view: filter, projection and Select as on emulator stages, and
    LastEvaluatedKey at the last view row evaluated (an item left out as changed since its
    view row was written still moves the position on)."""
    out = page(request, _projected(request, gsi, items), False, keys(gsi))
    if last is not None:
        out["LastEvaluatedKey"] = item_to_wire(last)
    return out
