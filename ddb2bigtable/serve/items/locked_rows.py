"""Plain reads and writes meeting a transaction's lock (docs/transactions.md, "Single-item
operations"), through the protocol's own machines (serve/transactions).

A row without a lock costs nothing more: the lock's cells come with the row a read already
makes, and `settled` only looks at them. A locked row is read as its transaction's fate
says (never half of it); a writer settles a lock whose transaction is over and meets a live
one with TransactionConflictException, as DynamoDB answers a write to an item an ongoing
transaction holds. Every single-item write is a machine the model checker checks
(resolve.SingleWrite, BlindWrite), run here by the driver, the only caller of Bigtable's
conditional writes of item rows (tests/serve/items/test_write_paths.py).
"""

from __future__ import annotations

from typing import Any

from ...codec.items import Item
from ..catalog import ServedTable
from ..errors import ServeError, throttled
from ..session import Session, same_key
from ..transactions import cells
from ..transactions.driver import run
from ..transactions.resolve import BlindWrite, ReadItem, SingleWrite
from ..transactions.steps import CONFLICT, GAVE_UP, Finished
from .hot_rows import Deadline, gave_up
from .lock_tables import rows_of


def conflict() -> ServeError:
    return ServeError("TransactionConflictException", "Transaction is ongoing for the item")


async def settled(session: Session, table: ServedTable, rows: list[Any]) -> list[Any]:
    """Rows as read (None: no row), each one that holds a lock replaced by the cells it holds
    as of its transaction's fate (ReadItem); the same list when none does."""
    if not any(row is not None and cells.is_locked(row) for row in rows):
        return rows
    engine = rows_of(session)
    out = []
    for row in rows:
        if row is None or not cells.is_locked(row):
            out.append(row)
            continue
        ref = (table.name, row.row_key)
        engine.seen(cells.view_of(ref, row))  # the machine's first read is the one made
        finished = await run(ReadItem(ref), engine)
        if finished.kind != "read":
            raise throttled(f"a row of {table.name} kept changing under a transaction while it was read; retry")
        out.append(cells.RowCells(row.row_key, finished.value))
    return out


async def write_row(session: Session, table: ServedTable, machine: SingleWrite | BlindWrite,
                    deadline: Deadline) -> Finished:
    """Run a single-item write's machine on Bigtable (item_ops.py) to its end: how it finished,
    or TransactionConflictException when a live transaction holds the row, or
    ProvisionedThroughputExceeded when it kept losing the row past the request's deadline."""
    finished = await run(machine, rows_of(session, deadline.at))
    if finished == CONFLICT:
        raise conflict()
    if finished == GAVE_UP:
        raise gave_up(table.name)
    return finished


async def read_item(session: Session, table: ServedTable, key: Item, *, consistent: bool) -> Item | None:
    """GetItem's read: one ReadRow, and the transaction's fate when the row is locked."""
    row = await session.store(table, consistent).read_row(table.row_key(key))
    (row,) = await settled(session, table, [row])
    return next((i for i in session.decode(table, row) if same_key(i, key)), None) if row is not None else None
