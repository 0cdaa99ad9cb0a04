"""TransactWriteItems and TransactGetItems as state machines (see resolve.py for the form).

A write transaction (docs/transactions.md, "A transaction's steps"):
1. read every row (a lock met is settled, or the transaction answers TransactionConflict);
2. decide on what was read: the conditions, the intents (`decide`, pure);
3. prewrite: lock the primary, then each secondary, each with one CheckAndMutate that holds
   only while the row is exactly as read, so what was decided still holds while locked;
4. commit: one CheckAndMutate on the primary, prepared -> committed with its intent applied.
   This is the commit point: before it the transaction is aborted by anyone who finds it
   expired, after it rolled forward by anyone who finds it;
5. apply each secondary's intent and remove its lock; 6. remove the primary's lock, last.
A transaction whose rows are one row needs none of it: one CheckAndMutate (WriteIfUnchanged).

A cancellation (a condition that does not hold) reads every row a second time: the rows
unchanged and unlocked in both reads were all so at one moment between the two, when every
reason given held at once. TransactGetItems answers the same way: two reads that agree.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

from .resolve import SETTLED, TRIES, Resolve
from .steps import (
    CONFLICT,
    PREPARED,
    Commit,
    Finished,
    Lock,
    LockState,
    Prewrite,
    Read,
    Release,
    RowRef,
    Step,
    View,
    WriteIfUnchanged,
)


class Phase(StrEnum):
    """WriteTxn's phases (docs/transactions.md, "A transaction's steps")."""

    READ = "read"  # read every row, settling a lock met
    VALIDATE = "validate"  # a cancellation: read every row again, to see both reads agree
    SINGLE = "single"  # one row: one WriteIfUnchanged
    PREWRITE = "prewrite"  # lock the primary, then each secondary
    COMMIT = "commit"  # the commit point, at the primary
    APPLY = "apply"  # each secondary's intent applied, its lock removed
    CLEANUP = "cleanup"  # the primary's lock removed, last
    ABORT = "abort"  # a prewrite failed: the rows locked so far released, then a new attempt
    UNWIND = "unwind"  # the commit failed (aborted by another): the secondaries released
    END = "end"  # `decision` holds how it finished


class Snapshot(StrEnum):
    """SnapshotRead's phases."""

    FIRST = "first"  # the first read of every row
    SECOND = "second"  # the second
    READ = "read"  # both agreed: the rows as they were
    CONFLICT = "conflict"  # a live transaction, or rows that kept changing


@dataclass(frozen=True)
class Intents:
    """The transaction may commit: each row's intent (None: only checked), in `rows` order,
    the answer it gives when committed and the record written with the commit."""

    changes: tuple[Any, ...]
    answer: Any = None
    record: Any = None


@dataclass(frozen=True)
class Cancel:
    """A condition failed: the cancellation reasons, valid only once both reads agree."""

    answer: Any


Decision = Intents | Cancel | Finished  # Finished: answered with no write (a ClientRequestToken's retry)


@dataclass(frozen=True)
class WriteTxn:
    """One TransactWriteItems over `rows` (the first is the primary); `decide(views)` turns the
    rows as read into a Decision. Ends committed (answer), cancelled (reasons), answered, or
    CONFLICT with the row in conflict as its value."""

    txn: str
    rows: tuple[RowRef, ...]
    decide: Callable[[tuple[View, ...]], Decision]
    expires_micros: int = 0
    pc: Phase = Phase.READ
    i: int = 0
    views: tuple[View, ...] = ()
    decision: Decision | None = None
    sub: Resolve | None = None
    attempt: int = 0
    tries: int = TRIES
    blocked: RowRef | None = None  # the row that last stopped an attempt: a CONFLICT names it
    # the phase after each one: prewrite, commit, then apply (the model checker's broken
    # variant reorders them, and must be caught)
    NEXT = {Phase.PREWRITE: Phase.COMMIT, Phase.COMMIT: Phase.APPLY, Phase.APPLY: Phase.CLEANUP}  # noqa: RUF012 - read only

    def lock(self, i: int, state: LockState = PREPARED) -> Lock:
        assert isinstance(self.decision, Intents)
        return Lock(f"{self.txn}.{self.attempt}", self.rows[0], state, self.expires_micros, self.decision.changes[i],
                    self.rows[1:] if i == 0 else ())

    def step(self) -> Step | Finished:  # noqa: PLR0911 - one branch per phase
        pc, i = self.pc, self.i
        if self.sub is not None:
            return self.sub.step()
        if pc in (Phase.READ, Phase.VALIDATE):
            return Read(self.rows[i])
        if pc == Phase.END:
            assert isinstance(self.decision, Finished)
            return self.decision
        decision = self.decision
        assert isinstance(decision, Intents)
        if pc == Phase.SINGLE:
            return WriteIfUnchanged(self.views[0], decision.changes[0], decision.record)
        if pc == Phase.PREWRITE:
            return Prewrite(self.views[i], self.lock(i))
        if pc == Phase.COMMIT:
            return Commit(self.rows[0], self.lock(0), decision.record)
        if pc == Phase.CLEANUP:
            return Release(self.rows[0], self.lock(0).committed(), apply=False)
        # apply (intent and lock), abort (lock only, every row prewritten), unwind (secondaries only)
        return Release(self.rows[i], self.lock(i), apply=pc == Phase.APPLY)

    def after(self, result: Any) -> WriteTxn:  # noqa: C901, PLR0911 - one branch per phase
        pc, i, n = self.pc, self.i, len(self.rows)
        if self.sub is not None:
            return self._settling(result)
        if pc == Phase.READ:
            if result.lock is not None:
                return replace(self, sub=Resolve.of(result), blocked=self.rows[i])
            views = (*self.views, result)
            return replace(self, views=views, i=i + 1) if i + 1 < n else self._decided(views)
        if pc == Phase.VALIDATE:
            if result != self.views[i]:
                return replace(self, blocked=self.rows[i])._again()
            return replace(self, i=i + 1) if i + 1 < n else self._end(Finished("cancelled", self._answer))
        if pc == Phase.SINGLE:
            if not result:
                return replace(self, blocked=self.rows[0])._again()
            return self._end(Finished("committed", self._answer))
        if pc == Phase.PREWRITE:
            if not result:  # the row changed since read: nothing of this attempt is left once aborted
                stopped = replace(self, blocked=self.rows[i])
                return replace(stopped, pc=Phase.ABORT, i=0, views=self.views[:i]) if i else stopped._again()
            return replace(self, i=i + 1) if i + 1 < n else self._phase(Phase.PREWRITE)
        if pc == Phase.COMMIT:  # not committed: another worker found the lock expired and aborted it
            # (named on its first secondary: a token's row, the primary, would read as in flight)
            return self._phase(Phase.COMMIT) if result else replace(self, pc=Phase.UNWIND, i=1, blocked=self.rows[1])
        if pc in (Phase.APPLY, Phase.ABORT, Phase.UNWIND):  # a lock already gone was settled by another worker
            last = len(self.views) if pc == Phase.ABORT else n
            if i + 1 < last:
                return replace(self, i=i + 1)
            if pc == Phase.APPLY:
                return self._phase(Phase.APPLY)
            return self._again() if pc == Phase.ABORT else self._end(Finished(CONFLICT.kind, self.blocked))
        assert pc == Phase.CLEANUP
        return self._end(Finished("committed", self._answer))

    @property
    def _answer(self) -> Any:
        """What the decision answers (an Intents' commit, a Cancel's reasons)."""
        assert isinstance(self.decision, Intents | Cancel)
        return self.decision.answer

    def _phase(self, done: Phase) -> WriteTxn:
        following = self.NEXT[done]
        return replace(self, pc=following, i=1 if following == Phase.APPLY else 0)

    def _decided(self, views: tuple[View, ...]) -> WriteTxn:
        decision = self.decide(views)
        if isinstance(decision, Finished):
            return replace(self, views=views, decision=decision, pc=Phase.END)
        if isinstance(decision, Cancel):
            return replace(self, views=views, decision=decision, pc=Phase.VALIDATE, i=0)
        first = Phase.SINGLE if len(self.rows) == 1 else Phase.PREWRITE
        return replace(self, views=views, decision=decision, pc=first, i=0)

    def _settling(self, result: Any) -> WriteTxn:
        assert self.sub is not None
        ended = self.sub.advanced(result)
        if isinstance(ended, Resolve):
            return replace(self, sub=ended)
        if ended != SETTLED or self.tries <= 1:
            return self._end(Finished(CONFLICT.kind, self.blocked))
        return replace(self, sub=None, tries=self.tries - 1)  # read the row again

    def _again(self) -> WriteTxn:
        """A fresh attempt (a new lock id) from the reads, or CONFLICT on the row that stopped
        this one when out of tries."""
        if self.tries <= 1:
            return self._end(Finished(CONFLICT.kind, self.blocked))
        return replace(self, pc=Phase.READ, i=0, views=(), decision=None, attempt=self.attempt + 1,
                       tries=self.tries - 1)

    def _end(self, finished: Finished) -> WriteTxn:
        return replace(self, pc=Phase.END, decision=finished, sub=None)


@dataclass(frozen=True)
class SnapshotRead:
    """TransactGetItems: every row read twice; both reads equal and unlocked give the rows as
    they all were at one moment. Finished("read", data per row) or CONFLICT."""

    rows: tuple[RowRef, ...]
    pc: Snapshot = Snapshot.FIRST
    i: int = 0
    views: tuple[View, ...] = ()
    sub: Resolve | None = None
    tries: int = TRIES

    def step(self) -> Step | Finished:
        if self.sub is not None:
            return self.sub.step()
        if self.pc == Snapshot.READ:
            return Finished("read", tuple(v.data for v in self.views))
        if self.pc == Snapshot.CONFLICT:
            return Finished(CONFLICT.kind, self.rows[self.i])
        return Read(self.rows[self.i])

    def ahead(self) -> tuple[RowRef, ...]:
        """The rows read next with nothing written between (a pass's start): the driver may
        read them all at once, each row atomically, in any order (driver.run)."""
        starting = self.i == 0 and self.sub is None and self.pc in (Snapshot.FIRST, Snapshot.SECOND)
        return self.rows if starting else ()

    def after(self, result: Any) -> SnapshotRead:
        n = len(self.rows)
        if self.sub is not None:
            ended = self.sub.advanced(result)
            if isinstance(ended, Resolve):
                return replace(self, sub=ended)
            again = ended == SETTLED and self.tries > 1
            return replace(self, sub=None, pc=Snapshot.FIRST if again else Snapshot.CONFLICT, tries=self.tries - 1)
        if self.pc == Snapshot.FIRST:
            if result.lock is not None:
                return replace(self, sub=Resolve.of(result))
            views = (*self.views, result)
            if self.i + 1 < n:
                return replace(self, views=views, i=self.i + 1)
            return replace(self, views=views, pc=Snapshot.SECOND if n > 1 else Snapshot.READ, i=0)
        if result != self.views[self.i]:  # changed between the two reads: read both again
            return replace(self, pc=Snapshot.FIRST, i=0, views=(), tries=self.tries - 1) if self.tries > 1 \
                else replace(self, pc=Snapshot.CONFLICT)
        return replace(self, i=self.i + 1) if self.i + 1 < n else replace(self, pc=Snapshot.READ)
