"""Plain reads and writes meeting a transaction's lock (docs/transactions.md, "Single-item
operations"), through the protocol's own machines (serve/transactions).

A row without a lock costs nothing more: the lock's cells come with the row a read already
makes, and `settled` only looks at them. A locked row is read as its transaction's fate
says (never half of it); a writer settles a lock whose transaction is over and meets a live
one with TransactionConflictException, as DynamoDB answers a write to an item an ongoing
transaction holds.
"""

from __future__ import annotations

from typing import Any

from ...codec.items import Item
from ...codec.mutations import RowMutation
from ..catalog import ServedTable
from ..errors import ServeError, throttled
from ..session import Found, Session, same_key
from ..transactions import cells
from ..transactions.driver import run
from ..transactions.resolve import SETTLED, ReadItem, Resolve
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


async def unlocked(session: Session, table: ServedTable, found: Found) -> bool:
    """A writer's read: True when the row holds no lock; False when a lock whose transaction
    is over was settled (read the row again); TransactionConflictException when a live
    transaction holds the row."""
    view = cells.view_of((table.name, found.row_key), found.cells)
    if view.lock is None:
        return True
    if await run(Resolve.of(view), rows_of(session)) == SETTLED:
        return False
    raise conflict()


async def write_unless_locked(session: Session, table: ServedTable, mutation: RowMutation) -> bool:
    """A write that needs no read, as one CheckAndMutateRow refused by a locked row (the
    MutateRow it replaces could overwrite a transaction's row); False when the row is locked.
    What the protocol's WriteIfUnlocked step does, without storing the mutations as an
    intent and reading them back (a wide item's 20,000 cells took 0.6 s that way); its row
    delete is made family by family, as the protocol deletes a row (transactions/cells.py),
    so the reserved family's cells (ClientRequestToken records) stay."""
    store = session.store(table, consistent=True)
    return await store.write_unless(cells.holds_any_lock(), mutation, table.families)


async def read_item(session: Session, table: ServedTable, key: Item, *, consistent: bool) -> Item | None:
    """GetItem's read: one ReadRow, and the transaction's fate when the row is locked."""
    row = await session.store(table, consistent).read_row(table.row_key(key))
    (row,) = await settled(session, table, [row])
    return next((i for i in session.decode(table, row) if same_key(i, key)), None) if row is not None else None
