"""TransactWriteItems as a state machine (see resolve.py for the form; TransactGetItems is
snapshot.py's).

A write transaction (docs/transactions.md, "A transaction's steps"):
1. read every row (a lock met is settled; a live transaction's is waited for, a jittered
   Pause the driver answers within the request's deadline, then the row read again, and only
   past the deadline does the transaction answer TransactionConflict);
2. decide on what was read: the conditions, the intents (`decide`, pure);
3. prewrite the primary, then every secondary at once (Together), each with one
   CheckAndMutate that holds only while the row is exactly as read, so what was decided
   still holds while locked. The primary comes first: whoever meets a secondary's lock
   reads the primary, and a primary without the lock means the transaction is over;
4. commit: one CheckAndMutate on the primary, prepared -> committed with its intent applied.
   This is the commit point: before it the transaction is aborted by anyone who finds it
   expired, after it rolled forward by anyone who finds it;
5. answer (Answer): the outcome is decided, so the caller is answered here, and the rest
   runs behind the answer: 6. apply every secondary's intent and remove its lock, at once;
   7. remove the primary's lock, last.
A transaction whose rows are one row needs none of it: one CheckAndMutate (WriteIfUnchanged).

Under a ClientRequestToken the primary is the token's row, which no action names (only
checked, no intent) and which is empty but for a retry: the first attempt (`presuming`)
prewrites it, presumed empty, at the same time as it reads the other rows (FIRST), so
steps 1 and 3 are one round trip. The lock it takes does not depend on what is read, and
no other row is locked before the decision, so the primary is still locked first. A
decision to write nothing, or a row read that holds a lock, releases the primary
(WITHDRAW) before going on as without the guess.

A cancellation (a condition that does not hold) reads every row a second time: the rows
unchanged and unlocked in both reads were all so at one moment between the two, when every
reason given held at once.
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
    Answer,
    Commit,
    Finished,
    Lock,
    LockState,
    Move,
    Pause,
    Prewrite,
    Read,
    Release,
    RowRef,
    Together,
    View,
    WriteIfUnchanged,
)


class Phase(StrEnum):
    """WriteTxn's phases (docs/transactions.md, "A transaction's steps")."""

    READ = "read"  # read every row, settling a lock met
    FIRST = "first"  # a token's first attempt: the primary prewritten, presumed empty, while the others are read
    WITHDRAW = "withdraw"  # FIRST's lock on the primary released: nothing to write, or a row read was locked
    VALIDATE = "validate"  # a cancellation: read every row again, to see both reads agree
    SINGLE = "single"  # one row: one WriteIfUnchanged
    PREWRITE = "prewrite"  # lock the primary
    SECONDARIES = "secondaries"  # then lock every secondary, at once
    COMMIT = "commit"  # the commit point, at the primary
    ANSWER = "answer"  # committed: the caller is answered, what follows runs behind the answer
    APPLY = "apply"  # every secondary's intent applied and its lock removed, at once
    CLEANUP = "cleanup"  # the primary's lock removed, last
    ABORT = "abort"  # a prewrite failed: the rows it locked (`held`) released at once, then a new attempt
    PAUSE = "pause"  # a row read is held by a live transaction: wait (Pause), then read that row again
    UNWIND = "unwind"  # the commit failed (aborted by another): the secondaries released, at once
    END = "end"  # `decision` holds how it finished


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
    held: tuple[int, ...] = ()  # the rows an aborted attempt locked (indexes into `rows`)
    pauses: int = 0  # pauses so far, waiting for live transactions on the rows read
    # a live lock on the primary, or of a transaction with the same primary, is answered at
    # once, on the primary (a ClientRequestToken's row, held by the request's twin:
    # TransactionInProgressException, as DynamoDB answers it)
    primary_at_once: bool = False
    # the phase after each one (READ: after deciding to write): prewrite the primary, the
    # secondaries, commit, answer, apply (the model checker's broken variants reorder them,
    # and must be caught)
    NEXT = {Phase.READ: Phase.PREWRITE, Phase.PREWRITE: Phase.SECONDARIES,  # noqa: RUF012 - read only
            Phase.SECONDARIES: Phase.COMMIT, Phase.COMMIT: Phase.ANSWER, Phase.ANSWER: Phase.APPLY,
            Phase.APPLY: Phase.CLEANUP}

    def lock(self, i: int, state: LockState = PREPARED) -> Lock:
        assert isinstance(self.decision, Intents)
        return Lock(f"{self.txn}.{self.attempt}", self.rows[0], state, self.expires_micros, self.decision.changes[i],
                    self.rows[1:] if i == 0 else ())

    def presuming(self, primary: View) -> WriteTxn:
        """The first attempt with `primary` as its primary's read, not read (a ClientRequestToken's
        row, presumed empty: items/transact_ops.py), and prewritten at once, while the other
        rows are read (FIRST). Safe whatever the row holds: the prewrite holds only while the
        row is exactly `primary`, and the decision is acted on only once it held; otherwise
        nothing was locked and the next attempt reads every row. That attempt is one more try,
        so a wrong guess costs none of the others. The primary must be a row no action
        writes (its intent None), as a token's row is: its lock is taken before the decision."""
        return replace(self, pc=Phase.FIRST, views=(primary,), tries=self.tries + 1)

    def _first_lock(self) -> Lock:
        """The primary's lock as FIRST takes it, before any decision (a token's row: no intent)."""
        return Lock(f"{self.txn}.{self.attempt}", self.rows[0], PREPARED, self.expires_micros, None, self.rows[1:])

    def step(self) -> Move | Finished:  # noqa: C901, PLR0911 - one branch per phase
        pc, i = self.pc, self.i
        if self.sub is not None:
            return self.sub.step()
        if pc in (Phase.READ, Phase.VALIDATE):
            return Read(self.rows[i])
        if pc == Phase.END:
            assert isinstance(self.decision, Finished)
            return self.decision
        if pc == Phase.PAUSE:
            return Pause(self.pauses)
        if pc == Phase.FIRST:
            return Together((Prewrite(self.views[0], self._first_lock()), *(Read(row) for row in self.rows[1:])))
        if pc == Phase.WITHDRAW:
            return Release(self.rows[0], self._first_lock(), apply=False)
        decision = self.decision
        assert isinstance(decision, Intents)
        if pc == Phase.SINGLE:
            return WriteIfUnchanged(self.views[0], decision.changes[0], decision.record)
        if pc == Phase.PREWRITE:
            return Prewrite(self.views[0], self.lock(0))
        if pc == Phase.SECONDARIES:
            return Together(tuple(Prewrite(self.views[j], self.lock(j)) for j in self._secondaries))
        if pc == Phase.COMMIT:
            return Commit(self.rows[0], self.lock(0), decision.record)
        if pc == Phase.ANSWER:
            return Answer(Finished("committed", self._answer), self.rows)
        if pc == Phase.CLEANUP:
            return Release(self.rows[0], self.lock(0).committed(), apply=False)
        # apply (intent and lock), abort (lock only, the rows locked), unwind (secondaries only)
        released = self.held if pc == Phase.ABORT else self._secondaries
        return Together(tuple(Release(self.rows[j], self.lock(j), apply=pc == Phase.APPLY) for j in released))

    @property
    def _secondaries(self) -> range:
        return range(1, len(self.rows))

    def after(self, result: Any) -> WriteTxn:  # noqa: C901, PLR0911, PLR0912 - one branch per phase
        pc, i, n = self.pc, self.i, len(self.rows)
        if self.sub is not None:
            return self._settling(result)
        if pc == Phase.FIRST:
            return self._first(result[0], (self.views[0], *result[1:]))
        if pc == Phase.WITHDRAW:  # (a lock already gone was aborted by another worker: as good)
            if self.decision is None:  # a row read was locked: every row read again, the lock settled
                return self._again()
            return replace(self, pc=Phase.VALIDATE, i=0) if isinstance(self.decision, Cancel) else replace(
                self, pc=Phase.END)
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
        if pc == Phase.PREWRITE:  # not locked: the row changed since read, nothing of this attempt is left
            return self._phase(pc) if result else replace(self, blocked=self.rows[0])._again()
        if pc == Phase.SECONDARIES:
            locked = tuple(j for j, done in zip(self._secondaries, result, strict=True) if done)
            if len(locked) == n - 1:
                return self._phase(pc)
            stopped = next(j for j in self._secondaries if j not in locked)  # released at once, then again
            return replace(self, pc=Phase.ABORT, held=(0, *locked), blocked=self.rows[stopped])
        if pc == Phase.COMMIT:  # not committed: another worker found the lock expired and aborted it
            # (named on its first secondary: a token's row, the primary, would read as in flight)
            return self._phase(pc) if result else replace(self, pc=Phase.UNWIND, blocked=self.rows[1])
        if pc in (Phase.ANSWER, Phase.APPLY):  # (a lock already gone was settled by another worker)
            return self._phase(pc)
        if pc == Phase.ABORT:
            return self._again()
        if pc == Phase.PAUSE:  # time for another read of the row, or the request's deadline has come
            return replace(self, pc=Phase.READ, pauses=self.pauses + 1) if result else \
                self._end(Finished(CONFLICT.kind, self.blocked))
        if pc == Phase.UNWIND:
            return self._end(Finished(CONFLICT.kind, self.blocked))
        assert pc == Phase.CLEANUP
        return self._end(Finished("committed", self._answer))

    @property
    def _answer(self) -> Any:
        """What the decision answers (an Intents' commit, a Cancel's reasons)."""
        assert isinstance(self.decision, Intents | Cancel)
        return self.decision.answer

    def _phase(self, done: Phase) -> WriteTxn:
        return replace(self, pc=self.NEXT[done])

    def _first(self, locked: bool, views: tuple[View, ...]) -> WriteTxn:
        """FIRST answered: the primary locked or not, the other rows as read."""
        if not locked:  # the primary is not as presumed (a retry's record, a twin's lock): nothing is locked
            return replace(self, blocked=self.rows[0])._again()
        met = next((v.row for v in views if v.lock is not None), None)
        if met is not None:
            return replace(self, pc=Phase.WITHDRAW, blocked=met, views=views)
        decision = self.decide(views)
        if not isinstance(decision, Intents):  # nothing to write: the primary released first
            return replace(self, views=views, decision=decision, pc=Phase.WITHDRAW)
        assert decision.changes[0] is None, "the primary presumed is only checked (a token's row)"
        return replace(self, views=views, decision=decision, pc=self.NEXT[Phase.PREWRITE], i=0)

    def _decided(self, views: tuple[View, ...]) -> WriteTxn:
        decision = self.decide(views)
        if isinstance(decision, Finished):
            return replace(self, views=views, decision=decision, pc=Phase.END)
        if isinstance(decision, Cancel):
            return replace(self, views=views, decision=decision, pc=Phase.VALIDATE, i=0)
        first = Phase.SINGLE if len(self.rows) == 1 else self.NEXT[Phase.READ]
        return replace(self, views=views, decision=decision, pc=first, i=0)

    def _settling(self, result: Any) -> WriteTxn:
        assert self.sub is not None
        ended = self.sub.advanced(result)
        if isinstance(ended, Resolve):
            return replace(self, sub=ended)
        if ended == CONFLICT and self.primary_at_once and self.rows[0] in (self.blocked, self.sub.met.primary):
            return self._end(Finished(CONFLICT.kind, self.rows[0]))  # the twin holds the primary: at once
        if ended == CONFLICT:
            return replace(self, sub=None, pc=Phase.PAUSE)  # a live transaction: wait for it, then read again
        if ended != SETTLED or self.tries <= 1:
            return self._end(Finished(CONFLICT.kind, self.blocked))
        return replace(self, sub=None, tries=self.tries - 1)  # read the row again

    def _again(self) -> WriteTxn:
        """A fresh attempt (a new lock id) from the reads, or CONFLICT on the row that stopped
        this one when out of tries."""
        if self.tries <= 1:
            return self._end(Finished(CONFLICT.kind, self.blocked))
        return replace(self, pc=Phase.READ, i=0, views=(), decision=None, attempt=self.attempt + 1,
                       tries=self.tries - 1, held=())

    def _end(self, finished: Finished) -> WriteTxn:
        return replace(self, pc=Phase.END, decision=finished, sub=None)
