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
from ..expressions import parsed_keys
from ..items.locked_rows import settled
from ..session import Session, key_text
from ..wire import item_to_codec, item_to_wire, to_codec
from . import views
from .paging import check_limit, check_select, check_start_within, meets, page, sort_value, take

SCAN_ROWS = 500


def _index(session: Session, table: ServedTable, body: dict[str, Any]) -> Gsi:
    """The index named, a local one as the GSI of the table's partition key and its sort
    key (read the same way: a local index is a global one with the table's partition)."""
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
    if gsi is None and not session.catalog.emulator:
        raise unsupported(f"the local secondary index {name} on a cloud stage", "the plan makes no view for a local "
                          "index (see its plan warning); query the table and filter on the sort attribute")
    return index


def _keys(gsi: Gsi) -> tuple[str, ...]:
    return tuple(k.name for k in (gsi.key.partition, gsi.key.sort) if k is not None)


def _projected(table: ServedTable, gsi: Gsi, body: dict[str, Any], items: list[Item]) -> list[Item]:
    """The items as the index holds them; a local index asked for every attribute or named
    ones gives the whole item (DynamoDB fetches what it lacks from the table)."""
    local = any(s.name == gsi.name for s in table.spec.source.lsis)
    if gsi.projection == "all" or (local and (body.get("Select") == "ALL_ATTRIBUTES"
                                              or body.get("ProjectionExpression") or body.get("AttributesToGet"))):
        return items
    kept = {*table.keys, *_keys(gsi), *(() if gsi.projection == "keys_only" else gsi.projection)}
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


def _after(table: ServedTable, gsi: Gsi, items: list[Item], start: Any, order: Any) -> list[Item]:
    if start is None:
        return items
    wanted = item_to_codec(start, "ExclusiveStartKey")
    if set(wanted) != {*table.keys, *_keys(gsi)}:
        raise validation("The provided starting key is invalid: it must hold the table's and the index's keys")
    for pos, item in enumerate(items):
        if all(key_text(item[n]) == key_text(v) for n, v in wanted.items() if n in item):
            return items[pos + 1:]
    mark = order(wanted)
    return [i for i in items if order(i) > mark]


async def query_index(session: Session, table: ServedTable, body: dict[str, Any]) -> dict[str, Any]:
    gsi = _index(session, table, body)
    limit = check_limit(body)
    keys = _keys(gsi)
    expression = body.get("KeyConditionExpression")
    if not expression:
        raise validation("Either the KeyConditions or KeyConditionExpression parameter must be specified")
    found = parsed_keys.key_condition(expression, body.get("ExpressionAttributeNames"),
                                      body.get("ExpressionAttributeValues"), keys, gsi.name)
    partition = to_codec(found.partition[1], "KeyConditionExpression")
    reverse = body.get("ScanIndexForward", True) is False
    sort = (found.sort[1], [to_codec(b, "KeyConditionExpression") for b in found.sort[2]]) if found.sort else None
    given = body.get("ExclusiveStartKey")
    start = item_to_codec(given, "ExclusiveStartKey") if given is not None else {}
    check_start_within(start, keys, partition, sort)
    if not session.catalog.emulator:
        taken, last = await views.query_page(session, table, gsi, partition, sort, start or None, reverse, limit)
        return _cloud_page(table, gsi, body, taken, last)
    items = [i for i in await _indexed(session, table, gsi) if key_text(i[keys[0]]) == key_text(partition)]
    if found.sort is not None and sort is not None:
        items = [i for i in items if meets(i.get(found.sort[0]), *sort)]

    def order(item: Item) -> tuple:
        return tuple(sort_value(item.get(k)) for k in (*keys[1:], *table.keys))

    items.sort(key=order, reverse=reverse)
    items = _after(table, gsi, items, body.get("ExclusiveStartKey"), order)
    taken, more = take(items, limit)
    return page(table, body, _projected(table, gsi, body, taken), more, keys)


async def scan_index(session: Session, table: ServedTable, body: dict[str, Any]) -> dict[str, Any]:
    gsi = _index(session, table, body)
    if body.get("Segment") is not None or body.get("TotalSegments") is not None:
        raise unsupported("a parallel Scan of an index", "scan the index in one segment")
    limit = check_limit(body)
    keys = _keys(gsi)
    if not session.catalog.emulator:
        start = body.get("ExclusiveStartKey")
        taken, last = await views.scan_page(session, table, gsi,
                                            item_to_codec(start, "ExclusiveStartKey") if start else None, limit)
        return _cloud_page(table, gsi, body, taken, last)

    def order(item: Item) -> tuple:
        return tuple(sort_value(item.get(k)) for k in (*table.keys, *keys))

    items = _after(table, gsi, await _indexed(session, table, gsi), body.get("ExclusiveStartKey"), order)
    taken, more = take(items, limit)
    return page(table, body, _projected(table, gsi, body, taken), more, keys)


def _cloud_page(table: ServedTable, gsi: Gsi, body: dict[str, Any], items: list[Item],
                last: Item | None) -> dict[str, Any]:
    """A page read from the view: filter, projection and Select as on emulator stages, and
    LastEvaluatedKey at the last view row evaluated (an item left out as changed since its
    view row was written still moves the position on)."""
    out = page(table, body, _projected(table, gsi, body, items), False, _keys(gsi))
    if last is not None:
        out["LastEvaluatedKey"] = item_to_wire(last)
    return out
