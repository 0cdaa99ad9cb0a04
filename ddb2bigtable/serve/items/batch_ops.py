"""BatchGetItem, BatchWriteItem, TransactGetItems and TransactWriteItems.

A batch is many independent requests: each write of BatchWriteItem is its own atomic
row write, and one that Bigtable throttles or that kept meeting concurrent writers comes
back in UnprocessedItems for the SDK to resend, as DynamoDB does. Transactions are atomic
only within one Bigtable row (one CheckAndMutateRow), so TransactGetItems and
TransactWriteItems are served when every item they name lives in one row of one table
(the seeds' single-table and adjacency designs put a partition's items in one row), and
refused otherwise with a ValidationException saying so: nothing is written half-way.
"""

from __future__ import annotations

from typing import Any

from ...codec.items import Item
from ...codec.mutations import RowMutation
from .. import capacity
from ..catalog import ServedTable
from ..errors import ServeError, condition_failed, throttled, unsupported, validation
from ..expressions import legacy
from ..expressions import parsing as expressions
from ..requests import WriteRequest
from ..session import Found, Session, key_text, same_key
from ..store import raw_cells
from ..tables.types_record import recorded
from ..wire import check_size, item_to_codec, item_to_wire
from .hot_rows import Deadline, tries
from .item_ops import replace_item, write_of
from .locked_rows import settled

MAX_GET_KEYS = 100
MAX_WRITES = 25
MAX_TRANSACT = 100
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


def _distinct_items(entries: list[tuple[ServedTable, Item]]) -> None:
    """DynamoDB refuses a transaction, TransactGetItems too, naming one item twice."""
    if len({(t.name, repr(sorted(k.items()))) for t, k in entries}) != len(entries):
        raise validation("Transaction request cannot include multiple operations on one item")


def _one_row(entries: list[tuple[ServedTable, Item]], what: str) -> tuple[ServedTable, bytes]:
    if not entries or len(entries) > MAX_TRANSACT:
        raise validation(f"1 validation error detected: {what} must have between 1 and {MAX_TRANSACT} items")
    rows = {(t.name, t.row_key(k)) for t, k in entries}
    if len(rows) > 1:
        raise unsupported(f"{what} over {len(rows)} Bigtable rows",
                          "Bigtable is atomic within one row only, and these items live in different rows; "
                          "a transaction is served when every item it names maps into one row of one table "
                          "(the same partition in the single-table and adjacency designs)")
    table = entries[0][0]
    return table, entries[0][0].row_key(entries[0][1])


async def transact_get_items(session: Session, body: dict[str, Any]) -> dict[str, Any]:
    found = [g.get("Get") if isinstance(g, dict) else None for g in body.get("TransactItems") or []]
    gets = [g for g in found if isinstance(g, dict)]
    if len(gets) != len(found):
        raise validation("Each TransactItem must hold exactly one Get with TableName and Key")
    entries = []
    for get in gets:
        table = session.catalog.get(get.get("TableName"))
        entries.append((table, table.checked_key(item_to_codec(get.get("Key"), "Key"))))
    capacity.check_mode(body)
    _distinct_items(entries)
    table, row_key = _one_row(entries, "TransactGetItems")
    row = await session.store(table, consistent=True).read_row(row_key)
    items = session.decode(table, row) if row is not None else []
    out = []
    spent: dict[str, capacity.Units] = {}
    for get, (_, key) in zip(gets, entries, strict=True):
        item = next((i for i in items if same_key(i, key)), None)
        _add(spent, table.name, capacity.read_item(item, True, factor=2))  # a transactional read: twice
        paths = expressions.projection(get.get("ProjectionExpression"), get.get("ExpressionAttributeNames"))
        out.append({"Item": expressions.project(item_to_wire(item), paths)} if item is not None else {})
    return {"Responses": out} | capacity.answer_tables(body, spent)


_ACTIONS = ("ConditionCheck", "Put", "Delete", "Update")


def _action(entry: Any) -> tuple[str, dict[str, Any]]:
    if not isinstance(entry, dict) or len(entry) != 1 or next(iter(entry)) not in _ACTIONS:
        raise validation("Each TransactItem must hold exactly one of ConditionCheck, Put, Delete, Update")
    (kind, request), = entry.items()
    if not isinstance(request, dict):
        raise validation(f"{kind} must be a map holding TableName and the item or key")
    return kind, request


async def transact_write_items(session: Session, body: dict[str, Any]) -> dict[str, Any]:
    actions = [_action(e) for e in _listed(body.get("TransactItems") or [], "TransactItems")]
    capacity.check_mode(body)
    entries = []
    for kind, request in actions:
        table = session.catalog.get(request.get("TableName"))
        if kind == "Put":
            key = table.checked_key(table.key_of(item_to_codec(request.get("Item"), "Item")))
        else:
            key = table.checked_key(item_to_codec(request.get("Key"), "Key"))
        entries.append((table, key))
    _distinct_items(entries)
    table, row_key = _one_row(entries, "TransactWriteItems")
    store = session.store(table, consistent=True)
    async for _ in tries(Deadline()):  # a lost race tried again while the deadline allows (hot_rows.py)
        row = await store.read_row(row_key)
        cells = raw_cells(row) if row is not None else []
        items = session.decode(table, row) if row is not None else []
        mutations: list[Any] = []
        reasons, written = [], []
        spent: dict[str, capacity.Units] = {}
        for (kind, request), (_, key) in zip(actions, entries, strict=True):
            item = next((i for i in items if same_key(i, key)), None)
            reason, change, new = _transact_one(table, kind, request, key, item, row_key)
            _add(spent, table.name, capacity.Units(read=False, table=2.0) if kind == "ConditionCheck"
                 else capacity.write(table, item, new, factor=2))  # a transactional write: twice
            reasons.append(reason)
            if change is not None:
                mutations += change.mutations
            if new is not None:
                written.append(new)
        if any(r["Code"] != "None" for r in reasons):
            raise ServeError("TransactionCanceledException",
                             "Transaction cancelled, please refer cancellation reasons for specific reasons "
                             f"[{', '.join(r['Code'] for r in reasons)}]", extra={"CancellationReasons": reasons})
        recorded_table = table
        for new in written:  # their new attributes in the table's record of types
            recorded_table = await recorded(session, recorded_table, new)
        if recorded_table is not table:  # another writer recorded one with its own type: encode again
            table = recorded_table
            continue
        if await store.write_if_unchanged(RowMutation(row_key, tuple(mutations)), cells):
            return capacity.answer_tables(body, spent)
    raise throttled(f"the row in {table.name} kept changing while this transaction was checked; retry")


def _transact_one(table: ServedTable, kind: str, request: dict[str, Any], key: Item, item: Item | None,
                  row_key: bytes) -> tuple[dict[str, Any], RowMutation | None, Item | None]:
    """The action's cancellation reason, its row mutation and the item it writes, if any."""
    holds = expressions.condition(request.get("ConditionExpression"), request.get("ExpressionAttributeNames"),
                                  request.get("ExpressionAttributeValues"), table.keys)
    old = item_to_wire(item) if item is not None else None
    if not holds(old):
        failed: dict[str, Any] = {"Code": "ConditionalCheckFailed", "Message": condition_failed().message}
        if request.get("ReturnValuesOnConditionCheckFailure") == "ALL_OLD" and old is not None:
            failed["Item"] = old  # as DynamoDB gives it back in the cancellation reason
        return failed, None, None
    found = Found(row_key, [], item)
    if kind == "ConditionCheck":
        return {"Code": "None"}, None, None
    if kind == "Delete":
        return {"Code": "None"}, write_of(table, found, None) if item is not None else None, None
    if kind == "Put":
        new = item_to_codec(request.get("Item"), "Item")
    else:
        start = old if old is not None else item_to_wire(key)
        new = item_to_codec(expressions.update(start, request.get("UpdateExpression") or "", request.get(
            "ExpressionAttributeNames"), request.get("ExpressionAttributeValues"), table.key_types), "Item")
    check_size(new)
    return {"Code": "None"}, write_of(table, found, new), new
