"""Meeting a lock: settling it, and the plain reads and writes that meet one.

Every machine here is a frozen dataclass with two pure methods: `step()`, the next
single-row operation to perform (steps.py) or how it `Finished`, and `after(result)`, the
machine once that operation answered. A driver (driver.py on Bigtable, the model checker
in tests) performs the steps; the machines decide everything else.

Who decides a transaction's fate is its primary row (docs/transactions.md, "Fate"):
- the primary's lock committed: the transaction committed; a secondary still locked is
  rolled forward (its intent applied, its lock removed);
- the primary's lock prepared and not expired: the transaction is alive; the one who met it
  answers TransactionConflict (DynamoDB's answer to a write meeting a transaction);
- prepared and expired: whoever meets it aborts it at the primary (one CheckAndMutate, so
  the owner's commit and this abort cannot both succeed), then removes the secondaries';
- the primary without this transaction's lock: aborted, or committed and finished. Which one
  is told by reading the secondary again: a committed transaction removes its primary's lock
  only after every secondary's, so a secondary still locked means aborted.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

from .steps import (
    COMMITTED,
    CONFLICT,
    GAVE_UP,
    Expired,
    Finished,
    Lock,
    Pause,
    Read,
    Release,
    RowRef,
    Step,
    View,
    WriteIfUnchanged,
    WriteIfUnlocked,
)

SETTLED = Finished("settled")
TRIES = 3  # reads of a row that keeps changing under a resolver, reader or writer before it gives up


class Settling(StrEnum):
    """Resolve's phases."""

    PRIMARY = "primary"  # read the primary
    RECHECK = "recheck"  # the primary holds no lock of the transaction: read the met row again
    NEWER = "newer"  # a newer release's lock: read the row again, a conflict while it holds it
    ROLL = "roll"  # release the met row with its intent (the primary committed)
    UNLOCK = "unlock"  # release the met row without it (the transaction aborted)
    EXPIRED = "expired"  # ask whether the primary's prepared lock has expired
    ABORT = "abort"  # abort the transaction at its primary
    BACK = "back"  # read the next secondary, to remove its lock (aborted)
    FORWARD = "forward"  # read the next secondary, to roll it forward (committed)
    BACK_RELEASE = "back_release"  # remove that secondary's lock
    FORWARD_RELEASE = "forward_release"  # apply that secondary's intent and remove its lock
    CONFLICT = "conflict"  # the transaction is alive
    DONE = "done"  # settled


_RELEASING = {Settling.BACK: Settling.BACK_RELEASE, Settling.FORWARD: Settling.FORWARD_RELEASE}
_RELEASED = {release: walk for walk, release in _RELEASING.items()}


class Reading(StrEnum):
    """ReadItem's phases."""

    READ = "read"  # read the row
    PRIMARY = "primary"  # a secondary: read its primary
    RECHECK = "recheck"  # the primary holds no lock of the transaction: read the row again
    ROLL = "roll"  # the primary committed: roll the row forward, then read it again
    DONE = "done"  # answer the data as read
    GAVE_UP = "gave_up"  # the row kept changing


class Writing(StrEnum):
    """SingleWrite's phases."""

    READ = "read"
    WRITE = "write"
    PAUSE = "pause"  # lost the row to another writer, or settled a lock: ask for time to try again
    GAVE_UP = "gave_up"  # no time left
    END = "end"


@dataclass(frozen=True)
class Resolve:
    """Settle the lock `met` found on `row`: SETTLED (the row no longer holds it, or the
    caller's next read will find it gone) or CONFLICT (its transaction is alive)."""

    row: RowRef
    met: Lock
    pc: Settling
    fate: Lock | None = None  # the primary's lock of this transaction, as last read
    todo: tuple[RowRef, ...] = ()  # secondaries still to settle at the primary's fate
    held: Lock | None = None  # the lock todo[0] holds, to remove
    tries: int = TRIES

    @staticmethod
    def of(view: View) -> Resolve:
        assert view.lock is not None
        start = Resolve(view.row, view.lock, Settling.PRIMARY)
        if not view.lock.known:  # a newer release's lock: met as a live one while it holds the row
            return replace(start, pc=Settling.NEWER)
        return start.at_primary(view.lock) if view.row == view.lock.primary else start

    def at_primary(self, lock: Lock | None) -> Resolve:
        """The primary holds `lock` (None: no lock of this transaction)."""
        if lock is None:
            return replace(self, pc=Settling.DONE if self.row == self.met.primary else Settling.RECHECK)
        if lock.state != COMMITTED:
            return replace(self, pc=Settling.EXPIRED, fate=lock)
        if self.row == self.met.primary:  # the whole transaction rolled forward, the primary last
            return replace(self, pc=Settling.FORWARD, fate=lock, todo=lock.secondaries)
        return replace(self, pc=Settling.ROLL, fate=lock)

    def step(self) -> Step | Finished:  # noqa: PLR0911 - one branch per state
        pc, met, fate = self.pc, self.met, self.fate
        if pc == Settling.PRIMARY:
            return Read(met.primary)
        if pc in (Settling.RECHECK, Settling.NEWER):
            return Read(self.row)
        if pc in (Settling.ROLL, Settling.UNLOCK):
            return Release(self.row, met, apply=pc == Settling.ROLL)
        if pc == Settling.CONFLICT:
            return CONFLICT
        if pc == Settling.DONE:
            return SETTLED
        assert fate is not None
        if pc == Settling.EXPIRED:
            return Expired(fate)
        if pc == Settling.ABORT:
            return Release(met.primary, fate, apply=False)
        if pc in _RELEASED:
            assert self.held is not None
            return Release(self.todo[0], self.held, apply=pc == Settling.FORWARD_RELEASE)
        if self.todo:  # back or forward: read the next secondary
            return Read(self.todo[0])
        return Release(met.primary, fate, apply=False) if pc == Settling.FORWARD else SETTLED

    def advanced(self, result: Any) -> Resolve | Finished:
        """The resolver once `result` answered its step, or how it finished (for the machines
        that run one inside)."""
        moved = self.after(result)
        ended = moved.step()
        return ended if isinstance(ended, Finished) else moved

    def after(self, result: Any) -> Resolve:  # noqa: PLR0911 - one branch per state
        pc, met = self.pc, self.met
        if pc == Settling.PRIMARY:
            return self.at_primary(_of_txn(result, met.txn))
        if pc == Settling.RECHECK:  # the primary had no lock of met.txn: aborted if this row still holds it
            return replace(self, pc=Settling.UNLOCK if _of_txn(result, met.txn) else Settling.DONE)
        if pc == Settling.NEWER:  # never settled by this release: a conflict while it holds the row
            return replace(self, pc=Settling.CONFLICT if _of_txn(result, met.txn) else Settling.DONE)
        if pc in (Settling.ROLL, Settling.UNLOCK):
            return replace(self, pc=Settling.DONE)
        if pc == Settling.EXPIRED:
            return replace(self, pc=Settling.ABORT if result else Settling.CONFLICT)
        if pc == Settling.ABORT:
            if result:  # aborted at the primary: every secondary's lock goes without its intent
                assert self.fate is not None
                return replace(self, pc=Settling.BACK, todo=self.fate.secondaries)
            # the owner committed, or another worker aborted it meanwhile: read the primary again
            if self.tries > 1:
                return replace(self, pc=Settling.PRIMARY, tries=self.tries - 1)
            return replace(self, pc=Settling.CONFLICT)
        if pc in _RELEASED:
            return replace(self, pc=_RELEASED[pc], todo=self.todo[1:], held=None)
        if not self.todo:  # the primary's committed lock removed, after every secondary's
            return replace(self, pc=Settling.DONE)
        held = _of_txn(result, met.txn)
        if held is None:
            return replace(self, todo=self.todo[1:])
        return replace(self, pc=_RELEASING[pc], held=held)


def _of_txn(view: View, txn: str) -> Lock | None:
    """The row's lock if it belongs to `txn`."""
    return view.lock if view.lock is not None and view.lock.txn == txn else None


@dataclass(frozen=True)
class ReadItem:
    """GetItem's read of one row, never showing a half-applied transaction: Finished("read",
    data). A row without a lock is answered from its one read. A locked row is answered as
    the transaction's fate says at a moment within the read: its primary (committed there or
    not, the data is what the row holds); a secondary whose primary is prepared (not yet
    committed: the data before it); a secondary whose primary committed is rolled forward and
    read again."""

    row: RowRef
    pc: Reading = Reading.READ
    seen: View | None = None
    tries: int = TRIES

    def step(self) -> Step | Finished:
        seen = self.seen
        if self.pc in (Reading.READ, Reading.RECHECK):
            return Read(self.row)
        if self.pc == Reading.GAVE_UP:
            return GAVE_UP
        assert seen is not None
        if self.pc == Reading.DONE:
            return Finished("read", seen.data)
        assert seen.lock is not None
        return Read(seen.lock.primary) if self.pc == Reading.PRIMARY else Release(self.row, seen.lock, apply=True)

    def after(self, result: Any) -> ReadItem:
        seen = self.seen
        held = seen.lock if seen is not None else None
        gone = self.pc == Reading.RECHECK and held is not None and _of_txn(result, held.txn) is None
        if self.pc == Reading.READ or gone:
            if self.tries <= 0:
                return replace(self, pc=Reading.GAVE_UP)
            lock = result.lock  # a newer release's lock is read around: the row's data as committed
            done = lock is None or lock.primary == self.row or not lock.known
            return replace(self, pc=Reading.DONE if done else Reading.PRIMARY, seen=result, tries=self.tries - 1)
        if self.pc == Reading.RECHECK:  # still locked by a transaction its primary no longer holds: aborted
            return replace(self, pc=Reading.DONE, seen=result)
        assert seen is not None and seen.lock is not None
        if self.pc == Reading.PRIMARY:
            fate = _of_txn(result, seen.lock.txn)
            if fate is None:
                return replace(self, pc=Reading.RECHECK)
            return replace(self, pc=Reading.ROLL if fate.state == COMMITTED else Reading.DONE)
        return replace(self, pc=Reading.READ)  # rolled forward (by this reader or another): read again


@dataclass(frozen=True)
class SingleWrite:
    """A single-item PutItem, UpdateItem or DeleteItem as serve runs it (items/item_ops.py):
    read the row, compute the change (`change(data)`: an intent, or a Finished such as a
    failed condition), write it if the row is unchanged and unlocked. A lock is settled when
    its transaction is over; a live one answers CONFLICT (DynamoDB's
    TransactionConflictException). A write that lost its row to another writer, or settled a
    lock, tries again from a fresh read after a Pause, for as long as the clock answers that
    there is time (the request's deadline: hot_rows.py), else it answers GAVE_UP.

    A `presumed` write starts at WRITE with a `seen` no read gave (what the worker knows of
    the row: items/known_rows.py, or an empty row) and its change decided on it: if the row
    is not that, nothing is written and it reads the row at once (a wrong guess, not a lost
    race: no Pause), then goes on as any write."""

    row: RowRef
    change: Any  # Callable[[data], intent | Finished]
    pc: Writing = Writing.READ
    seen: View | None = None
    intent: Any = None
    sub: Resolve | None = None
    attempt: int = 0  # pauses so far
    presumed: bool = False  # `seen` is a guess: a write it fails reads next, with no pause

    def step(self) -> Step | Finished:
        if self.sub is not None:
            return self.sub.step()
        if self.pc == Writing.READ:
            return Read(self.row)
        if self.pc == Writing.PAUSE:
            return Pause(self.attempt)
        if self.pc == Writing.GAVE_UP:
            return GAVE_UP
        if isinstance(self.intent, Finished):
            return self.intent
        assert self.seen is not None
        if self.pc == Writing.WRITE:
            return WriteIfUnchanged(self.seen, self.intent)
        return Finished("written", (self.seen.data, self.intent))

    def after(self, result: Any) -> SingleWrite:
        if self.sub is not None:
            ended = self.sub.advanced(result)
            if isinstance(ended, Resolve):
                return replace(self, sub=ended)
            return replace(self, sub=None, pc=Writing.PAUSE if ended == SETTLED else Writing.END, intent=ended)
        if self.pc == Writing.READ:
            if result.lock is not None:
                return replace(self, sub=Resolve.of(result))
            intent = self.change(result.data)
            return replace(self, pc=Writing.END if isinstance(intent, Finished) else Writing.WRITE, seen=result,
                           intent=intent)
        if self.pc == Writing.PAUSE:
            return replace(self, pc=Writing.READ if result else Writing.GAVE_UP, attempt=self.attempt + 1)
        if self.presumed:
            return replace(self, pc=Writing.END if result else Writing.READ, presumed=False)
        return replace(self, pc=Writing.END if result else Writing.PAUSE)


@dataclass(frozen=True)
class BlindWrite:
    """A write that needs no read: one WriteIfUnlocked; a locked row makes it a SingleWrite of
    the same intent (settle the lock, or answer CONFLICT)."""

    row: RowRef
    intent: Any
    then: SingleWrite | None = None
    done: bool = False

    def step(self) -> Step | Finished:
        if self.then is not None:
            return self.then.step()
        return Finished("written", (None, self.intent)) if self.done else WriteIfUnlocked(self.row, self.intent)

    def after(self, result: Any) -> BlindWrite:
        if self.then is not None:
            return replace(self, then=self.then.after(result))
        if result:
            return replace(self, done=True)
        return replace(self, then=SingleWrite(self.row, _Constant(self.intent)))


@dataclass(frozen=True)
class _Constant:
    """The change of a blind write: the same intent whatever the row held."""

    intent: Any

    def __call__(self, data: Any) -> Any:
        return self.intent


@dataclass(frozen=True)
class Sweep:
    """Settle every lock on `rows` (the sweep that resolves locks nobody touches, and the model
    checker's recovery after a crash): Finished("answered", rows still locked)."""

    rows: tuple[RowRef, ...]
    sub: Resolve | None = None
    stuck: tuple[RowRef, ...] = ()
    tries: int = TRIES

    def step(self) -> Step | Finished:
        if self.sub is not None:
            return self.sub.step()
        return Read(self.rows[0]) if self.rows else Finished("answered", self.stuck)

    def after(self, result: Any) -> Sweep:
        if self.sub is not None:
            ended = self.sub.advanced(result)
            if isinstance(ended, Resolve):
                return replace(self, sub=ended)
            if ended == SETTLED and self.tries > 1:  # read the row again: settled, or another lock since
                return replace(self, sub=None, tries=self.tries - 1)
            return replace(self, sub=None, rows=self.rows[1:], stuck=(*self.stuck, self.rows[0]), tries=TRIES)
        if result.lock is None:
            return replace(self, rows=self.rows[1:], tries=TRIES)
        return replace(self, sub=Resolve.of(result))
