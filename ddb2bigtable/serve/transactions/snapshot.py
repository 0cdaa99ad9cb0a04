"""TransactGetItems as a state machine (see resolve.py for the form): every row read twice,
and the rows answered as they all were at one moment between the two reads
(docs/transactions.md, "TransactGetItems: one snapshot").

Each read of the rows is one Together (one ReadRows per table): each row atomically, in
any order. A row the two reads saw equal (every cell with its timestamp, and its lock)
held that content from its first read to its second, and every first read ended before
any second began, so at any moment M between the two rounds every row was as read. What
a row holds at M is the right answer when no transaction on it had committed without
being applied there:
- a row without a lock: every committed transaction on it is applied (a secondary keeps
  its lock until its intent is applied);
- a row locked by T, prepared, when T had not committed at M: its data is from before T,
  the value a read before T's commit point answers. T had not committed at M when T's
  primary is among the rows and held T prepared in both reads, or when the primary, read
  between the two rounds (the PRIMARIES round, at M), held T prepared. Such a row is read
  around, as Percolator's readers read the last committed version beneath a lock; the
  read is serialized before T, and T, committing after M, after it;
- a row the first read saw unlocked and the second locked by T, prepared, with the same
  data (T prewrote it between them), when the worker answers, after the second read, that
  T is its own and has not sent its commit (ASK, steps.Uncommitted): T had not committed
  at M either. A writer of the same worker prewrites while the readers before it read, and
  commits after them (items/turns.py), so this is what a reader mostly finds.
Any other lock (a committed primary, a primary without T's lock, a newer release's lock)
is settled as any reader settles it (resolve.py), and the rows are read again from the
start. A lock of a live transaction that cannot be read around, or rows that changed at
every one of the tries, make the reader wait (Pause, the driver's jittered pause within the
request's deadline) and try once more; CONFLICT only when the deadline has come.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

from .resolve import SETTLED, TRIES, Resolve
from .steps import CONFLICT, PREPARED, Finished, Move, Pause, Read, RowRef, Together, Uncommitted, View


class Snapshot(StrEnum):
    """SnapshotRead's phases."""

    FIRST = "first"  # the first read of every row
    PRIMARIES = "primaries"  # the primaries of the prepared locks met, outside the rows, read at M
    SECOND = "second"  # the second read of every row
    ASK = "ask"  # rows the second read found newly locked, data unchanged: were their transactions uncommitted?
    READ = "read"  # the reads agree: the rows as they were at M
    PAUSE = "pause"  # a lock not read around, or rows that kept changing: wait, then read every row again
    CONFLICT = "conflict"  # still so at the request's deadline


@dataclass(frozen=True)
class SnapshotRead:
    """TransactGetItems: Finished("read", data per row) or CONFLICT naming the row."""

    rows: tuple[RowRef, ...]
    pc: Snapshot = Snapshot.FIRST
    views: tuple[View, ...] = ()  # the first read of every row
    sub: Resolve | None = None  # settling the lock met on `blocked`
    blocked: RowRef | None = None
    tries: int = TRIES
    pauses: int = 0  # pauses so far (each followed by one more try)
    asked: frozenset[str] = frozenset()  # ASK: the transactions whose locks only the second read saw

    def step(self) -> Move | Finished:
        if self.sub is not None:
            return self.sub.step()
        if self.pc == Snapshot.READ:
            return Finished("read", tuple(v.data for v in self.views))
        if self.pc == Snapshot.CONFLICT:
            return Finished(CONFLICT.kind, self.blocked)
        if self.pc == Snapshot.PAUSE:
            return Pause(self.pauses)
        if self.pc == Snapshot.PRIMARIES:
            return Together(tuple(Read(p) for p in self._outside()))
        if self.pc == Snapshot.ASK:
            return Uncommitted(self.asked)
        return Together(tuple(Read(r) for r in self.rows))

    def after(self, result: Any) -> SnapshotRead:  # noqa: PLR0911 - one branch per phase
        if self.sub is not None:
            ended = self.sub.advanced(result)
            if isinstance(ended, Resolve):
                return replace(self, sub=ended)
            if ended == SETTLED and self.tries > 1:  # read every row again
                return replace(self, sub=None, pc=Snapshot.FIRST, views=(), tries=self.tries - 1)
            return replace(self, sub=None, pc=Snapshot.PAUSE)
        if self.pc == Snapshot.PAUSE:  # time for one more try, or the request's deadline has come
            return replace(self, pc=Snapshot.FIRST, views=(), tries=1, pauses=self.pauses + 1) if result else \
                replace(self, pc=Snapshot.CONFLICT)
        if self.pc == Snapshot.FIRST:
            return self._first(tuple(result))
        if self.pc == Snapshot.PRIMARIES:
            return self._primaries(dict(zip(self._outside(), result, strict=True)))
        if self.pc == Snapshot.ASK:  # every one uncommitted: each row as both reads saw its data
            return replace(self, pc=Snapshot.READ) if result >= self.asked else self._changed()
        changed = [(v, again) for v, again in zip(self.views, result, strict=True) if again != v]
        if not changed:
            return replace(self, pc=Snapshot.READ)
        blocked = replace(self, blocked=changed[0][0].row)
        if all(_newly_prepared(v, again) for v, again in changed):
            return replace(blocked, pc=Snapshot.ASK, asked=frozenset(again.lock.txn for _, again in changed
                                                                      if again.lock is not None))
        return blocked._changed()

    def _changed(self) -> SnapshotRead:
        """A row (`blocked`) changed between the two reads."""
        if self.tries > 1:  # changed between the two reads: read every row again
            return replace(self, pc=Snapshot.FIRST, views=(), tries=self.tries - 1, asked=frozenset())
        return replace(self, pc=Snapshot.PAUSE, asked=frozenset())

    def _first(self, views: tuple[View, ...]) -> SnapshotRead:
        by_row = {v.row: v for v in views}
        for view in views:
            lock = view.lock
            if lock is None:
                continue
            inside = by_row.get(lock.primary)
            if not lock.known or lock.state != PREPARED or (inside is not None and not _prepared(inside, lock.txn)):
                return replace(self, views=views)._settle(view)
        done = replace(self, views=views)
        if any(v.lock is not None for v in views) or len(views) > 1:
            return replace(done, pc=Snapshot.PRIMARIES if done._outside() else Snapshot.SECOND)
        return replace(done, pc=Snapshot.READ)  # one row, unlocked: its one read is a moment

    def _primaries(self, fates: dict[RowRef, View]) -> SnapshotRead:
        """The primaries outside the rows as read at M: each must hold its transaction prepared."""
        for view in self.views:
            lock = view.lock
            if lock is not None and lock.primary not in self.rows and not _prepared(fates[lock.primary], lock.txn):
                return self._settle(view)  # committed, or over: settled at its fate, then read again
        return replace(self, pc=Snapshot.SECOND)

    def _outside(self) -> tuple[RowRef, ...]:
        """The primaries of the locks met that are not among the rows, each once."""
        return tuple(dict.fromkeys(v.lock.primary for v in self.views
                                   if v.lock is not None and v.lock.primary not in self.rows))

    def _settle(self, view: View) -> SnapshotRead:
        return replace(self, sub=Resolve.of(view), blocked=view.row)


def _newly_prepared(first: View, second: View) -> bool:
    """The second read differs from the first only by a prepared lock the first did not see (a
    transaction prewrote the row between them, which changes no data)."""
    lock = second.lock
    return (first.lock is None and lock is not None and lock.known and lock.state == PREPARED
            and first.data == second.data)


def _prepared(primary: View, txn: str) -> bool:
    """Whether the primary, as read, holds transaction `txn` prepared (not committed)."""
    return primary.lock is not None and primary.lock.txn == txn and primary.lock.state == PREPARED
