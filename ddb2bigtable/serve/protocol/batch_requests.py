"""BatchGetItem and BatchWriteItem bodies -> the typed requests of requests.py.

Every table and every key is checked before anything is read or written, in the order
DynamoDB checks them (the suite pins the order): RequestItems present, then
ReturnConsumedCapacity, the count of keys or writes, then each table in the body's order.
"""

from __future__ import annotations

from typing import Any

from ...codec.items import Item
from ..capacity import check_mode
from ..catalog import Catalog, ServedTable
from ..errors import ServeError, validation
from ..expressions import legacy
from ..expressions import parsing as expressions
from ..expressions.projections import projection
from ..items.batch_ops import MAX_GET_KEYS, MAX_WRITES, _listed
from ..requests import BatchGetItem, BatchWrite, BatchWriteItem, TableKeys
from ..session import key_text
from ..wire import check_size, item_to_codec


def _requests(body: dict[str, Any]) -> dict[str, Any]:
    requests = body.get("RequestItems")
    if not isinstance(requests, dict) or not requests:
        raise validation("1 validation error detected: Value at 'requestItems' failed to satisfy constraint: "
                         "Member must have length greater than or equal to 1")
    return requests


def batch_get_item(catalog: Catalog, body: dict[str, Any]) -> BatchGetItem:
    requests = _requests(body)
    mode = check_mode(body)
    if sum(len(_listed(r.get("Keys", []), f"RequestItems.{n}.Keys")) for n, r in requests.items()
           if isinstance(r, dict)) > MAX_GET_KEYS:
        raise validation("Too many items requested for the BatchGetItem call")
    tables = []
    for name, request in requests.items():
        table = catalog.get(name)
        if not isinstance(request, dict):
            raise validation(f"RequestItems.{name} must be a map with Keys")
        if not request.get("Keys"):  # DynamoDB Local 1.25.1's words (checked 2026-11-25)
            raise validation(f"The list of keys in RequestItems for BatchGetItem is required: {name} has empty list")
        request = legacy.translated(request)  # AttributesToGet -> ProjectionExpression
        expressions.check_used(request)
        keys = [table.checked_key(item_to_codec(k, "Key")) for k in request.get("Keys", [])]
        _distinct(table, keys)
        paths = projection(request.get("ProjectionExpression"), request.get("ExpressionAttributeNames"))
        tables.append(TableKeys(table, keys, paths, bool(request.get("ConsistentRead")), request))
    return BatchGetItem(tables, mode)


def batch_write_item(catalog: Catalog, body: dict[str, Any]) -> BatchWriteItem:
    requests = _requests(body)
    mode = check_mode(body)
    if sum(len(_listed(r, f"RequestItems.{n}")) for n, r in requests.items()) > MAX_WRITES:
        raise validation("Too many items requested for the BatchWriteItem call")
    empty = [name for name, ws in requests.items() if not ws]
    if empty:  # DynamoDB Local 1.25.1's words (checked 2026-11-25); it answered as if done
        raise validation(f"The batch write request list for a table cannot be null or empty: {empty[0]}")
    sent = [(catalog.get(name), w) for name, ws in requests.items() for w in ws]
    images: dict[int, tuple[Item, Item | None]] = {}
    for table in {t.name: t for t, _ in sent}.values():  # one table's writes checked, then its keys distinct
        mine = [i for i, (t, _) in enumerate(sent) if t.name == table.name]
        images |= {i: _write_image(table, sent[i][1]) for i in mine}
        _distinct(table, [images[i][0] for i in mine])
    return BatchWriteItem([BatchWrite(t, *images[i], w) for i, (t, w) in enumerate(sent)], mode)


def _distinct(table: ServedTable, keys: list[Item]) -> None:
    """DynamoDB refuses a batch naming one item of a table twice (two gets, or a put and a
    delete, of one key): the outcome would depend on the order they are applied in."""
    if len({tuple(key_text(key[n]) for n in table.keys) for key in keys}) < len(keys):
        raise validation("Provided list of item keys contains duplicates")


def _write_image(table: ServedTable, write: Any) -> tuple[Item, Item | None]:
    """A WriteRequest's key and new item (None: a delete)."""
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
