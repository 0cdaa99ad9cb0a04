"""TransactGetItems and TransactWriteItems bodies -> the typed requests of requests.py.

Everything the body alone tells is checked before a row is read, in the order DynamoDB
checks it (DynamoDB Local 1.25.1 beside serve, tests/serve/transactions): each entry's
shape, then the count (1 to 100), ClientRequestToken, ReturnConsumedCapacity; then, in a
write, what each action says without a table, action by action (`_read`: its update
expression's grammar and placeholders, its condition, its item and the item's size), so a
syntax error is named before a missing table of an earlier action; then each action or get
in the body's order: its table name and table, its options and unused placeholders, the key;
an item named twice is refused when its second mention is met, so a missing table after it
is not named. A key that does not fit the table is answered in DynamoDB Local 1.25.1's
words (`_key_problem`): in a write, a key of the wrong type or over the size limits is
that action's ValidationError reason (TransactionCanceledException), decided with the
others' at the rows (transact_ops; here, with no row to read, when every action has one),
and the 4 MB of items are then not counted; in TransactGetItems, a wrong type or a wrong
set of key attributes cancels it at that get, with no CancellationReasons.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from ...codec.items import Item
from ..capacity import check_mode
from ..catalog import Catalog, ServedTable
from ..errors import ServeError, validation
from ..expressions import parsing as expressions
from ..expressions.projections import projection
from ..expressions.validation import check_table_name
from ..items.batch_ops import _listed
from ..items.transact_ops import MAX_BYTES, MAX_TRANSACT, cancelled
from ..requests import Condition, TransactAction, TransactGet, TransactGetItems, TransactWriteItems
from ..session import key_text
from ..wire import check_size, item_bytes, item_to_codec

ACTIONS = ("ConditionCheck", "Put", "Delete", "Update")
# DynamoDB Local 1.25.1's words for a transaction's key that does not fit its table (checked 2026-11-29)
KEY_TYPE = "One or more parameter values were invalid: Type mismatch for key"
KEY_COUNT = "The number of conditions on the keys is invalid"
KEY_SIZE = "Hash primary key values must be under 2048 bytes, and range primary key values must be under 1024 bytes"


def transact_get_items(catalog: Catalog, body: dict[str, Any]) -> TransactGetItems:
    listed = _listed(body.get("TransactItems") or [], "TransactItems")
    gets = [g.get("Get") if isinstance(g, dict) else None for g in listed]
    if not all(isinstance(g, dict) for g in gets):
        raise validation("Each TransactItem must hold exactly one Get with TableName and Key")
    _count(gets)
    mode = check_mode(body)
    seen: set[Any] = set()
    out = []
    for get in gets:
        assert isinstance(get, dict)
        table = catalog.get(get.get("TableName"))  # a name no table could have: not found (DynamoDB Local 1.25.1)
        expressions.check_used(get)
        key = item_to_codec(get.get("Key"), "Key")
        paths = projection(get.get("ProjectionExpression"), get.get("ExpressionAttributeNames"))
        problem = _key_problem(table, key)
        if problem == KEY_SIZE:
            raise validation(problem)
        if problem is not None:  # DynamoDB Local 1.25.1: cancelled at this get, with no CancellationReasons
            raise ServeError("TransactionCanceledException", problem)
        _once(seen, table, key)
        out.append(TransactGet(table, key, paths))
    return TransactGetItems(out, mode)


def transact_write_items(catalog: Catalog, body: dict[str, Any]) -> TransactWriteItems:
    entries = [_action(e) for e in _listed(body.get("TransactItems") or [], "TransactItems")]
    _count(entries)
    token = _token(body)
    mode = check_mode(body)
    read = [_read(kind, request) for kind, request in entries]
    seen: set[Any] = set()
    actions = []
    for (kind, request), (test, item) in zip(entries, read, strict=True):
        action = _write(catalog, kind, request, test, item)
        _once(seen, action.table, action.key)
        actions.append(action)
    if all(a.refused for a in actions):  # DynamoDB Local 1.25.1: each a ValidationError, no row to read
        raise cancelled([{"Code": "ValidationError", "Message": a.refused} for a in actions])
    if not any(a.refused for a in actions) and \
            sum(item_bytes(a.item) for a in actions if a.item is not None) > MAX_BYTES:  # Local: the key first
        raise validation("Transaction request cannot be larger than 4 MB")
    return TransactWriteItems(actions, token, fingerprint(body), mode)


def _read(kind: str, request: dict[str, Any]) -> tuple[Condition | None, Item | None]:
    """What DynamoDB Local 1.25.1 reads of an action before it looks up any table (checked
    2026-11-29): its UpdateExpression (parsed, no item: a reserved word is found at the item),
    its ConditionExpression, a Put's item and its size; the condition's test and the item."""
    expressions.check_limits(request)
    names, values = request.get("ExpressionAttributeNames"), request.get("ExpressionAttributeValues")
    update = request.get("UpdateExpression") if kind == "Update" else None
    if update is not None and not isinstance(update, str):
        raise ServeError("SerializationException", "UpdateExpression must be a string")
    if update is not None:
        expressions.parsed_update(update, names, values)
    condition = request.get("ConditionExpression")
    test = expressions.condition(condition, names, values, ()) if condition is not None else None
    if kind != "Put":
        return test, None
    item = item_to_codec(request.get("Item"), "Item")
    check_size(item)  # the whole request refused, as DynamoDB Local 1.25.1 does
    return test, item


def _write(catalog: Catalog, kind: str, request: dict[str, Any], test: Condition | None,
           item: Item | None) -> TransactAction:
    """One action, with the message of its key's wrong type or size if it has one (the key is then as sent)."""
    table = _table(catalog, request)
    failure = request.get("ReturnValuesOnConditionCheckFailure", "NONE")
    if failure not in ("NONE", "ALL_OLD"):
        raise validation(f"1 validation error detected: Value '{failure}' at 'returnValuesOnConditionCheckFailure' "
                         "failed to satisfy constraint: Member must satisfy enum value set: [ALL_OLD, NONE]")
    if kind == "ConditionCheck" and request.get("ConditionExpression") is None:
        raise validation("1 validation error detected: Value null at 'conditionCheck.conditionExpression' failed "
                         "to satisfy constraint: Member must not be null")
    expressions.check_used(request)
    key = table.key_of(item) if item is not None else item_to_codec(request.get("Key"), "Key")
    problem = _key_problem(table, key, present_first=kind == "Put")
    if problem == KEY_COUNT:  # a wrong type or size cancels the transaction; missing attributes refuse it
        raise validation("One of the required keys was not given a value" if kind == "Put" else problem)
    names, values = request.get("ExpressionAttributeNames"), request.get("ExpressionAttributeValues")
    update = request.get("UpdateExpression") if kind == "Update" else None
    return TransactAction(kind, table, key, test, failure == "ALL_OLD", item, update, names, values, problem)


def _key_problem(table: ServedTable, key: Item, present_first: bool = False) -> str | None:
    """What is wrong with a transaction's key, in DynamoDB Local 1.25.1's words: a wrong type
    (of the attributes present first, in a Put), a wrong set of attributes, a value over the
    size limits; an empty value, or one of a type no key can have, is refused here."""
    if any(next(iter(value)) not in ("S", "N", "B") for value in key.values()):
        raise validation("Invalid attribute value type")
    mistyped = any(name in key and next(iter(key[name])) != kind for name, kind in table.key_types.items())
    counted = set(key) == set(table.keys)
    if mistyped and (present_first or counted):
        return KEY_TYPE
    if not counted:
        return KEY_COUNT
    try:
        table.checked_key(key)
    except ServeError:
        if any(not inner for value in key.values() for inner in value.values()):
            raise  # an empty string or binary: DynamoDB Local refuses the request in the same words
        return KEY_SIZE
    return None


def _table(catalog: Catalog, request: dict[str, Any]) -> ServedTable:
    check_table_name(request.get("TableName"))
    return catalog.get(request.get("TableName"))


def _action(entry: Any) -> tuple[str, dict[str, Any]]:
    if not isinstance(entry, dict) or len(entry) != 1 or next(iter(entry)) not in ACTIONS:
        raise validation("Each TransactItem must hold exactly one of ConditionCheck, Put, Delete, Update")
    (kind, request), = entry.items()
    if not isinstance(request, dict):
        raise validation(f"{kind} must be a map holding TableName and the item or key")
    return kind, request


def _count(items: list[Any]) -> None:
    if not 1 <= len(items) <= MAX_TRANSACT:
        raise validation(f"1 validation error detected: Value at 'transactItems' failed to satisfy constraint: "
                         f"Member must have length less than or equal to {MAX_TRANSACT}" if items else
                         "1 validation error detected: Value at 'transactItems' failed to satisfy constraint: "
                         "Member must have length greater than or equal to 1")


def _once(seen: set[Any], table: ServedTable, key: Item) -> None:
    """DynamoDB refuses a transaction, TransactGetItems too, naming one item twice."""
    named = (table.name, tuple((name, key_text(value)) for name, value in sorted(key.items())))
    if named in seen:
        raise validation("Transaction request cannot include multiple operations on one item")
    seen.add(named)


def _token(body: dict[str, Any]) -> str | None:
    token = body.get("ClientRequestToken")
    if token is not None and (not isinstance(token, str) or not 1 <= len(token) <= 36):
        raise validation("1 validation error detected: Value at 'clientRequestToken' failed to satisfy constraint: "
                         "Member must have length less than or equal to 36")
    return token


def fingerprint(body: dict[str, Any]) -> str:
    """What a retry under the same token must repeat: the request, its options aside."""
    kept = {k: v for k, v in body.items() if k not in ("ReturnConsumedCapacity", "ReturnItemCollectionMetrics")}
    # the stdlib's writer: a body is any JSON, numbers past 64 bits included (orjson refuses them)
    return hashlib.sha256(json.dumps(kept, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
