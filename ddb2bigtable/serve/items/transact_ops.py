"""TransactWriteItems and TransactGetItems over items in any rows of any tables, by the
protocol of docs/transactions.md (serve/transactions: writer.py's machines, driven on
Bigtable by driver.py).

The request comes checked whole (protocol/transact_requests.py: DynamoDB's limits, 1 to 100
actions, one item at most once, 4 MB of items, a ClientRequestToken of 1 to 36 characters);
the machine reads every row (one ReadRows per table), decides with DynamoDB's semantics
(`_Decider`: the conditions, the new items, CancellationReasons in request order, twice the
capacity units) and commits. Items sharing a row share its lock; a transaction on one row
is one CheckAndMutateRow.
"""

from __future__ import annotations

import secrets
from typing import Any

import orjson

from ...codec.items import Item
from ...codec.mutations import RowMutation
from .. import capacity
from ..catalog import ServedTable
from ..errors import ServeError, condition_failed, internal, validation
from ..expressions import parsing as expressions
from ..expressions.projections import project
from ..requests import TransactAction, TransactGet, TransactGetItems, TransactWriteItems
from ..session import Found, Session, same_key
from ..store import client_mutations, now_micros
from ..tables.types_record import recorded, unrecorded
from ..transactions import cells
from ..transactions.driver import Rows, expiry_micros, run
from ..transactions.snapshot import SnapshotRead
from ..transactions.steps import Finished, RowRef, View
from ..transactions.writer import Cancel, Intents, WriteTxn
from ..wire import MAX_ITEM_BYTES, WireItem, check_transact_read, item_bytes, item_to_codec, item_to_wire
from .batch_ops import _add
from .hot_rows import Deadline, one_writer
from .item_ops import write_of
from .lock_tables import rows_of, tokens_ready
from .stream_writes import Numbering, expired, lapsed, record_cells, stream_view, with_records
from .turns import read_together, turns

MAX_TRANSACT = 100  # actions or gets (AWS, "Amazon DynamoDB Transactions: How it works")
MAX_BYTES = 4 * 1024 * 1024  # the items of one transaction (AWS, "Amazon DynamoDB Transactions: How it works")
MAX_RUNS = 3  # a transaction's runs, each after recording the types of new attributes the last one met
TOKEN_MICROS = 10 * 60 * 1_000_000  # a ClientRequestToken is remembered 10 minutes (same page)
CONFLICT_REASON = {"Code": "TransactionConflict", "Message": "Transaction is ongoing for the item"}


Named = TransactGet | TransactAction  # a get or an action: its table and item key


def row_of(named: Named) -> RowRef:
    return named.table.name, named.table.row_key(named.key)


def _rows_of(session: Session, named: list[Any], token: str | None = None) -> tuple[tuple[RowRef, ...], Rows]:
    """The rows in request order, the first the primary: the token's row in the token table
    when there is a ClientRequestToken (its record is written by the commit), else the first
    action's."""
    rows = tuple(dict.fromkeys(row_of(n) for n in named))
    if token is not None:
        rows = ((cells.TOKENS, token.encode()), *rows)
    return rows, rows_of(session)


def _items(session: Session, table: ServedTable, view: View) -> list[Item]:
    return session.decode(table, cells.RowCells(cells.split_row(view.row)[1], view.data)) if view.data else []


def cancelled(reasons: list[dict[str, Any]]) -> ServeError:
    codes = ", ".join(r["Code"] for r in reasons)
    return ServeError("TransactionCanceledException", "Transaction cancelled, please refer cancellation reasons for "
                      f"specific reasons [{codes}]", extra={"CancellationReasons": reasons})


def _invalid(message: str) -> dict[str, Any]:
    """An action DynamoDB refuses once it meets the item: its cancellation reason."""
    return {"Code": "ValidationError", "Message": message}


def _conflict(named: list[Any], row: Any) -> ServeError:
    return cancelled([dict(CONFLICT_REASON) if getattr(n, "refused", None) is None and row_of(n) == row
                      else {"Code": "None"} for n in named])


async def transact_get_items(session: Session, request: TransactGetItems) -> dict[str, Any]:
    named = request.gets
    rows, engine = _rows_of(session, named)
    # a row a transaction holds prepared (not committed) is read around: the rows as they were
    # before it (snapshot.py); only a lock that cannot be read around cancels (TransactionConflict)
    # within a worker, in turns with the writers, and shared with the same reads waiting with it (turns.py)
    finished = await read_together(rows, tuple(row_of(n) for n in named), lambda row: _conflict(named, row),
                                   lambda: run(SnapshotRead(rows), engine))  # two reads: one ReadRows per table each
    if finished.kind != "read":
        raise _conflict(named, finished.value)
    data = dict(zip(rows, finished.value, strict=True))
    out: list[dict[str, Any]] = []
    spent: dict[str, capacity.Units] = {}
    found: list[Item] = []
    for n in named:
        item = next((i for i in _items(session, n.table, View(row_of(n), data[row_of(n)], None))
                     if same_key(i, n.key)), None)
        found += [item] if item is not None else []
        _add(spent, n.table.name, capacity.read_item(item, True, factor=2))  # a transactional read: twice
        out.append({"Item": project(item_to_wire(item), n.projection)} if item is not None else {})
    check_transact_read(found)  # DynamoDB's 4 MB of items read (wire.py)
    return {"Responses": out} | capacity.consumed_tables(request.capacity, spent)


_Each = list[tuple[dict[str, Any], RowMutation | None, Item | None]] | Cancel  # each action's reason, change, new item


class _Decider:
    """`decide` for WriteTxn: the rows as read -> the intents, the cancellation, or an end
    with no write: a token's earlier answer, a ValidationException the request is refused
    with (Finished "refused"), or the new attribute names whose types must be recorded
    before the transaction can be written (Finished "unrecorded": `_written` records them
    and runs it again). `tables` is read at each call: the types recorded since."""

    def __init__(self, session: Session, request: TransactWriteItems, rows: tuple[RowRef, ...]):
        self.session, self.named, self.rows, self.request = session, request.actions, rows, request
        self.tables = {n.table.name: n.table for n in self.named}
        self.token, self.hash = request.token, request.fingerprint
        self.streams: dict[str, str | None] = {}  # each table's stream view (stream_writes.stream_view), read first
        # the last evaluation (`_each`) and what it was made from: the rows as read and the
        # tables, the same objects when the machine decides on the views `written` saw
        self._last: tuple[tuple[Any, ...], _Each] | None = None

    def _each(self, views: tuple[View, ...]) -> _Each:
        """`_evaluated`, once for the same rows as read and tables (each update expression
        applied once, not again when a decision is asked twice on the same reads)."""
        made_of = (*views, *self.tables.values())
        if self._last is not None and len(self._last[0]) == len(made_of) and all(
                a is b for a, b in zip(self._last[0], made_of, strict=True)):
            return self._last[1]
        each = self._evaluated(views)
        self._last = (made_of, each)
        return each

    def _evaluated(self, views: tuple[View, ...]) -> _Each:
        """Each action's reason, change and new item, in request order, as DynamoDB Local 1.25.1
        gives them: a key that does not fit its table is its action's ValidationError, the
        others evaluated; an update of a key attribute cancels with its reason alone, nothing
        after it evaluated; any other update that cannot apply to its item (a type, a missing attribute,
        400 KB) refuses the whole request with its ValidationException, whatever the actions
        before it gave."""
        by_row = dict(zip(self.rows, views, strict=True))
        decoded: dict[RowRef, list[Item]] = {}
        out: list[tuple[dict[str, Any], RowMutation | None, Item | None]] = []
        for n in self.named:
            if n.refused is not None:  # a key that does not fit its table: this reason, the others go on
                out.append((_invalid(n.refused), None, None))
                continue
            table, row = self.tables[n.table.name], row_of(n)
            items = decoded.setdefault(row, _items(self.session, table, by_row[row]))
            item = next((i for i in items if same_key(i, n.key)), None)
            try:
                out.append(_transact_one(table, n, item, cells.split_row(row)[1]))
            except _KeyWritten as refused:
                return Cancel([_invalid(refused.message)])
        return out

    def __call__(self, views: tuple[View, ...]) -> Intents | Cancel | Finished:
        earlier = self.earlier(views[0])
        if earlier is not None:
            return earlier
        try:
            each = self._each(views)
        except ServeError as error:  # given by the machine once nothing of it is left locked
            if error.name != "ValidationException":
                raise
            return Finished("refused", error)
        if isinstance(each, Cancel):
            return each
        reasons = [reason for reason, _, _ in each]
        if any(r["Code"] != "None" for r in reasons):
            return Cancel(reasons)
        new_names = [(n.table.name, new) for n, (_, _, new) in zip(self.named, each, strict=True)
                     if new and unrecorded(self.session, self.tables[n.table.name], new)]
        if new_names:
            return Finished("unrecorded", new_names)
        changes: dict[RowRef, list[Any]] = {row: [] for row in self.rows}
        spent: dict[str, capacity.Units] = {}
        by_row = dict(zip(self.rows, views, strict=True))
        numbers = {row: Numbering.of(view.data) for row, view in by_row.items()}  # each row's next records
        for n, (_, change, new) in zip(self.named, each, strict=True):
            table = self.tables[n.table.name]
            old = next((i for i in _items(self.session, table, by_row[row_of(n)]) if same_key(i, n.key)), None)
            _add(spent, table.name, capacity.Units(read=False, table=2.0) if n.kind == "ConditionCheck"
                 else capacity.write(table, old, new, factor=2))  # a transactional write: twice
            if change is not None:  # the item's stream record travels in its row's intent, applied with it
                changes[row_of(n)] += client_mutations(_recorded(
                    self.session, table, self.streams.get(table.name), by_row[row_of(n)], numbers[row_of(n)],
                    (n.key, old, new), change))
        answer = capacity.consumed_tables(self.request.capacity, spent)
        return Intents(tuple(cells.pack_intent(m) if m else None for m in changes.values()), answer,
                       self._record(answer))

    def earlier(self, primary: View) -> Finished | None:
        """The token's record in its row (the primary), younger than 10 minutes: the earlier
        answer, or a mismatch (None as the answer) when another request used the token."""
        if self.token is None:
            return None
        qualifier, since = cells.TOKEN + self.token.encode(), now_micros() - TOKEN_MICROS
        for c in primary.data:
            if c.family == cells.FAMILY and c.qualifier == qualifier and c.timestamp_micros > since:
                record = orjson.loads(c.value)
                return Finished("answered", record["answer"] if record["hash"] == self.hash else None)
        return None

    def _record(self, answer: dict[str, Any]) -> list[Any]:
        """The token's record, written by the commit in the token's row, replacing an older one."""
        if self.token is None:
            return []
        qualifier, value = cells.TOKEN + self.token.encode(), orjson.dumps({"hash": self.hash, "answer": answer})
        return cells.replaced(qualifier, value, now_micros() // 1000 * 1000)


def _recorded(session: Session, table: ServedTable, view: str | None, seen: View, numbers: Numbering,
              about: tuple[Item, Item | None, Item | None], change: RowMutation) -> RowMutation:
    """An action's row mutation with its stream records, TTL met as a single write meets it
    (item_ops._change): an item whose expiry had passed (hidden, not yet deleted for good) gets
    its REMOVE by the service first and its cells cleared; an item written already expired gets
    its record and its REMOVE, and is deleted with them (not kept for a later write or the
    sweep to remove a second time)."""
    if view is None:
        return change
    key, old, new = about
    row_key = cells.split_row(seen.row)[1]
    lapsed_old = lapsed(session, table, row_key, seen.data, key) if old is None else None
    written_expired = expired(table, new)
    if lapsed_old is not None or written_expired:
        change = write_of(table, Found(row_key, [], old or lapsed_old), None if written_expired else new)
    return with_records(change, record_cells(table, view, numbers, old, new, lapsed_old=lapsed_old))


def _transact_one(table: ServedTable, action: TransactAction, item: Item | None,
                  row_key: bytes) -> tuple[dict[str, Any], RowMutation | None, Item | None]:
    """The action's cancellation reason, its row mutation and the item it writes, if any."""
    old = item_to_wire(item) if item is not None else None
    if action.condition is not None and not action.condition(old):
        failed: dict[str, Any] = {"Code": "ConditionalCheckFailed", "Message": condition_failed().message}
        if action.old_on_failure and old is not None:
            failed["Item"] = old  # as DynamoDB gives it back in the cancellation reason
        return failed, None, None
    if action.kind == "ConditionCheck" or (action.kind == "Delete" and item is None):
        return {"Code": "None"}, None, None
    new = action.item if action.kind != "Delete" else None
    if action.kind == "Update":
        new = _updated(table, action, old if old is not None else item_to_wire(action.key))
    try:
        return {"Code": "None"}, write_of(table, Found(row_key, [], item), new), new
    except ServeError as error:  # an index key of the wrong type: this action's reason, the others go on
        if error.name != "ValidationException":
            raise
        return _invalid(error.message), None, None


class _KeyWritten(Exception):
    """An update of a key attribute: DynamoDB Local 1.25.1 cancels with this reason alone."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


def _updated(table: ServedTable, action: TransactAction, start: WireItem) -> Item:
    """The item after the action's update; a ValidationException refuses the whole request."""
    try:
        new = item_to_codec(start if action.expression is None else expressions.update(
            start, action.expression, action.names, action.values, table.key_types), "Item")
    except ServeError as error:
        if error.name == "ValidationException" and action.expression is not None and any(
                path and path[0] in table.keys for path in expressions.written_paths(action.expression, action.names)):
            raise _KeyWritten(error.message) from None
        raise
    if item_bytes(new) > MAX_ITEM_BYTES:
        raise validation("Item size to update has exceeded the maximum allowed size")  # DynamoDB Local 1.25.1
    return new


async def transact_write_items(session: Session, request: TransactWriteItems) -> dict[str, Any]:
    named = request.actions
    if request.token is not None:
        await tokens_ready(session)
    rows, engine = _rows_of(session, [n for n in named if n.refused is None], request.token)
    if len(rows) == 1:  # one CheckAndMutateRow: within a worker, the writes of a hot row take turns (hot_rows.py)
        async with one_writer(*cells.split_row(rows[0]), Deadline()):
            finished = await _written(session, request, rows, engine)
    else:
        async with turns(rows, True, lambda row: _conflict(named, row)) as readers_gone:  # within a worker
            engine.after_readers(rows[1:] if request.token is not None else rows, readers_gone)  # (turns.py)
            finished = await _written(session, request, rows, engine)
    if finished.kind in ("committed", "answered"):
        return _answered(finished)
    if finished.kind == "refused":
        raise finished.value
    if finished.kind == "cancelled":
        raise cancelled(finished.value)
    if request.token is not None and finished.value == rows[0]:  # another request holds the token's row
        raise ServeError("TransactionInProgressException", "The transaction with the given request token is "
                         "already in progress")
    raise _conflict(named, finished.value)


async def _written(session: Session, request: TransactWriteItems, rows: tuple[RowRef, ...], engine: Rows) -> Finished:
    """The transaction from its first reads to its end, or a token's earlier answer, or a
    refusal (Finished "refused", the ValidationException its decision raised).

    Under a ClientRequestToken the first attempt presumes the token's row empty instead of
    reading it (a token is new but for a retry) and prewrites it while it reads the items'
    rows, in one round trip (writer.WriteTxn.presuming): the prewrite holds only while the
    row is exactly so, empty. A retry (the row holds the record) or a request whose twin is
    in flight (its lock) fails it, having locked nothing, and the next attempt reads the
    row: the record answers, the lock is met. So a transaction boto3 sends (a token on
    every one) makes no read of the token's row, and its prewrite costs no round trip of
    its own (docs/transactions.md, "A transaction's steps"). Without a token the machine's
    first reads are one ReadRows per table (the driver's prefetch).
    A decision with attributes whose types are not recorded writes nothing ("unrecorded"):
    they are recorded, then the transaction runs again from its reads (at most MAX_RUNS)."""
    decide = _Decider(session, request, rows)
    decide.streams = {name: await stream_view(session, table) for name, table in decide.tables.items()}
    for _ in range(MAX_RUNS):
        machine = WriteTxn(secrets.token_hex(16), rows, decide, expires_micros=expiry_micros(now_micros()),
                           primary_at_once=request.token is not None)
        if request.token is not None and len(rows) > 1:
            machine = machine.presuming(_empty(rows[0]))
        else:
            await engine.prefetch(list(rows))
        finished = await run(machine, engine)
        if finished.kind != "unrecorded":
            return finished
        for name, new in finished.value:  # new attributes' types first
            decide.tables[name] = await recorded(session, decide.tables[name], new)
    raise internal("the types of the transaction's attributes could not be recorded; retry")


def _empty(row: RowRef) -> View:
    """A row with nothing in it, as read."""
    return View(row, (), None)


def _answered(finished: Finished) -> dict[str, Any]:
    """A committed transaction's answer, or a token's earlier one; None: the token's record is
    of another request."""
    if finished.value is None:
        raise ServeError("IdempotentParameterMismatchException", "Request parameters do not match the "
                         "original request made with the same ClientRequestToken")
    return dict(finished.value)
