"""GetItem, PutItem, DeleteItem and UpdateItem.

Writes are read-check-write, atomic per row (store.py): the row is read through the
single-cluster profile, the condition and the update are evaluated on the item as it is,
and the new cells are written only if the row has not changed since; otherwise it starts
over, up to WRITE_TRIES times, then answers ProvisionedThroughputExceededException (the
SDK backs off and retries). A write also clears every cell of the item's previous image
(`Codec.delete` of the old item) so an attribute the new image lacks does not survive.
"""

from __future__ import annotations

from typing import Any

from ...codec.items import Item
from ...codec.mutations import CodecError, Expired, RowMutation
from .. import capacity
from ..catalog import ServedTable
from ..errors import ServeError, condition_failed, throttled, validation
from ..expressions import legacy
from ..expressions import parsing as expressions
from ..expressions.validation import check_table_name
from ..session import Found, Session
from ..store import now_micros
from ..tables.types_record import recorded
from ..wire import WireItem, check_size, item_to_codec, item_to_wire
from .counters import counter_adds

WRITE_TRIES = 8
# an update meeting an attribute of another type: moto's words, DynamoDB's for expressions
MOTO_TYPE_ERRORS = ("An operand in the update expression has an incorrect data type", "Incorrect operand type")
RETURN_VALUES = ("NONE", "ALL_OLD", "UPDATED_OLD", "ALL_NEW", "UPDATED_NEW")


def prepare(body: dict[str, Any]) -> dict[str, Any]:
    """The checks every single-table request starts with: a table name DynamoDB allows, its
    legacy parameters in expression form (legacy.py), and no expression attribute name or
    value that its expressions leave unused."""
    check_table_name(body.get("TableName"))
    capacity.check_mode(body)
    failure = body.get("ReturnValuesOnConditionCheckFailure", "NONE")
    if failure not in ("NONE", "ALL_OLD"):
        raise validation(f"1 validation error detected: Value '{failure}' at 'returnValuesOnConditionCheckFailure' "
                         f"failed to satisfy constraint: Member must satisfy enum value set: [ALL_OLD, NONE]")
    body = legacy.translated(body)
    expressions.check_used(body)
    return body


def _key(table: ServedTable, body: dict[str, Any]) -> Item:
    return table.checked_key(item_to_codec(body.get("Key"), "Key"))


def _return_values(body: dict[str, Any], allowed: tuple[str, ...]) -> str:
    wanted = body.get("ReturnValues", "NONE")
    if wanted not in allowed:
        raise validation(f"Return values set to invalid value: {wanted}")
    return str(wanted)


async def get_item(session: Session, body: dict[str, Any]) -> dict[str, Any]:
    body = prepare(body)
    table = session.catalog.get(body.get("TableName"))
    paths = expressions.projection(body.get("ProjectionExpression"), body.get("ExpressionAttributeNames"))
    consistent = bool(body.get("ConsistentRead"))
    found = await session.find(table, _key(table, body), consistent=consistent)
    spent = capacity.answer(body, table.name, capacity.read_item(found.item, consistent))
    if found.item is None:
        return spent
    return {"Item": expressions.project(item_to_wire(found.item), paths), **spent}


def write_of(table: ServedTable, found: Found, new: Item | None) -> RowMutation:
    """The one row mutation that replaces the found item with `new` (None: deletes it)."""
    codec = table.codec
    try:
        clear = codec.delete(found.item).mutations if found.item is not None else ()
        if new is None:
            return RowMutation(found.row_key, clear)
        table.check_index_keys(new)
        now = now_micros()
        written = codec.encode(new, write_time_micros=now, now_micros=now, replace=True)
    except CodecError as error:
        raise validation(f"One or more parameter values were invalid: {error}") from None
    if isinstance(written, Expired):  # its TTL has passed: DynamoDB would no longer return it
        return RowMutation(found.row_key, clear or (written.delete.mutations if written.delete else ()))
    return RowMutation(written.key, (*clear, *written.mutations))


async def change_item(session: Session, table: ServedTable, key: Item, body: dict[str, Any],
                      new_image: Any) -> tuple[Item | None, Item | None]:
    """Read, check the ConditionExpression, compute the new image (`new_image(old wire item or
    None) -> codec item or None`) and write it if the row is unchanged; (old, new)."""
    holds = expressions.condition(body.get("ConditionExpression"), body.get("ExpressionAttributeNames"),
                                  body.get("ExpressionAttributeValues"), table.keys)
    store = session.store(table, consistent=True)
    for _ in range(WRITE_TRIES):
        found = await session.find(table, key, consistent=True)
        old = item_to_wire(found.item) if found.item is not None else None
        if not holds(old):
            failed = body.get("ReturnValuesOnConditionCheckFailure") == "ALL_OLD" and old is not None
            raise condition_failed(old if failed else None)
        new = new_image(old)
        if new is None and found.item is None:
            return None, None  # nothing to delete
        table = await recorded(session, table, new)  # its new attributes in the table's record of types
        if await store.write_if_unchanged(write_of(table, found, new), found.cells):
            return found.item, new
    raise throttled(f"the item's row in {table.name} kept changing while this write was checked; retry")


def needs_no_read(table: ServedTable, body: dict[str, Any], returns: str) -> bool:
    """A write that can go without reading first: no condition, nothing to return (its
    consumed capacity neither: DynamoDB's figure depends on the old item), and a table with
    the default mapping alone, where an item is a whole row, so the new image's row
    mutation (the row deleted, then its cells) clears every cell of the previous one."""
    plans = table.codec.plans
    return (not body.get("ConditionExpression") and returns == "NONE" and not capacity.wanted(body)
            and len(plans) == 1 and plans[0].index is None)


async def replace_item(session: Session, table: ServedTable, key: Item, body: dict[str, Any], returns: str,
                       new: Item | None) -> Item | None:
    """PutItem (`new`) or DeleteItem (None) of one item; the old image (None when unread or absent).
    One MutateRow when `needs_no_read`, else `change_item`'s read-check-write."""
    if needs_no_read(table, body, returns):
        table = await recorded(session, table, new)
        await session.store(table, consistent=True).write(write_of(table, Found(table.row_key(key), [], None), new)
                                                          if new is not None else table.codec.delete(key))
        return None
    return (await change_item(session, table, key, body, lambda _old: new))[0]


async def put_item(session: Session, body: dict[str, Any]) -> dict[str, Any]:
    body = prepare(body)
    table = session.catalog.get(body.get("TableName"))
    returns = _return_values(body, ("NONE", "ALL_OLD"))
    item = item_to_codec(body.get("Item"), "Item")
    key = table.checked_key(table.key_of(item)) if all(k in item for k in table.keys) else None
    if key is None:
        raise validation(f"One or more parameter values were invalid: Missing the key {table.keys[0]} in the item")
    check_size(item)
    old = await replace_item(session, table, key, body, returns, item)
    spent = capacity.answer(body, table.name, capacity.write(table, old, item))
    return ({"Attributes": item_to_wire(old)} if returns == "ALL_OLD" and old else {}) | spent


async def delete_item(session: Session, body: dict[str, Any]) -> dict[str, Any]:
    body = prepare(body)
    table = session.catalog.get(body.get("TableName"))
    returns = _return_values(body, ("NONE", "ALL_OLD"))
    old = await replace_item(session, table, _key(table, body), body, returns, None)
    spent = capacity.answer(body, table.name, capacity.write(table, old, None))
    return ({"Attributes": item_to_wire(old)} if returns == "ALL_OLD" and old else {}) | spent


async def update_item(session: Session, body: dict[str, Any]) -> dict[str, Any]:
    legacy_updates = "AttributeUpdates" in body
    body = prepare(body)
    table = session.catalog.get(body.get("TableName"))
    returns = _return_values(body, RETURN_VALUES)
    key = _key(table, body)
    expression = body.get("UpdateExpression")
    names, values = body.get("ExpressionAttributeNames"), body.get("ExpressionAttributeValues")

    def updated(old: WireItem | None) -> Item:
        start = old if old is not None else item_to_wire(key)
        if expression is None:
            return item_to_codec(start)
        try:
            new = item_to_codec(expressions.update(start, expression, names, values, table.key_types), "Item")
        except ServeError as error:
            if legacy_updates and any(m in error.message for m in MOTO_TYPE_ERRORS):  # AttributeUpdates: DynamoDB words
                raise validation("Type mismatch for attribute to update") from None
            raise
        check_size(new)
        return new

    adds = None if capacity.wanted(body) else counter_adds(table, key, body, returns)
    if adds is not None:  # only additions to counters: AddToCell, no read (counters.py)
        await session.store(table, consistent=False).write(adds)
        return {}
    old, new = await change_item(session, table, key, body, updated)
    written = expressions.written_paths(expression, names) if expression is not None else []
    spent = capacity.answer(body, table.name, capacity.write(table, old, new))
    return _returned(returns, old or {}, new or {}, written) | spent


def _returned(returns: str, old: Item, new: Item, written: list[expressions.Path]) -> dict[str, Any]:
    """What ReturnValues asks for; UPDATED_OLD and UPDATED_NEW are the paths the update
    wrote (only `a.b` of `SET a.b = :v`, as DynamoDB returns them), before or after."""
    if returns == "NONE":
        return {}
    if returns == "ALL_OLD":
        return {"Attributes": item_to_wire(old)} if old else {}
    if returns == "ALL_NEW":
        return {"Attributes": item_to_wire(new)}
    side = old if returns == "UPDATED_OLD" else new
    picked = expressions.project(item_to_wire(side), written)
    return {"Attributes": picked} if picked else {}
