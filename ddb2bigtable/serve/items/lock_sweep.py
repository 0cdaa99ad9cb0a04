"""The sweep: settling transaction locks nobody touches (docs/transactions.md, "The sweep").

A lock left by a crashed worker is settled by the next reader or writer of its row; a row
nobody reads again would keep its lock cells for ever. So every worker, every
`--txn-sweep-seconds` (with jitter, so workers take turns without a coordinator), reads
the reserved family only (a family filter: lock and token cells, never items) of every table
that can hold a lock (the spec tables, every table serve created, whether this worker served
it or not, and the token table) and, for each lock past its expiry, runs the protocol's own `Sweep` machine
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
from ..errors import ServeError
from ..session import Session
from ..store import WRITE_SECONDS, Store, bigtable_errors, now_micros
from ..tables import created_tables
from ..transactions import cells
from ..transactions.driver import run
from ..transactions.resolve import Sweep
from ..transactions.steps import RowRef
from . import lock_tables, ttl_sweep
from .lock_tables import rows_of
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


async def sweep_table(session: Session, name: str, store: Store) -> tuple[int, tuple[RowRef, ...]]:
    """One pass over the table a lock calls `name` (its rows in `store`): (token records
    deleted, rows still locked after settling). The locks' primaries and secondaries are
    read wherever they live (lock_tables.py)."""
    query = ReadRowsQuery(row_filter=rf.FamilyNameRegexFilter(cells.FAMILY))
    async with bigtable_errors(store.name):
        found = await store.handle.read_rows(query, operation_timeout=SCAN_SECONDS,
                                             attempt_timeout=SCAN_ATTEMPT_SECONDS)
    now = now_micros()
    locked, stale = expired_and_stale(name, list(found), now)
    for key, qualifier in stale:
        async with bigtable_errors(store.name):
            await store.handle.mutate_row(key, [bt.DeleteRangeFromColumn(
                cells.FAMILY, qualifier, end_timestamp_micros=token_cutoff(now))], operation_timeout=WRITE_SECONDS)
    if not locked:
        return len(stale), ()
    finished = await run(Sweep(tuple(locked)), rows_of(session))
    return len(stale), tuple(finished.value)


async def swept_tables(session: Session) -> list[str]:
    """Every table that can hold a lock, as locks name them: the spec tables, every table
    serve created (the registry's, whichever worker served them) and the token table."""
    catalog = session.catalog
    created = await created_tables.names(session)
    return [*catalog.tables, *(n for n in created if n not in catalog.tables), cells.TOKENS]


async def sweep_all(session: Session) -> None:
    """One pass over every table that can hold a lock; a table that fails is logged and the
    others swept. A table not there (the token table before any token, a created table
    deleted meanwhile) is skipped."""
    try:
        names = await swept_tables(session)
    except Exception:  # noqa: BLE001 - the registry unreadable: sweep what this worker knows
        log.warning("transaction sweep could not list the created tables; sweeping the others", exc_info=True)
        names = [*session.catalog.tables, *session.catalog.created, cells.TOKENS]
    for name in names:
        try:
            place = await lock_tables.place(session, name)
            if place is None:
                continue
            tokens, stuck = await sweep_table(session, name, place.store)
        except Exception as error:  # noqa: BLE001 - the next pass tries again; serving goes on
            if not (isinstance(error, ServeError) and error.name == "ResourceNotFoundException"):
                log.warning("transaction sweep of %s failed; next pass in a while", name, exc_info=True)
            continue
        if stuck:
            log.info("transaction sweep of %s: %d row(s) still locked (a live transaction)", name, len(stuck))
        if tokens:
            log.debug("transaction sweep of %s: %d expired ClientRequestToken record(s) deleted", name, tokens)


async def sweep_forever(session: Session, seconds: float) -> None:
    """Sweep every `seconds` times a random 0.5-1.5 (workers drift apart), until cancelled."""
    while True:
        await asyncio.sleep(seconds * random.uniform(0.5, 1.5))  # noqa: S311 - jitter, not a secret
        await sweep_all(session)
        await ttl_sweep.sweep_all(session)  # expired items deleted for good with their stream records
