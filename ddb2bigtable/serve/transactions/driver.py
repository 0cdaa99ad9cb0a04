"""The protocol's steps performed on Bigtable, and the loop that runs a machine to its end.

Each step is one call through the table's transactional (single-cluster) app profile:
Read is a ReadRow (the lock's cells come with the data), every other step a
CheckAndMutateRow whose predicate is the step's condition (steps.py). A row is
(table name, row key), the name a DynamoDB table's or the token table's (cells.TOKENS);
`where` finds any such table, whichever request met the lock, so a lock is settled from
wherever its primary and secondaries live. A table that is gone (a created table deleted
since) holds no row: read, it is empty and unlocked; written, nothing happens.

Steps a machine asks for Together are sent side by side: reads as one ReadRows per table
(each row read atomically, in whatever order, as the model checker explores them), writes
each its own call at once. Rows a caller reads before the machine runs (`prefetch`) answer
its first Reads. Settling a lock is different: the primary must be read after the locked
row, and the locked row again after the primary (resolve.py), so a lock met drops what was
prefetched and every read from there on is a fresh one, as is every read after a write.
A machine's Answer returns from `run` at once, its remaining steps run behind (behind.py).

A single-item write that lost its row to another writer asks the clock (Pause) before it
tries again: the driver waits a jittered exponential pause ("full jitter": AWS Architecture
Blog, "Exponential Backoff And Jitter",
https://aws.amazon.com/blogs/architecture/exponential-backoff-and-jitter/, read 2026-11-29)
and answers whether the request's deadline (`until`) leaves room for another try; only
then does the SDK see ProvisionedThroughputExceeded and retry (items/hot_rows.py).
"""

from __future__ import annotations

import asyncio
import random
import time
import weakref
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ..store import WRITE_SECONDS, Store, bigtable_errors
from . import behind, cells
from .steps import (
    Answer,
    Commit,
    Expired,
    Finished,
    Pause,
    Prewrite,
    Read,
    Release,
    RowRef,
    Step,
    Together,
    Uncommitted,
    View,
    WriteIfUnchanged,
    WriteIfUnlocked,
)

LOCK_SECONDS = 10.0  # a lock's life: far above a transaction's few round trips, short for one that crashed
WRITE_BUDGET = 10.0  # seconds one write may spend waiting its turn and trying; the SDK's read timeout is 60 s
FIRST_PAUSE = 0.002  # seconds: about one CheckAndMutateRow on a nearby cluster
LONGEST_PAUSE = 0.2


def expiry_micros(now_micros: int) -> int:
    return now_micros + int(LOCK_SECONDS * 1_000_000)


@dataclass(frozen=True)
class Place:
    """A table the protocol's rows live in: its store through the transactional profile, and
    the families an intent's whole-row delete deletes (never the reserved one)."""

    store: Store
    families: tuple[str, ...]


Where = Callable[[str], Awaitable[Place | None]]  # a table's name -> its place (None: the table is gone)

# event loop -> the ids of its transactions that prewrote a row and have not sent their commit
# (steps.Uncommitted): a worker's own memory, which its TransactGetItems read around
_OPEN: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, set[str]] = weakref.WeakKeyDictionary()


def _open() -> set[str]:
    return _OPEN.setdefault(asyncio.get_running_loop(), set())


class Rows:
    """Bigtable rows of any tables, through each one's transactional profile."""

    def __init__(self, where: Where, until: float | None = None):
        self.where = where
        self.until = time.monotonic() + WRITE_BUDGET if until is None else until  # the request's deadline
        self.places: dict[str, Place | None] = {}
        self.prefetched: dict[RowRef, View] = {}
        self._guarded: frozenset[RowRef] = frozenset()  # rows written only once `_ready` is done
        self._ready: Callable[[], Awaitable[None]] | None = None
        self._readied: asyncio.Future[None] | None = None
        self.opened: set[str] = set()  # the ids this machine's prewrites put in _OPEN

    def after_readers(self, rows: Iterable[RowRef], ready: Callable[[], Awaitable[None]]) -> None:
        """Commit on none of `rows` before `ready()` is done (a writer's turn in its worker, whose
        readers that came first may still be reading them: items/turns.py). Reads, prewrites
        and a commit on a row outside them (a token's) never wait: a reader that asked between
        its two reads whether this transaction had sent its commit (Uncommitted) reads around
        its locks. Nor do the applies behind the answer: a reader that came first may be
        waiting for them (behind.clear_of); one that reads a row applied since reads again."""
        self._guarded, self._ready = frozenset(rows), ready

    async def place(self, table: str) -> Place | None:
        if table not in self.places:
            self.places[table] = await self.where(table)
        return self.places[table]

    def seen(self, view: View) -> None:
        """A read of one row made before the machine runs: its first Read of the row is answered
        with it (the caller read the row with nothing written since)."""
        self.prefetched[view.row] = view

    async def prefetch(self, rows: list[RowRef]) -> list[View]:
        """Rows the machine will read next, each answering one Read: the views, in `rows` order,
        for a caller that looks at them before the machine runs."""
        views = await self.read(rows)
        self.prefetched.update((v.row, v) for v in views)
        return views

    async def read(self, rows: list[RowRef]) -> list[View]:
        """The rows, each read atomically, in any order: one ReadRows per table, side by side."""
        if not rows:
            return []
        await behind.clear_of(rows)
        by_table: dict[str, list[bytes]] = {}
        for table, key in map(cells.split_row, rows):
            by_table.setdefault(table, []).append(key)

        async def of(table: str, keys: list[bytes]) -> dict[bytes, Any]:
            place = await self.place(table)
            return await place.store.read_rows(keys, writer=True) if place is not None else {}

        found = dict(zip(by_table, await asyncio.gather(*(of(t, keys) for t, keys in by_table.items())), strict=True))
        return [cells.view_of(row, found[row[0]].get(row[1])) for row in map(cells.split_row, rows)]

    async def together(self, step: Together) -> tuple[Any, ...]:
        """Steps side by side: the reads as `read`, each write its own call, all at once."""
        self.prefetched.clear()  # nothing read before answers a Read sent at the same time as others
        reads = [s.row for s in step.steps if isinstance(s, Read)]
        writes = [s for s in step.steps if not isinstance(s, Read)]
        views, done = await asyncio.gather(self.read(reads), asyncio.gather(*(self.perform(s) for s in writes)))
        behind.wrote(s.row for s in writes if isinstance(s, Release))  # (a task behind an answer)
        viewed, wrote = iter(views), iter(done)
        return tuple(next(viewed) if isinstance(s, Read) else next(wrote) for s in step.steps)

    async def perform(self, step: Step | Together) -> Any:  # noqa: PLR0911 - one branch per step
        if isinstance(step, Together):
            return await self.together(step)
        if isinstance(step, Read):
            view = self.prefetched.pop(step.row, None)
            if view is None:
                await behind.clear_of([step.row])
                table, key = cells.split_row(step.row)
                place = await self.place(table)
                view = cells.view_of(step.row, await place.store.read_row(key, writer=True)
                                     if place is not None else None)
            if view.lock is not None:  # settling it reads other rows after this one: never from before
                self.prefetched.clear()
            return view
        if isinstance(step, Expired):
            return time.time() * 1_000_000 > step.lock.expires_micros
        if isinstance(step, Pause):
            return await self._pause(step.attempt)
        if isinstance(step, Uncommitted):
            return frozenset(_open())
        self.prefetched.clear()  # a write: later reads must see it
        if isinstance(step, Prewrite):  # (known as open before any of its locks can be read)
            _open().add(step.lock.txn)
            self.opened.add(step.lock.txn)
            return await self._if_unchanged(step.seen, cells.lock_cells(step.lock))
        if isinstance(step, WriteIfUnchanged):
            await self._readers_gone(step.seen.row)
            intent = await self.intent(step.seen.row, step.intent)
            return await self._if_unchanged(step.seen, intent + _record(step.record))
        if isinstance(step, WriteIfUnlocked):
            table, key = cells.split_row(step.row)
            return not await self._check(table, key, cells.holds_any_lock(), [],
                                         await self.intent(step.row, step.intent), absent=True)
        if isinstance(step, Commit):  # from here on it may have committed
            await self._readers_gone(step.row)  # (what runs behind an answer never waits: Release)
            _open().discard(step.lock.txn)
            done = [*await self.intent(step.row, step.lock.intent), *cells.lock_cells(step.lock.committed()),
                    *_record(step.record)]
            return await self._check(*cells.split_row(step.row), cells.holds_lock(step.lock), done, [])
        assert isinstance(step, Release)
        undo = (await self.intent(step.row, step.lock.intent) if step.apply else []) + cells.unlock_cells()
        return await self._check(*cells.split_row(step.row), cells.holds_lock(step.lock), undo, [])

    async def _readers_gone(self, row: RowRef) -> None:
        if self._ready is None or row not in self._guarded:
            return
        if self._readied is None:  # one wait, for every write of the rows
            self._readied = asyncio.ensure_future(self._ready())
        await self._readied

    async def intent(self, row: RowRef, intent: bytes | cells.Mutations | None) -> list[Any]:
        """The intent's mutations: a plain list as it is (made family by family already), a
        packed one read back with its row delete made family by family."""
        if isinstance(intent, cells.Mutations):
            return intent.mutations
        place = await self.place(cells.split_row(row)[0])
        return cells.without_row_delete(cells.unpack_intent(intent), place.families if place is not None else ())

    async def _pause(self, attempt: int) -> bool:
        """A full-jitter pause before try `attempt + 1`; False, with no pause, when the deadline
        leaves no room for it."""
        pause = random.uniform(0, min(LONGEST_PAUSE, FIRST_PAUSE * 2 ** min(attempt + 1, 16)))  # noqa: S311 - jitter
        if pause >= self.until - time.monotonic():
            return False
        await asyncio.sleep(pause)
        return True

    async def _if_unchanged(self, seen: View, mutations: list[Any]) -> bool:
        table, key = cells.split_row(seen.row)
        place = await self.place(table)
        if place is None:  # a table that is gone: nothing is written
            return False
        if not seen.data:  # nothing was there: write only while nothing is (the false branch of a writer's view)
            return not await self._check(table, key, place.store.any_cell(), [], mutations, absent=True)
        return await self._check(table, key, place.store.unchanged(list(seen.data)), mutations, [])

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


async def run(machine: Any, rows: Rows) -> Finished:
    """Drive `machine` (steps.py's vocabulary) on Bigtable to its end, or to its Answer: then
    the answer is returned and the machine's remaining steps run behind it (behind.py)."""
    try:
        while not isinstance(step := machine.step(), Finished):
            if isinstance(step, Answer):
                behind.later(run(machine.after(None), rows), step.rows)
                return step.finished
            machine = machine.after(await rows.perform(step))
        return step
    finally:  # its attempts that did not commit never will: no longer this worker's to vouch for
        if rows.opened:
            _open().difference_update(rows.opened)
            rows.opened.clear()
