"""The sweep: settling transaction locks nobody touches (docs/transactions.md, "The sweep").

A lock left by a crashed worker is settled by the next reader or writer of its row; a row
nobody reads again would keep its lock cells for ever. So every worker, every
`--txn-sweep-seconds` (with jitter, so workers take turns without a coordinator), reads
each served table's reserved family only (a family filter: lock and token cells, never
items) and, for each lock past its expiry, runs the protocol's own `Sweep` machine
(resolve.py, driven by driver.py): rolled forward iff the primary committed, else rolled
back. Two workers sweeping the same row is harmless: every step is a CheckAndMutateRow on
the lock it read, so one succeeds and the other finds the row settled.

ClientRequestToken records older than 10 minutes are deleted too, by a cell-time range
that ends at the cutoff, so a record written since (a newer time) is never taken.
"""

from __future__ import annotations

import asyncio
import logging
import random

from google.cloud.bigtable.data import ReadRowsQuery
from google.cloud.bigtable.data import mutations as bt
from google.cloud.bigtable.data import row_filters as rf

from ...bigtable.deadlines import SCAN_ATTEMPT_SECONDS, SCAN_SECONDS
from ..catalog import ServedTable
from ..session import Session
from ..store import WRITE_SECONDS, bigtable_errors, now_micros
from ..transactions import cells
from ..transactions.driver import run
from ..transactions.resolve import Sweep
from ..transactions.steps import RowRef
from .locked_rows import rows_of
from .transact_ops import TOKEN_MICROS

SWEEP_SECONDS = 60.0  # the default interval: a dead lock lives ~1 minute past its 10 s expiry
log = logging.getLogger("ddb2bigtable.serve")


def token_cutoff(now: int) -> int:
    """Token records older than this are past their 10 minutes (whole milliseconds, as
    Bigtable takes a range's end; the end is exclusive)."""
    return (now - TOKEN_MICROS) // 1000 * 1000


def expired_and_stale(table: str, rows: list[object], now: int) -> tuple[list[RowRef], list[tuple[bytes, bytes]]]:
    """From rows read with the reserved family only: the rows whose lock expired (to settle),
    and the (row key, token qualifier) of records past 10 minutes (to delete)."""
    locked: list[RowRef] = []
    stale: list[tuple[bytes, bytes]] = []
    for row in rows:
        key = bytes(row.row_key)  # type: ignore[attr-defined]
        view = cells.view_of((table, key), row)
        if view.lock is not None and view.lock.expires_micros < now:
            locked.append((table, key))
        stale += [(key, bytes(c.qualifier)) for c in view.data
                  if bytes(c.qualifier).startswith(cells.TOKEN) and c.timestamp_micros < token_cutoff(now)]
    return locked, stale


async def sweep_table(session: Session, table: ServedTable,
                      served: dict[str, ServedTable]) -> tuple[int, tuple[RowRef, ...]]:
    """One pass over `table` (`served`: every table by name, where a lock's primary or
    secondaries may live): (token records deleted, rows still locked after settling)."""
    store = session.store(table, consistent=True)
    query = ReadRowsQuery(row_filter=rf.FamilyNameRegexFilter(cells.FAMILY))
    async with bigtable_errors(store.name):
        found = await store.handle.read_rows(query, operation_timeout=SCAN_SECONDS,
                                             attempt_timeout=SCAN_ATTEMPT_SECONDS)
    now = now_micros()
    locked, stale = expired_and_stale(table.name, list(found), now)
    for key, qualifier in stale:
        async with bigtable_errors(store.name):
            await store.handle.mutate_row(key, [bt.DeleteRangeFromColumn(
                cells.FAMILY, qualifier, end_timestamp_micros=token_cutoff(now))], operation_timeout=WRITE_SECONDS)
    if not locked:
        return len(stale), ()
    finished = await run(Sweep(tuple(locked)), rows_of(session, served))
    return len(stale), tuple(finished.value)


async def sweep_all(session: Session) -> None:
    """One pass over every served table; a table that fails is logged and the others swept."""
    served = {**session.catalog.tables, **session.catalog.created}
    for table in list(served.values()):
        try:
            tokens, stuck = await sweep_table(session, table, served)
        except Exception:  # noqa: BLE001 - the next pass tries again; serving goes on
            log.warning("transaction sweep of %s failed; next pass in a while", table.name, exc_info=True)
            continue
        if stuck:
            log.info("transaction sweep of %s: %d row(s) still locked (a live transaction)", table.name, len(stuck))
        if tokens:
            log.debug("transaction sweep of %s: %d expired ClientRequestToken record(s) deleted", table.name, tokens)


async def sweep_forever(session: Session, seconds: float) -> None:
    """Sweep every `seconds` times a random 0.5-1.5 (workers drift apart), until cancelled."""
    while True:
        await asyncio.sleep(seconds * random.uniform(0.5, 1.5))  # noqa: S311 - jitter, not a secret
        await sweep_all(session)
