"""GetItem, PutItem, DeleteItem and UpdateItem bodies -> the typed requests of requests.py.

Each parameter is checked in the order DynamoDB checks it (the suite pins the order:
the first problem is the one named): the table name, ReturnConsumedCapacity,
ReturnValuesOnConditionCheckFailure, the legacy parameters and unused placeholders
(expressions.legacy.prepared), the table, ReturnValues, the key or item, and the condition last.
"""

from __future__ import annotations

from typing import Any

from ..catalog import Catalog, ServedTable
from ..errors import ServeError, validation
from ..expressions import parsing as expressions
from ..expressions.legacy import prepared
from ..expressions.projections import projection
from ..expressions.validation import checked_placeholders
from ..requests import Condition, DeleteItem, GetItem, PutItem, UpdateItem
from ..wire import check_size, item_to_codec

RETURN_VALUES = ("NONE", "ALL_OLD", "UPDATED_OLD", "ALL_NEW", "UPDATED_NEW")


def _return_values(body: dict[str, Any], allowed: tuple[str, ...]) -> str:
    wanted = body.get("ReturnValues", "NONE")
    if wanted not in allowed:
        raise validation(f"Return values set to invalid value: {wanted}")
    return str(wanted)


def _condition(table: ServedTable, body: dict[str, Any]) -> Condition | None:
    if body.get("ConditionExpression") is None:
        return None
    return expressions.condition(body["ConditionExpression"], body.get("ExpressionAttributeNames"),
                                 body.get("ExpressionAttributeValues"), table.keys)


def _common(body: dict[str, Any]) -> dict[str, Any]:
    """What a write request carries besides its key and ReturnValues."""
    return {"capacity": body.get("ReturnConsumedCapacity", "NONE"),
            "old_on_failure": body.get("ReturnValuesOnConditionCheckFailure") == "ALL_OLD"}


def get_item(catalog: Catalog, body: dict[str, Any]) -> GetItem:
    body = prepared(body)
    table = catalog.get(body.get("TableName"))
    paths = projection(body.get("ProjectionExpression"), body.get("ExpressionAttributeNames"))
    key = table.checked_key(item_to_codec(body.get("Key"), "Key"))
    return GetItem(table, key, body.get("ReturnConsumedCapacity", "NONE"), paths, bool(body.get("ConsistentRead")))


def put_item(catalog: Catalog, body: dict[str, Any]) -> PutItem:
    body = prepared(body)
    table = catalog.get(body.get("TableName"))
    returns = _return_values(body, ("NONE", "ALL_OLD"))
    item = item_to_codec(body.get("Item"), "Item")
    if not all(k in item for k in table.keys):
        raise validation(f"One or more parameter values were invalid: Missing the key {table.keys[0]} in the item")
    key = table.checked_key(table.key_of(item))
    check_size(item)
    return PutItem(table, key, condition=_condition(table, body), returns=returns, item=item, **_common(body))


def delete_item(catalog: Catalog, body: dict[str, Any]) -> DeleteItem:
    body = prepared(body)
    table = catalog.get(body.get("TableName"))
    returns = _return_values(body, ("NONE", "ALL_OLD"))
    key = table.checked_key(item_to_codec(body.get("Key"), "Key"))
    return DeleteItem(table, key, condition=_condition(table, body), returns=returns, **_common(body))


def update_item(catalog: Catalog, body: dict[str, Any]) -> UpdateItem:
    legacy = "AttributeUpdates" in body
    body = prepared(body)
    table = catalog.get(body.get("TableName"))
    returns = _return_values(body, RETURN_VALUES)
    key = table.checked_key(item_to_codec(body.get("Key"), "Key"))
    expression = body.get("UpdateExpression")
    if expression is not None and not isinstance(expression, str):
        raise ServeError("SerializationException", "UpdateExpression must be a string")
    # checked once here, where the condition's parse checked them, for the condition and the update both
    names, values = checked_placeholders(body.get("ExpressionAttributeNames"), body.get("ExpressionAttributeValues"))
    condition = None if body.get("ConditionExpression") is None else expressions.condition(
        body["ConditionExpression"], names, values, table.keys, checked=True)
    return UpdateItem(table, key, condition=condition, returns=returns, expression=expression, names=names,
                      values=values, legacy=legacy, **_common(body))
