"""The protocol's vocabulary: a row's lock, a row as read, and the operations on one row
that a store performs atomically (docs/transactions.md, "Cells" and "Steps").

Every operation here is ONE single-row atomic call: on Bigtable a ReadRow or a
CheckAndMutateRow through the transactional (single-cluster) app profile; in the model
checker one step of the in-memory store. The machines (resolve.py, writer.py) only ever ask for
these, so what the checker proves about them is what serve runs.

`data` and `intent` are opaque to the protocol: on Bigtable a row's cells and the row
mutation a transaction will apply; in the checker a number and its next value. The store
alone knows how to compare, apply and write them.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

# The lock's stored form this release writes, and the newest it acts on (cells.py): 0 is
# issue 44's (no version written), 1 adds the version and the token table (issue 50). A
# version may add what a lock holds, never change what the earlier ones mean, so a worker
# reads every older lock; a lock of a newer version is met as a live one (never settled
# by a worker that may misread it) until a worker of its own release settles it.
LOCK_VERSION = 1


class LockState(StrEnum):
    """A lock's state, stored as its one-letter value after the transaction's id."""

    PREPARED = "P"  # the transaction may still commit or abort
    COMMITTED = "C"  # only ever on a primary: the transaction has committed (its intent applied there)


PREPARED, COMMITTED = LockState.PREPARED, LockState.COMMITTED

RowRef = Hashable  # a row: (table, row key) on Bigtable


@dataclass(frozen=True)
class Lock:
    """A row's lock. `txn` is unique per attempt and never reused, so a lock is recognised by
    (txn, state) alone. A secondary's lock names the primary; the primary's lists the
    secondaries, so whoever finds either can settle the whole transaction."""

    txn: str
    primary: RowRef
    state: LockState
    expires_micros: int
    intent: Any  # what committing applies to this row; None: the row is only checked
    secondaries: tuple[RowRef, ...] = ()
    version: int = LOCK_VERSION  # the stored form's, as read (LOCK_VERSION above)

    def committed(self) -> Lock:
        return replace(self, state=COMMITTED)

    @property
    def known(self) -> bool:
        """Whether this release may act on the lock: its version is this release's or older."""
        return self.version <= LOCK_VERSION


@dataclass(frozen=True)
class View:
    """One row as one read saw it: its committed data (without the lock's cells) and its lock.
    `data` compares equal only when the row did not change (every cell, with its timestamp)."""

    row: RowRef
    data: Any
    lock: Lock | None


# --- single-row atomic operations ------------------------------------------------------------

@dataclass(frozen=True)
class Read:
    """Read one row, data and lock together (one ReadRow: a plain read already returns the lock)."""

    row: RowRef


@dataclass(frozen=True)
class Prewrite:
    """If the row is still exactly `seen` (no lock), set `lock`. Result: done or not."""

    seen: View
    lock: Lock


@dataclass(frozen=True)
class Commit:
    """The commit point: if the primary still holds `lock` prepared, apply its intent and turn
    the lock committed, in one row mutation; `record` (the ClientRequestToken's answer) is
    written with it. Result: done or not (another worker aborted the transaction)."""

    row: RowRef
    lock: Lock
    record: Any = None


@dataclass(frozen=True)
class Release:
    """If the row still holds `lock` (same txn and state), apply the lock's intent when `apply`
    and remove the lock, in one row mutation. Result: done or not (someone else did it)."""

    row: RowRef
    lock: Lock
    apply: bool


@dataclass(frozen=True)
class WriteIfUnchanged:
    """A write to one row with no lock taken (a single-item write, or a transaction whose items
    all live in one row): if the row is still exactly `seen` (no lock), apply `intent`, and
    write `record` with it."""

    seen: View
    intent: Any
    record: Any = None


@dataclass(frozen=True)
class WriteIfUnlocked:
    """A write that needs no read (a PutItem or DeleteItem with no condition and nothing to
    return): if the row holds no lock, apply `intent`. One CheckAndMutate, as cheap as the
    MutateRow it replaces."""

    row: RowRef
    intent: Any


@dataclass(frozen=True)
class Expired:
    """Whether `lock` has passed its expiry (a clock question, no store call). Safety never
    rests on the answer: the checker explores both."""

    lock: Lock


@dataclass(frozen=True)
class Pause:
    """Before trying a lost single-item write again: whether there is time for another try
    (a clock question, no store call: the driver waits a jittered pause first; the checker
    explores both answers). `attempt` counts the pauses so far."""

    attempt: int


@dataclass(frozen=True)
class Uncommitted:
    """The ids of this worker's transactions that have prewritten and not sent their commit
    (a question about the worker's own memory, no store call: the driver keeps each running
    transaction's lock ids from its first prewrite until it sends its commit or ends; the
    checker answers from the other actors' machines). None of them had committed at any
    moment before the question, so a row one holds prepared reads as before it. Result: a
    frozenset."""


Step = Read | Prewrite | Commit | Release | WriteIfUnchanged | WriteIfUnlocked | Expired | Pause | Uncommitted


# --- what a machine ends with -----------------------------------------------------------------

@dataclass(frozen=True)
class Finished:
    """A machine's end: `kind` says how, `value` what it answers with."""

    kind: str  # committed | cancelled | conflict | answered | read | written | failed | gave_up
    value: Any = None


CONFLICT = Finished("conflict")  # a lock of a live transaction: TransactionConflict
GAVE_UP = Finished("gave_up")  # the rows kept changing: the caller answers a retryable error


# --- what a machine asks for besides one step -------------------------------------------------

@dataclass(frozen=True)
class Together:
    """Single-row operations on distinct rows with no order among them (a transaction's
    secondaries prewritten, applied or released; every row of a TransactGetItems read): the
    driver sends them side by side (the reads as one ReadRows per table), the checker performs
    them one at a time in every order, interleaved with every other actor's steps. Result:
    their results, in `steps` order."""

    steps: tuple[Step, ...]


@dataclass(frozen=True)
class Answer:
    """The machine's answer is decided (a transaction past its commit point): the caller is
    answered now, and the machine's remaining steps (applying the secondaries, releasing the
    primary) run behind the answer. The checker counts the caller answered here, while the
    machine goes on and may crash after. `rows`: the rows those steps still hold, which the
    worker's own later requests wait for rather than settle. Result: none."""

    finished: Finished
    rows: tuple[RowRef, ...] = ()


Move = Step | Together | Answer  # what a machine's step() asks for, when not Finished
