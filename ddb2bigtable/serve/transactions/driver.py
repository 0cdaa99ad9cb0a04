"""The protocol's steps performed on Bigtable, and the loop that runs a machine to its end.

Each step is one call through the table's transactional (single-cluster) app profile:
Read is a ReadRow (the lock's cells come with the data), every other step a
CheckAndMutateRow whose predicate is the step's condition (steps.py). A row is
(table name, row key), the name a DynamoDB table's or the token table's (cells.TOKENS);
`where` finds any such table, whichever request met the lock, so a lock is settled from
wherever its primary and secondaries live. A table that is gone (a created table deleted
since) holds no row: read, it is empty and unlocked; written, nothing happens.

Reads that the machine asks for one after another with nothing written between them are
one ReadRows for all (`prefetch`): each row read atomically, in whatever order, which is
what the machine's reads of a round assume (the model checker reads them one by one).
Settling a lock is different: the primary must be read after the locked row, and the
locked row again after the primary (resolve.py), so a lock met drops what was prefetched
and every read from there on is a fresh one, as is every read after a write.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from ..store import WRITE_SECONDS, WRITER_VIEW, Store, bigtable_errors, unchanged_filter
from . import cells
from .steps import (
    Commit,
    Expired,
    Finished,
    Prewrite,
    Read,
    Release,
    RowRef,
    Step,
    View,
    WriteIfUnchanged,
    WriteIfUnlocked,
)

LOCK_SECONDS = 10.0  # a lock's life: far above a transaction's few round trips, short for one that crashed


def expiry_micros(now_micros: int) -> int:
    return now_micros + int(LOCK_SECONDS * 1_000_000)


@dataclass(frozen=True)
class Place:
    """A table the protocol's rows live in: its store through the transactional profile, and
    the families an intent's whole-row delete deletes (never the reserved one)."""

    store: Store
    families: tuple[str, ...]


Where = Callable[[str], Awaitable[Place | None]]  # a table's name -> its place (None: the table is gone)


class Rows:
    """Bigtable rows of any tables, through each one's transactional profile."""

    def __init__(self, where: Where):
        self.where = where
        self.places: dict[str, Place | None] = {}
        self.prefetched: dict[RowRef, View] = {}

    async def place(self, table: str) -> Place | None:
        if table not in self.places:
            self.places[table] = await self.where(table)
        return self.places[table]

    def seen(self, view: View) -> None:
        """A read of one row made before the machine runs: its first Read of the row is answered
        with it (the caller read the row with nothing written since)."""
        self.prefetched[view.row] = view

    async def prefetch(self, rows: list[RowRef]) -> list[View]:
        """One ReadRows per table for rows the machine will read next; each answers one Read.
        The views, in `rows` order, for a caller that looks at them before the machine runs."""
        by_table: dict[str, list[bytes]] = {}
        for table, key in map(cells.split_row, rows):
            by_table.setdefault(table, []).append(key)
        for table, keys in by_table.items():
            place = await self.place(table)
            found = await place.store.read_rows(keys, writer=True) if place is not None else {}
            for key in keys:
                self.prefetched[(table, key)] = cells.view_of((table, key), found.get(key))
        return [self.prefetched[row] for row in rows]

    async def perform(self, step: Step) -> Any:  # noqa: PLR0911 - one branch per step
        if isinstance(step, Read):
            view = self.prefetched.pop(step.row, None)
            if view is None:
                table, key = cells.split_row(step.row)
                place = await self.place(table)
                view = cells.view_of(step.row, await place.store.read_row(key, writer=True)
                                     if place is not None else None)
            if view.lock is not None:  # settling it reads other rows after this one: never from before
                self.prefetched.clear()
            return view
        if isinstance(step, Expired):
            return time.time() * 1_000_000 > step.lock.expires_micros
        self.prefetched.clear()  # a write: later reads must see it
        if isinstance(step, Prewrite):
            return await self._if_unchanged(step.seen, cells.lock_cells(step.lock))
        if isinstance(step, WriteIfUnchanged):
            intent = await self.intent(step.seen.row, step.intent)
            return await self._if_unchanged(step.seen, intent + _record(step.record))
        if isinstance(step, WriteIfUnlocked):
            table, key = cells.split_row(step.row)
            return not await self._check(table, key, cells.holds_any_lock(), [],
                                         await self.intent(step.row, step.intent), absent=True)
        if isinstance(step, Commit):
            done = [*await self.intent(step.row, step.lock.intent), *cells.lock_cells(step.lock.committed()),
                    *_record(step.record)]
            return await self._check(*cells.split_row(step.row), cells.holds_lock(step.lock), done, [])
        assert isinstance(step, Release)
        undo = (await self.intent(step.row, step.lock.intent) if step.apply else []) + cells.unlock_cells()
        return await self._check(*cells.split_row(step.row), cells.holds_lock(step.lock), undo, [])

    async def intent(self, row: RowRef, packed: bytes | None) -> list[Any]:
        place = await self.place(cells.split_row(row)[0])
        return cells.without_row_delete(cells.unpack_intent(packed), place.families if place is not None else ())

    async def _if_unchanged(self, seen: View, mutations: list[Any]) -> bool:
        table, key = cells.split_row(seen.row)
        if not seen.data:  # nothing was there: write only while nothing is (the false branch of the view)
            return not await self._check(table, key, WRITER_VIEW, [], mutations, absent=True)
        return await self._check(table, key, unchanged_filter(list(seen.data)), mutations, [])

    async def _check(self, table: str, key: bytes, predicate: Any, true_case: list[Any], false_case: list[Any],
                     *, absent: bool = False) -> bool:
        """The CheckAndMutateRow: whether the predicate matched. In a table that is gone nothing
        is written, and `absent` is the answer that says so to the caller."""
        place = await self.place(table)
        if place is None:
            return absent
        store = place.store
        async with bigtable_errors(store.name):
            return bool(await store.handle.check_and_mutate_row(
                key, predicate, true_case_mutations=true_case or None, false_case_mutations=false_case or None,
                operation_timeout=WRITE_SECONDS))


def _record(record: Any) -> list[Any]:
    return list(record or [])


@runtime_checkable
class ReadsAhead(Protocol):
    """A machine that says which rows it reads next with nothing written between (writer.SnapshotRead)."""

    def ahead(self) -> tuple[RowRef, ...]: ...


async def run(machine: Any, rows: Rows) -> Finished:
    """Drive `machine` (steps.py's vocabulary) on Bigtable to its end; the rows a machine
    reads ahead (ReadsAhead) are read with one ReadRows per table, when nothing read before
    is waiting."""
    while not isinstance(step := machine.step(), Finished):
        if not rows.prefetched and isinstance(machine, ReadsAhead) and (wanted := machine.ahead()):
            await rows.prefetch(list(wanted))
        machine = machine.after(await rows.perform(step))
    return step

