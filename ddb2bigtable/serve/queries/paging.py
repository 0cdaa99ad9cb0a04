"""What Query and Scan share, on the table and on an index: DynamoDB's key order, the
sort-key comparisons, the checks of Select and Limit, and one page of the response.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import orjson

from ...codec.items import AttributeValue, Item
from .. import capacity
from ..catalog import ServedTable
from ..errors import validation
from ..expressions.projections import project
from ..requests import Reading
from ..session import key_text
from ..wire import answer_item, item_bytes, item_to_wire

PAGE_BYTES = 1024 * 1024  # DynamoDB stops a Query or Scan page at 1 MB read
SELECTS = ("ALL_ATTRIBUTES", "COUNT", "SPECIFIC_ATTRIBUTES")


def sort_value(value: AttributeValue | None) -> tuple[int, Any]:
    if value is None:
        return (0, b"")
    (tag, inner), = value.items()
    if tag == "N":
        return (1, Decimal(inner))
    return (1, inner.encode() if tag == "S" else bytes(inner))


def item_order(table: ServedTable, item: Item) -> tuple:
    return tuple(sort_value(item.get(k)) for k in table.keys)


def check_start_within(start: Item, keys: tuple[str, ...], partition: AttributeValue,
                       sort: tuple[str, list[AttributeValue]] | None) -> None:
    """DynamoDB refuses an ExclusiveStartKey outside the key condition (another partition,
    or a sort key the condition excludes; `keys`: the table's or the index's, `sort`: the
    condition's operator and bounds); read from, it was a 500 or a page from elsewhere."""
    if (keys[0] in start and key_text(start[keys[0]]) != key_text(partition)) or (
            sort is not None and keys[-1] in start and not meets(start[keys[-1]], *sort)):
        raise validation("The provided starting key does not match the range key predicate")


def meets(value: AttributeValue | None, op: str, bounds: list[AttributeValue]) -> bool:  # noqa: PLR0911
    if value is None or next(iter(value)) != next(iter(bounds[0])):
        return False
    have, first = sort_value(value), sort_value(bounds[0])
    if op == "EQ":
        return have == first
    if op == "LT":
        return have < first
    if op == "LE":
        return have <= first
    if op == "GT":
        return have > first
    if op == "GE":
        return have >= first
    if op == "BETWEEN":
        return first <= have <= sort_value(bounds[1])
    if op == "BEGINS_WITH":
        return isinstance(have[1], bytes) and have[1].startswith(first[1])
    raise validation(f"Unsupported key condition operator {op}")


def check_select(body: dict[str, Any]) -> str:
    """Select as DynamoDB checks it against the projection, named as the request gave it
    (AttributesToGet, or ProjectionExpression): query_ops checks the request before its
    legacy parameters are translated."""
    select = body.get("Select", "ALL_ATTRIBUTES")
    projection = next((p for p in ("AttributesToGet", "ProjectionExpression") if p in body), None)
    if select == "ALL_PROJECTED_ATTRIBUTES" and not body.get("IndexName"):
        raise validation("ALL_PROJECTED_ATTRIBUTES can be used only when Querying using an IndexName")
    if select not in (*SELECTS, "ALL_PROJECTED_ATTRIBUTES"):
        raise validation(f"1 validation error detected: Value '{select}' at 'select' failed to satisfy constraint")
    if projection and select == "COUNT":
        raise validation(f"Cannot specify the {projection} when choosing to get only the Count")
    if projection and "Select" in body and select in ("ALL_ATTRIBUTES", "ALL_PROJECTED_ATTRIBUTES"):
        raise validation(f"Cannot specify the {projection} when choosing to get {select}")
    if select == "SPECIFIC_ATTRIBUTES" and not projection:
        raise validation("Must specify the AttributesToGet or ProjectionExpression when choosing to get "
                         "SPECIFIC_ATTRIBUTES")
    return str(select)


def check_limit(body: dict[str, Any]) -> int | None:
    limit = body.get("Limit")
    if limit is not None and (not isinstance(limit, int) or limit < 1):
        raise validation("1 validation error detected: Value at 'limit' failed to satisfy constraint: "
                         "Member must have value greater than or equal to 1")
    return limit


def page(request: Reading, items: list[Item], more: bool, position: tuple[str, ...] = ()) -> dict[str, Any]:
    """The evaluated items of one page as the response: filter, projection, Select, and the
    position (the table's key, plus an index's key attributes in `position`), and the
    capacity its items would consume in DynamoDB when asked (capacity.py)."""
    table = request.table
    # a filter reads wire items (binary as base64); without one, items go to the answer as held
    matched = [w for w in map(answer_item, items) if request.filter(w)] if request.filter is not None else items
    out: dict[str, Any] = {"Count": len(matched), "ScannedCount": len(items)}
    if request.select != "COUNT":
        out["Items"] = [project(w, request.projection) for w in matched]
    if more and items:
        last = items[-1]
        out["LastEvaluatedKey"] = item_to_wire({**table.key_of(last), **{k: last[k] for k in position if k in last}})
    index = request.index.name if request.index is not None else None
    return out | capacity.read_page(table, request.capacity, request.consistent, index, items)


def take(items: list[Item], limit: int | None) -> tuple[list[Item], bool]:
    """The items of one page (Limit, 1 MB) and whether more may follow. A page whose items'
    JSON (never fewer bytes than DynamoDB counts: names and text as they are, numbers as
    their digits, binary as hex, every value in its typed wrapper) stays under 1 MB cannot
    reach the size limit, so only Limit applies; sizing each item exactly was a sixth of a
    one-page Query's CPU."""
    head = items if limit is None else items[:limit]
    try:
        if len(orjson.dumps(head, default=_hex)) < PAGE_BYTES:
            return head, len(items) > len(head)
    except TypeError:  # a value orjson does not write: sized exactly below
        pass
    taken: list[Item] = []
    size = 0
    for item in items:
        if (limit is not None and len(taken) >= limit) or size >= PAGE_BYTES:
            return taken, True
        taken.append(item)
        size += item_bytes(item)
    return taken, False


def _hex(value: Any) -> str:
    """Binary as hex text, twice its bytes (take's bound); anything else is not an item's."""
    if isinstance(value, bytes | bytearray):
        return value.hex()
    raise TypeError(f"not a value of an item: {type(value).__name__}")
