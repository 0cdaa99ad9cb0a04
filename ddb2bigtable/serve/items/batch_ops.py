"""BatchGetItem and BatchWriteItem.

A batch is many independent requests: each write of BatchWriteItem is its own atomic
row write, and one that Bigtable throttles, that kept meeting concurrent writers or that
met a live transaction comes back in UnprocessedItems for the SDK to resend, as DynamoDB
does. A row a transaction holds is read as its transaction's fate says (locked_rows.py).
Every table and key was checked before anything is read or written
(protocol/batch_requests.py). Transactions are transact_ops.py.
"""

from __future__ import annotations

from typing import Any

from .. import capacity
from ..errors import ServeError
from ..expressions.projections import project
from ..requests import BatchGetItem, BatchWriteItem, WriteRequest
from ..session import Session, same_key
from .item_ops import replace_item
from .locked_rows import settled

MAX_GET_KEYS = 100
MAX_WRITES = 25
RETRYABLE = ("ProvisionedThroughputExceededException", "InternalServerError")
# a write meeting a live transaction's lock comes back unprocessed too: BatchWriteItem has no
# TransactionConflictException (botocore's dynamodb model), and the items before it are written
WRITE_RETRYABLE = (*RETRYABLE, "TransactionConflictException")


def _listed(value: Any, what: str) -> list[Any]:
    """A member that must be a JSON list: another JSON type is DynamoDB's SerializationException
    (it was a 500 where the code iterated it)."""
    if not isinstance(value, list):
        raise ServeError("SerializationException", f"{what} must be a list")
    return value


async def batch_get_item(session: Session, request: BatchGetItem) -> dict[str, Any]:
    spent: dict[str, capacity.Units] = {}
    responses: dict[str, list[Any]] = {}
    unprocessed: dict[str, Any] = {}
    sized = request.capacity != "NONE"  # sizing every item is a tenth of a batch's time: only when asked
    for wanted in request.tables:
        table, name = wanted.table, wanted.table.name
        row_keys = [table.row_key(k) for k in wanted.keys]
        try:
            rows = await session.store(table, wanted.consistent).read_rows(row_keys)
            rows = dict(zip(rows, await settled(session, table, list(rows.values())), strict=True))
        except ServeError as error:
            if error.name not in RETRYABLE:
                raise
            unprocessed[name] = wanted.sent
            continue
        found = []
        units = spent.setdefault(name, capacity.Units(read=True))
        for key, row_key in zip(wanted.keys, row_keys, strict=True):
            row = rows.get(row_key)
            item = next((i for i in session.decode(table, row) if same_key(i, key)), None) if row else None
            if sized:
                units.table += capacity.read_item(item, wanted.consistent).table
            if item is not None:
                found.append(project(item, wanted.projection))  # binary written by the answer's JSON
        responses[name] = found
    return {"Responses": responses, "UnprocessedKeys": unprocessed} | capacity.consumed_tables(request.capacity, spent)


async def batch_write_item(session: Session, request: BatchWriteItem) -> dict[str, Any]:
    unprocessed: dict[str, list[Any]] = {}
    spent: dict[str, capacity.Units] = {}
    for write in request.writes:
        table = write.table
        try:
            old = await replace_item(session, WriteRequest(table, write.key, request.capacity, condition=None,
                                                           returns="NONE", old_on_failure=False), write.item)
        except ServeError as error:
            if error.name not in WRITE_RETRYABLE:
                raise
            unprocessed.setdefault(table.name, []).append(write.sent)
            continue
        _add(spent, table.name, capacity.write(table, old, write.item))
    return {"UnprocessedItems": unprocessed} | capacity.consumed_tables(request.capacity, spent)


def _add(spent: dict[str, capacity.Units], name: str, units: capacity.Units) -> None:
    """One item's units added to its table's."""
    into = spent.setdefault(name, capacity.Units(read=units.read))
    into.table += units.table
    for (kind, index), more in units.indexes.items():
        into.add_index(kind, index, more)
