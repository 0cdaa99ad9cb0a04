"""TransactWriteItems and TransactGetItems over items in any rows of any tables, by the
protocol of docs/transactions.md (serve/transactions: writer.py's machines, driven on
Bigtable by driver.py).

The request is checked whole before anything is read (DynamoDB's limits: 1 to 100 actions,
one item at most once, 4 MB of items, a ClientRequestToken of 1 to 36 characters); then
the machine reads every row (one ReadRows per table), decides with DynamoDB's semantics
(`_Decider`: the conditions, the new items, CancellationReasons in request order, twice the
capacity units) and commits. Items sharing a row share its lock; a transaction on one row
is one CheckAndMutateRow.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from dataclasses import dataclass
from typing import Any

import orjson
from google.cloud.bigtable.data import mutations as bt

from ...codec.items import Item
from ...codec.mutations import RowMutation
from .. import capacity
from ..catalog import ServedTable
from ..errors import ServeError, condition_failed, validation
from ..expressions import parsing as expressions
from ..session import Found, Session, same_key
from ..store import client_mutations, now_micros
from ..tables.types_record import recorded
from ..transactions import cells
from ..transactions.driver import Rows, expiry_micros, run
from ..transactions.steps import Finished, RowRef, View
from ..transactions.writer import Cancel, Intents, SnapshotRead, WriteTxn
from ..wire import check_size, item_bytes, item_to_codec, item_to_wire
from .batch_ops import _add, _listed
from .hot_rows import Deadline, one_writer, tries
from .item_ops import write_of
from .locked_rows import rows_of

MAX_TRANSACT = 100  # actions or gets (AWS, "Amazon DynamoDB Transactions: How it works")
MAX_BYTES = 4 * 1024 * 1024  # the items of one transaction (AWS, "Amazon DynamoDB Transactions: How it works")
TOKEN_MICROS = 10 * 60 * 1_000_000  # a ClientRequestToken is remembered 10 minutes (same page)
# how long TransactGetItems looks again at rows that transactions keep locking or changing before it
# answers TransactionConflict: each transaction holds its rows a few round trips, so a read of many
# busy rows finds a moment with none held within this
SNAPSHOT_SECONDS = 2.0
CONFLICT_REASON = {"Code": "TransactionConflict", "Message": "Transaction is ongoing for the item"}


@dataclass(frozen=True)
class _Named:
    """One action or get of the request: its table, item key and row."""

    kind: str
    request: dict[str, Any]
    table: ServedTable
    key: Item

    @property
    def row(self) -> RowRef:
        return self.table.name, self.table.row_key(self.key)


def _rows_of(session: Session, named: list[_Named]) -> tuple[tuple[RowRef, ...], Rows]:
    rows = tuple(dict.fromkeys(n.row for n in named))  # request order: the first action's row is the primary
    return rows, rows_of(session, {n.table.name: n.table for n in named})


def _items(session: Session, table: ServedTable, view: View) -> list[Item]:
    return session.decode(table, cells.RowCells(cells.split_row(view.row)[1], view.data)) if view.data else []


def _cancelled(reasons: list[dict[str, Any]]) -> ServeError:
    codes = ", ".join(r["Code"] for r in reasons)
    return ServeError("TransactionCanceledException", "Transaction cancelled, please refer cancellation reasons for "
                      f"specific reasons [{codes}]", extra={"CancellationReasons": reasons})


def _invalid(message: str) -> dict[str, Any]:
    """An action DynamoDB refuses once it meets the item: its cancellation reason."""
    return {"Code": "ValidationError", "Message": message}


def _conflict(named: list[_Named], row: Any) -> ServeError:
    return _cancelled([dict(CONFLICT_REASON) if n.row == row else {"Code": "None"} for n in named])


def _count(items: list[Any], what: str) -> None:
    if not 1 <= len(items) <= MAX_TRANSACT:
        raise validation(f"1 validation error detected: Value at '{what}' failed to satisfy constraint: "
                         f"Member must have length less than or equal to {MAX_TRANSACT}" if items else
                         f"1 validation error detected: Value at '{what}' failed to satisfy constraint: "
                         "Member must have length greater than or equal to 1")


async def _snapshot(rows: tuple[RowRef, ...], engine: Rows) -> Finished:
    """SnapshotRead driven with each of its two reads of every row as one ReadRows: rows
    read one after another with nothing between, so in any order (the model checker reads
    them one by one); a lock met is settled by single-row calls in between."""
    machine = SnapshotRead(rows)
    while not isinstance(step := machine.step(), Finished):
        if machine.i == 0 and machine.sub is None and not engine.prefetched:
            await engine.prefetch(list(rows))
        machine = machine.after(await engine.perform(step))
    return step


async def transact_get_items(session: Session, body: dict[str, Any]) -> dict[str, Any]:
    listed = _listed(body.get("TransactItems") or [], "TransactItems")
    gets = [g.get("Get") if isinstance(g, dict) else None for g in listed]
    if not all(isinstance(g, dict) for g in gets):
        raise validation("Each TransactItem must hold exactly one Get with TableName and Key")
    _count(gets, "transactItems")
    capacity.check_mode(body)
    named = []
    for get in gets:
        table = session.catalog.get(get.get("TableName"))  # type: ignore[union-attr]
        named.append(_Named("Get", get, table, table.checked_key(item_to_codec(get.get("Key"), "Key"))))  # type: ignore[arg-type,union-attr]
    _distinct_items([(n.table, n.key) for n in named])
    rows, engine = _rows_of(session, named)
    async for _ in tries(Deadline(SNAPSHOT_SECONDS)):  # rows a transaction holds: look again after a pause
        finished = await _snapshot(rows, engine)
        if finished.kind == "read":
            break
    if finished.kind != "read":
        raise _conflict(named, finished.value)
    data = dict(zip(rows, finished.value, strict=True))
    out: list[dict[str, Any]] = []
    spent: dict[str, capacity.Units] = {}
    for n in named:
        item = next((i for i in _items(session, n.table, View(n.row, data[n.row], None)) if same_key(i, n.key)), None)
        _add(spent, n.table.name, capacity.read_item(item, True, factor=2))  # a transactional read: twice
        paths = expressions.projection(n.request.get("ProjectionExpression"), n.request.get("ExpressionAttributeNames"))
        out.append({"Item": expressions.project(item_to_wire(item), paths)} if item is not None else {})
    return {"Responses": out} | capacity.answer_tables(body, spent)


def _token(body: dict[str, Any]) -> str | None:
    token = body.get("ClientRequestToken")
    if token is not None and (not isinstance(token, str) or not 1 <= len(token) <= 36):
        raise validation("1 validation error detected: Value at 'clientRequestToken' failed to satisfy constraint: "
                         "Member must have length less than or equal to 36")
    return token


def _request_hash(body: dict[str, Any]) -> str:
    """What a retry under the same token must repeat: the request, its options aside."""
    kept = {k: v for k, v in body.items() if k not in ("ReturnConsumedCapacity", "ReturnItemCollectionMetrics")}
    # the stdlib's writer: a body is any JSON, numbers past 64 bits included (orjson refuses them)
    return hashlib.sha256(json.dumps(kept, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


class _Decider:
    """`decide` for WriteTxn: the rows as read -> the intents, the cancellation, or a token's
    earlier answer. `tables` is read at each call: the types recorded before the real run."""

    def __init__(self, session: Session, named: list[_Named], rows: tuple[RowRef, ...], body: dict[str, Any]):
        self.session, self.named, self.rows, self.body = session, named, rows, body
        self.tables = {n.table.name: n.table for n in named}
        self.token = _token(body)
        self.hash = _request_hash(body)

    def written(self, views: tuple[View, ...]) -> list[tuple[str, Item]]:
        """The items the transaction would write, by table (to record their types first)."""
        return [(n.table.name, new) for n, (_, _, new) in zip(self.named, self._each(views), strict=True) if new]

    def _each(self, views: tuple[View, ...]) -> list[tuple[dict[str, Any], RowMutation | None, Item | None]]:
        by_row = dict(zip(self.rows, views, strict=True))
        decoded: dict[RowRef, list[Item]] = {}
        out = []
        for n in self.named:
            table = self.tables[n.table.name]
            items = decoded.setdefault(n.row, _items(self.session, table, by_row[n.row]))
            item = next((i for i in items if same_key(i, n.key)), None)
            try:
                out.append(_transact_one(table, n.kind, n.request, n.key, item, cells.split_row(n.row)[1]))
            except ServeError as error:  # an update DynamoDB refuses on this item (a key attribute, a type)
                if error.name != "ValidationException":
                    raise
                out.append((_invalid(error.message), None, None))
        return out

    def __call__(self, views: tuple[View, ...]) -> Intents | Cancel | Finished:
        earlier = self._earlier(views[0])
        if earlier is not None:
            return earlier
        each = self._each(views)
        reasons = [reason for reason, _, _ in each]
        refused = [j for j, r in enumerate(reasons) if r["Code"] == "ValidationError"]
        if refused:  # DynamoDB Local 1.25.1 stops at an action it refuses: the reasons end there
            return Cancel(reasons[:refused[0] + 1])
        if any(r["Code"] != "None" for r in reasons):
            return Cancel(reasons)
        changes: dict[RowRef, list[Any]] = {row: [] for row in self.rows}
        spent: dict[str, capacity.Units] = {}
        by_row = dict(zip(self.rows, views, strict=True))
        for n, (_, change, new) in zip(self.named, each, strict=True):
            table = self.tables[n.table.name]
            old = next((i for i in _items(self.session, table, by_row[n.row]) if same_key(i, n.key)), None)
            _add(spent, table.name, capacity.Units(read=False, table=2.0) if n.kind == "ConditionCheck"
                 else capacity.write(table, old, new, factor=2))  # a transactional write: twice
            if change is not None:
                changes[n.row] += client_mutations(change)
        answer = capacity.answer_tables(self.body, spent)
        return Intents(tuple(cells.pack_intent(m) if m else None for m in changes.values()), answer,
                       self._record(views[0], answer))

    def _earlier(self, primary: View) -> Finished | None:
        """A token's record in the primary row, younger than 10 minutes: the earlier answer, or
        a mismatch when another request used the token."""
        if self.token is None:
            return None
        qualifier, since = cells.TOKEN + self.token.encode(), now_micros() - TOKEN_MICROS
        for c in primary.data:
            if c.family == cells.FAMILY and c.qualifier == qualifier and c.timestamp_micros > since:
                record = orjson.loads(c.value)
                return Finished("answered", record["answer"] if record["hash"] == self.hash else None)
        return None

    def _record(self, primary: View, answer: dict[str, Any]) -> list[Any]:
        """The token's record, written by the commit; records past 10 minutes are removed with it."""
        if self.token is None:
            return []
        now = now_micros()
        stale = [bt.DeleteRangeFromColumn(cells.FAMILY, c.qualifier) for c in primary.data
                 if c.family == cells.FAMILY and c.qualifier.startswith(cells.TOKEN)
                 and c.timestamp_micros <= now - TOKEN_MICROS]
        value = orjson.dumps({"hash": self.hash, "answer": answer})
        return [*stale, bt.SetCell(cells.FAMILY, cells.TOKEN + self.token.encode(), value, now // 1000 * 1000)]


def _size(named: list[_Named]) -> int:
    return sum(item_bytes(item_to_codec(n.request.get("Item"), "Item")) for n in named if n.kind == "Put")


def _distinct_items(entries: list[tuple[ServedTable, Item]]) -> None:
    """DynamoDB refuses a transaction, TransactGetItems too, naming one item twice."""
    if len({(t.name, repr(sorted(k.items()))) for t, k in entries}) != len(entries):
        raise validation("Transaction request cannot include multiple operations on one item")

_ACTIONS = ("ConditionCheck", "Put", "Delete", "Update")

def _action(entry: Any) -> tuple[str, dict[str, Any]]:
    if not isinstance(entry, dict) or len(entry) != 1 or next(iter(entry)) not in _ACTIONS:
        raise validation("Each TransactItem must hold exactly one of ConditionCheck, Put, Delete, Update")
    (kind, request), = entry.items()
    if not isinstance(request, dict):
        raise validation(f"{kind} must be a map holding TableName and the item or key")
    return kind, request

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


def _actions(session: Session, body: dict[str, Any]) -> list[_Named]:
    """The request's actions, checked whole before anything is read."""
    actions = [_action(e) for e in _listed(body.get("TransactItems") or [], "TransactItems")]
    _count(actions, "transactItems")
    capacity.check_mode(body)
    named, invalid = [], {}
    for j, (kind, request) in enumerate(actions):
        table = session.catalog.get(request.get("TableName"))
        if kind == "Put":
            item = item_to_codec(request.get("Item"), "Item")
            check_size(item)  # the whole request refused, as DynamoDB Local 1.25.1 does
            key = table.key_of(item)
        else:
            key = item_to_codec(request.get("Key"), "Key")
        try:
            key = table.checked_key(key)
        except ServeError as error:  # a key of the wrong type cancels the transaction (DynamoDB Local 1.25.1)
            if set(key) != set(table.keys):
                raise
            invalid[j] = error.message
        named.append(_Named(kind, request, table, key))
    _distinct_items([(n.table, n.key) for n in named])
    if invalid:
        raise _cancelled([_invalid(invalid[j]) if j in invalid else {"Code": "None"} for j in range(len(named))])
    if _size(named) > MAX_BYTES:
        raise validation("Transaction request cannot be larger than 4 MB")
    return named


async def transact_write_items(session: Session, body: dict[str, Any]) -> dict[str, Any]:
    named = _actions(session, body)
    rows, engine = _rows_of(session, named)
    decide = _Decider(session, named, rows, body)
    await engine.prefetch(list(rows))
    for name, new in decide.written(tuple(engine.prefetched[r] for r in rows)):  # new attributes' types first
        decide.tables[name] = await recorded(session, decide.tables[name], new)
    machine = WriteTxn(secrets.token_hex(16), rows, decide, expires_micros=expiry_micros(now_micros()))
    if len(rows) == 1:  # one CheckAndMutateRow: within a worker, the writes of a hot row take turns (hot_rows.py)
        async with one_writer(*cells.split_row(rows[0]), Deadline()):
            finished = await run(machine, engine)
    else:
        finished = await run(machine, engine)
    if finished.kind in ("committed", "answered") and finished.value is not None:
        return dict(finished.value)
    if finished.kind == "answered":  # the token's record is of another request
        raise ServeError("IdempotentParameterMismatchException", "Request parameters do not match the "
                         "original request made with the same ClientRequestToken")
    if finished.kind == "cancelled":
        raise _cancelled(finished.value)
    raise _conflict(named, finished.value)
