"""BatchGetItem and BatchWriteItem.

A batch is many independent requests: each write of BatchWriteItem is its own atomic
row write, and one that Bigtable throttles or that kept meeting concurrent writers comes
back in UnprocessedItems for the SDK to resend, as DynamoDB does. A row a transaction
holds is read as its transaction's fate says (locked_rows.py). Transactions are
transact_ops.py.
"""

from __future__ import annotations

from typing import Any

from ...codec.items import Item
from .. import capacity
from ..catalog import ServedTable
from ..errors import ServeError, validation
from ..expressions import legacy
from ..expressions import parsing as expressions
from ..requests import WriteRequest
from ..session import Session, key_text, same_key
from ..wire import check_size, item_to_codec, item_to_wire
from .item_ops import replace_item
from .locked_rows import settled

MAX_GET_KEYS = 100
MAX_WRITES = 25
RETRYABLE = ("ProvisionedThroughputExceededException", "InternalServerError")


def _listed(value: Any, what: str) -> list[Any]:
    """A member that must be a JSON list: another JSON type is DynamoDB's SerializationException
    (it was a 500 where the code iterated it)."""
    if not isinstance(value, list):
        raise ServeError("SerializationException", f"{what} must be a list")
    return value


def _requests(body: dict[str, Any]) -> dict[str, Any]:
    requests = body.get("RequestItems")
    if not isinstance(requests, dict) or not requests:
        raise validation("1 validation error detected: Value at 'requestItems' failed to satisfy constraint: "
                         "Member must have length greater than or equal to 1")
    return requests


async def batch_get_item(session: Session, body: dict[str, Any]) -> dict[str, Any]:
    requests = _requests(body)
    capacity.check_mode(body)
    if sum(len(_listed(r.get("Keys", []), f"RequestItems.{n}.Keys")) for n, r in requests.items()
           if isinstance(r, dict)) > MAX_GET_KEYS:
        raise validation("Too many items requested for the BatchGetItem call")
    spent: dict[str, capacity.Units] = {}
    responses: dict[str, list[Any]] = {}
    unprocessed: dict[str, Any] = {}
    for name, request in requests.items():
        table = session.catalog.get(name)
        if not isinstance(request, dict):
            raise validation(f"RequestItems.{name} must be a map with Keys")
        if not request.get("Keys"):  # DynamoDB Local 1.25.1's words (checked 2026-11-25)
            raise validation(f"The list of keys in RequestItems for BatchGetItem is required: {name} has empty list")
        request = legacy.translated(request)  # AttributesToGet -> ProjectionExpression
        expressions.check_used(request)
        keys = [table.checked_key(item_to_codec(k, "Key")) for k in request.get("Keys", [])]
        _distinct(table, keys)
        paths = expressions.projection(request.get("ProjectionExpression"), request.get("ExpressionAttributeNames"))
        try:
            rows = await session.store(table, bool(request.get("ConsistentRead"))).read_rows(
                [table.row_key(k) for k in keys])
            rows = dict(zip(rows, await settled(session, table, list(rows.values())), strict=True))
        except ServeError as error:
            if error.name not in RETRYABLE:
                raise
            unprocessed[name] = request
            continue
        found = []
        units = spent.setdefault(name, capacity.Units(read=True))
        for key in keys:
            row = rows.get(table.row_key(key))
            item = next((i for i in session.decode(table, row) if same_key(i, key)), None) if row else None
            units.table += capacity.read_item(item, bool(request.get("ConsistentRead"))).table
            if item is not None:
                found.append(expressions.project(item_to_wire(item), paths))
        responses[name] = found
    return {"Responses": responses, "UnprocessedKeys": unprocessed} | capacity.answer_tables(body, spent)


async def batch_write_item(session: Session, body: dict[str, Any]) -> dict[str, Any]:
    requests = _requests(body)
    mode = capacity.check_mode(body)
    if sum(len(_listed(r, f"RequestItems.{n}")) for n, r in requests.items()) > MAX_WRITES:
        raise validation("Too many items requested for the BatchWriteItem call")
    empty = [name for name, ws in requests.items() if not ws]
    if empty:  # DynamoDB Local 1.25.1's words (checked 2026-11-25); it answered as if done
        raise validation(f"The batch write request list for a table cannot be null or empty: {empty[0]}")
    writes = [(session.catalog.get(name), w) for name, ws in requests.items() for w in ws]
    for table in {t.name: t for t, _ in writes}.values():  # every request checked before anything is written
        _distinct(table, [_batch_write_image(t, w)[0] for t, w in writes if t.name == table.name])
    unprocessed: dict[str, list[Any]] = {}
    spent: dict[str, capacity.Units] = {}
    for table, write in writes:
        key, new = _batch_write_image(table, write)
        try:
            old = await replace_item(session, WriteRequest(table, key, mode, condition=None, returns="NONE",
                                                           old_on_failure=False), new)
        except ServeError as error:
            if error.name not in RETRYABLE:
                raise
            unprocessed.setdefault(table.name, []).append(write)
            continue
        _add(spent, table.name, capacity.write(table, old, new))
    return {"UnprocessedItems": unprocessed} | capacity.answer_tables(body, spent)


def _add(spent: dict[str, capacity.Units], name: str, units: capacity.Units) -> None:
    """One item's units added to its table's."""
    into = spent.setdefault(name, capacity.Units(read=units.read))
    into.table += units.table
    for (kind, index), more in units.indexes.items():
        into.add_index(kind, index, more)


def _distinct(table: ServedTable, keys: list[Item]) -> None:
    """DynamoDB refuses a batch naming one item of a table twice (two gets, or a put and a
    delete, of one key): the outcome would depend on the order they are applied in."""
    if len({tuple(key_text(key[n]) for n in table.keys) for key in keys}) < len(keys):
        raise validation("Provided list of item keys contains duplicates")


def _batch_write_image(table: ServedTable, write: Any) -> tuple[Item, Item | None]:
    if not isinstance(write, dict) or len(write) != 1 or next(iter(write)) not in ("PutRequest", "DeleteRequest"):
        raise validation("Each WriteRequest must hold exactly one PutRequest or DeleteRequest")
    if not isinstance(next(iter(write.values())) or {}, dict):
        raise ServeError("SerializationException", f"{next(iter(write))} must be a map")
    if "PutRequest" in write:
        item = item_to_codec((write["PutRequest"] or {}).get("Item"), "Item")
        check_size(item)
        table.check_index_keys(item)
        return table.checked_key(table.key_of(item)), item
    return table.checked_key(item_to_codec((write["DeleteRequest"] or {}).get("Key"), "Key")), None
