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
- a row whose data both reads saw the same, and every lock either read saw on it a
  prepared one of a transaction T of the reader's own worker that had not sent its commit
  when asked between the two reads (ASK, steps.Uncommitted: at that moment, M, T had not
  committed). T may have prewritten the row between the reads, or may commit, or abort,
  after M: the row's data is its value at M either way (T's commit changes a secondary's
  data only when applied, which the second read would see). A writer of the same worker
  prewrites and commits while the readers before it read, and applies after them
  (items/turns.py), so this is what a reader mostly finds.
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
    ASK = "ask"  # after the first read: the worker's transactions that have not sent their commit
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
    uncommitted: frozenset[str] = frozenset()  # ASK's answer: the worker's transactions uncommitted at M

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
            return Uncommitted()
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
        if self.pc == Snapshot.ASK:  # (M): the primaries of the other transactions' locks are read next
            done = replace(self, uncommitted=frozenset(result))
            return replace(done, pc=Snapshot.PRIMARIES if done._outside() else Snapshot.SECOND)
        changed = next((v.row for v, again in zip(self.views, result, strict=True)
                        if again != v and not self._open_only(v, again)), None)
        if changed is None:
            return replace(self, pc=Snapshot.READ)
        if self.tries > 1:  # changed between the two reads: read every row again
            return replace(self, pc=Snapshot.FIRST, views=(), tries=self.tries - 1)
        return replace(self, pc=Snapshot.PAUSE, blocked=changed)

    def _open_only(self, first: View, second: View) -> bool:
        """The two reads differ only by locks of the worker's transactions uncommitted at M
        (prewritten, released or committed since: none of it changes the row's data)."""
        return first.data == second.data and all(
            lock is None or (lock.known and lock.state == PREPARED and lock.txn in self.uncommitted)
            for lock in (first.lock, second.lock))

    def _first(self, views: tuple[View, ...]) -> SnapshotRead:
        by_row = {v.row: v for v in views}
        for view in views:
            lock = view.lock
            if lock is None:
                continue
            inside = by_row.get(lock.primary)
            if not lock.known or lock.state != PREPARED or (inside is not None and not _prepared(inside, lock.txn)):
                return replace(self, views=views)._settle(view)
        done = replace(self, views=views, uncommitted=frozenset())
        if any(v.lock is not None for v in views) or len(views) > 1:
            return replace(done, pc=Snapshot.ASK)
        return replace(done, pc=Snapshot.READ)  # one row, unlocked: its one read is a moment

    def _primaries(self, fates: dict[RowRef, View]) -> SnapshotRead:
        """The primaries outside the rows as read at M: each must hold its transaction prepared."""
        for view in self.views:
            lock = view.lock
            if lock is not None and lock.primary not in self.rows and lock.txn not in self.uncommitted and not \
                    _prepared(fates[lock.primary], lock.txn):
                return self._settle(view)  # committed, or over: settled at its fate, then read again
        return replace(self, pc=Snapshot.SECOND)

    def _outside(self) -> tuple[RowRef, ...]:
        """The primaries of the locks met that are not among the rows, each once, but the
        worker's own transactions' uncommitted at M."""
        return tuple(dict.fromkeys(v.lock.primary for v in self.views if v.lock is not None
                                   and v.lock.primary not in self.rows and v.lock.txn not in self.uncommitted))

    def _settle(self, view: View) -> SnapshotRead:
        return replace(self, sub=Resolve.of(view), blocked=view.row)


def _prepared(primary: View, txn: str) -> bool:
    """Whether the primary, as read, holds transaction `txn` prepared (not committed)."""
    return primary.lock is not None and primary.lock.txn == txn and primary.lock.state == PREPARED
