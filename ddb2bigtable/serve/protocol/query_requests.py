"""Query and Scan bodies -> the typed requests of requests.py, on the table or an index.

The checks come in the order DynamoDB makes them (the suite pins it): Select against the
projection as the request named it, the table name and legacy parameters
(expressions.legacy.prepared), the table, then the index (index_ops.named_index) or, on
the table, Limit, the key condition, a filter on a key, its values' types and the start
key; the filter and projection last.
"""

from __future__ import annotations

from typing import Any

from ...codec.items import AttributeValue, Item
from ..catalog import Catalog, ServedTable
from ..errors import unsupported
from ..errors import validation as invalid
from ..expressions import parsed_keys, validation
from ..expressions import parsing as expressions
from ..expressions.legacy import prepared
from ..expressions.projections import projection
from ..queries import index_ops
from ..queries.paging import check_limit, check_select, check_start_within
from ..requests import Query, Scan
from ..wire import item_to_codec, to_codec


def query(catalog: Catalog, body: dict[str, Any]) -> Query:
    legacy_filter = body.get("QueryFilter")
    check_select(body)
    body = prepared(body)
    table = catalog.get(body.get("TableName"))
    index = index_ops.named_index(catalog.emulator, table, body) if body.get("IndexName") else None
    keys = index_ops.keys(index) if index is not None else table.keys
    limit = check_limit(body)
    expression = body.get("KeyConditionExpression")
    if expression is None or (index is not None and not expression):
        raise invalid("Either the KeyConditions or KeyConditionExpression parameter must be specified")
    names, values = body.get("ExpressionAttributeNames"), body.get("ExpressionAttributeValues")
    found = parsed_keys.key_condition(expression, names, values, keys, *((index.name,) if index else ()))
    if index is None:
        _no_key_in_filter(table, body, legacy_filter)
    partition = to_codec(found.partition[1], "KeyConditionExpression")
    if index is None:
        _same_types(table, found)
    sort = (found.sort[1], [to_codec(b, "KeyConditionExpression") for b in found.sort[2]]) if found.sort else None
    given = body.get("ExclusiveStartKey")
    start: Item | None = None
    if index is not None:
        start = item_to_codec(given, "ExclusiveStartKey") if given is not None else {}
        check_start_within(start, keys, partition, sort)
        start = _index_start(catalog, table, index, start if given is not None else None)
    elif given is not None:
        start = table.checked_key(item_to_codec(given, "ExclusiveStartKey"))
        check_start_within(start, table.keys, partition, sort)
    return Query(**_page_fields(table, index, body, limit, start), partition=partition, sort=sort,
                 reverse=body.get("ScanIndexForward", True) is False)


def scan(catalog: Catalog, body: dict[str, Any]) -> Scan:
    check_select(body)
    body = prepared(body)
    table = catalog.get(body.get("TableName"))
    if body.get("IndexName"):
        index = index_ops.named_index(catalog.emulator, table, body)
        if body.get("Segment") is not None or body.get("TotalSegments") is not None:
            raise unsupported("a parallel Scan of an index", "scan the index in one segment")
        limit = check_limit(body)
        given = body.get("ExclusiveStartKey")
        start = item_to_codec(given, "ExclusiveStartKey") if given is not None else None
        start = _index_start(catalog, table, index, start)
        return Scan(**_page_fields(table, index, body, limit, start), segment=0, total=0)
    limit = check_limit(body)
    segment, total = _segments(body)
    given = body.get("ExclusiveStartKey")
    start = table.checked_key(item_to_codec(given, "ExclusiveStartKey")) if given is not None else None
    return Scan(**_page_fields(table, None, body, limit, start), segment=segment, total=total)


def _index_start(catalog: Catalog, table: ServedTable, index: Any, start: Item | None) -> Item | None:
    """An index's ExclusiveStartKey holds the table's key and the index's (emulator stages
    look the item up by them; a view's page resumes from them as given)."""
    if start is not None and catalog.emulator and set(start) != {*table.keys, *index_ops.keys(index)}:
        raise invalid("The provided starting key is invalid: it must hold the table's and the index's keys")
    return start


def _page_fields(table: ServedTable, index: Any, body: dict[str, Any], limit: int | None,
                 start: Item | None) -> dict[str, Any]:
    """What every page reads of the request: its filter, projection, Select and capacity."""
    names, values = body.get("ExpressionAttributeNames"), body.get("ExpressionAttributeValues")
    keep = body.get("FilterExpression")
    return {"table": table, "index": index, "limit": limit, "start": start,
            "filter": expressions.condition(keep, names, values, table.keys, "FilterExpression")
            if keep is not None else None,
            "projection": projection(body.get("ProjectionExpression"), names),
            "select": body.get("Select"), "consistent": bool(body.get("ConsistentRead")),
            "capacity": body.get("ReturnConsumedCapacity", "NONE")}


def _no_key_in_filter(table: ServedTable, body: dict[str, Any], legacy_filter: Any) -> None:
    """DynamoDB refuses a Query filter that reads a key attribute (the key condition is where
    keys go), in the words of the parameter the request used."""
    if body.get("FilterExpression") is None:
        return
    tree = expressions.parsed_condition("FilterExpression", body["FilterExpression"],
                                        body.get("ExpressionAttributeNames"), body.get("ExpressionAttributeValues"))
    keys = [str(p[0]) for p in validation.paths(tree) if p[0] in table.keys]
    if keys:
        raise invalid(f"{'QueryFilter' if legacy_filter else 'Filter Expression'} can only contain non-primary key "
                      f"attributes: Primary key attribute: {keys[0]}")


def _same_types(table: ServedTable, found: expressions.KeyCondition) -> None:
    kinds = table.key_types
    given: list[tuple[str, AttributeValue]] = [(found.partition[0], found.partition[1])]
    given += [(found.sort[0], b) for b in found.sort[2]] if found.sort else []
    for name, value in given:
        if not isinstance(value, dict) or next(iter(value), None) != kinds.get(name):
            raise invalid("One or more parameter values were invalid: Condition parameter type does not match "
                          "schema type")


def _segments(body: dict[str, Any]) -> tuple[int, int]:
    segment, total = body.get("Segment"), body.get("TotalSegments")
    if (segment is None) != (total is None):
        raise invalid("The TotalSegments parameter is required but was not present in the request when "
                      "Segment parameter is present" if total is None else
                      "The Segment parameter is required but was not present in the request when parameter "
                      "TotalSegments is present")
    if total is None:
        return 0, 0
    for value, where, least, most in ((total, "totalSegments", 1, 1000000), (segment, "segment", 0, 999999)):
        if isinstance(value, int) and not least <= value <= most:  # AWS's request validation words
            rule = f"greater than or equal to {least}" if value < least else f"less than or equal to {most}"
            raise invalid(f"1 validation error detected: Value '{value}' at '{where}' failed to satisfy constraint: "
                          f"Member must have value {rule}")
    if not isinstance(total, int) or isinstance(total, bool):
        raise invalid("1 validation error detected: Value at 'totalSegments' failed to satisfy constraint")
    if not isinstance(segment, int) or not 0 <= segment < total:
        raise invalid(f"The Segment parameter is zero-based and must be less than parameter TotalSegments: "
                      f"Segment: {segment} is not less than TotalSegments: {total}")
    return segment, total
