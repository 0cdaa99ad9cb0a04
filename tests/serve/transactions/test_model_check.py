"""The transaction protocol, model-checked: every interleaving of two transactions, one
single-item write (or reads) and one crash at any step, over two or three rows.

The machines are serve's own (ddb2bigtable/serve/transactions); only the store is the
in-memory one of model.py. Each end state is recovered by the sweep, then must have no lock
left and be explained by a serial order of what took effect, every answer included (a
committed or cancelled transaction, the old value an update saw, what a read returned). The
checker is itself checked: protocols broken on purpose must be caught.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

import pytest

from ddb2bigtable.serve.transactions.resolve import Reading, ReadItem, SingleWrite, Writing
from ddb2bigtable.serve.transactions.snapshot import SnapshotRead
from ddb2bigtable.serve.transactions.steps import RowRef, Step, View, WriteIfUnlocked
from ddb2bigtable.serve.transactions.writer import Intents, Phase, WriteTxn

from .model import PAUSES, Actor, add, explore, get, put, put_if, snapshot, transfer


def _tries(actor: Actor, tries: int) -> Actor:
    """Fewer retries: two transactions crossing on the same rows retry each other a lot, and
    wait for each other: their Pause is always out of time (waiting for a live transaction,
    answered both ways, is explored by the other scenarios; here it took 400,000 states, 208 s)."""
    return replace(actor, machine=replace(actor.machine, tries=tries, pauses=PAUSES))


SCENARIOS: dict[str, tuple[dict[str, int], list[Actor]]] = {
    "two transfers in a chain and an update": (
        {"A": 1, "B": 0, "C": 0}, [transfer("T1", "A", "B"), transfer("T2", "B", "C"), add("W", "A", 10)]),
    "two transfers crossing on the same rows and an update": (
        {"A": 1, "B": 1},
        [_tries(transfer("T1", "A", "B"), 2), _tries(transfer("T2", "B", "A"), 2), add("W", "B", 10)]),
    "a transfer with a condition check, a transfer and an update": (
        {"A": 1, "B": 0, "C": 0}, [transfer("T1", "A", "B", checked="C"), transfer("T2", "C", "A"), add("W", "C", -5)]),
    "a transfer, a conditional put and an update": (
        {"A": 1, "B": 0}, [transfer("T1", "A", "B"), put_if("P", "B", 5, expected=1), add("W", "B", 10)]),
    "two transfers and a put with no read": (
        {"A": 1, "B": 0, "C": 0}, [transfer("T1", "A", "B"), transfer("T2", "B", "C"), put("P", "B", 5)]),
    "a transfer, a put and a TransactGetItems": (
        {"A": 1, "B": 0}, [transfer("T1", "A", "B"), put("P", "A", 5), snapshot("S", ("A", "B"))]),
    "a transfer, a TransactGetItems and a GetItem": (
        {"A": 1, "B": 0}, [transfer("T1", "A", "B"), snapshot("S", ("A", "B")), get("G", "B")]),
    # a ClientRequestToken's row is the primary, outside the rows a reader reads: a
    # TransactGetItems reads around the prepared locks only once it has read the primary
    "a transfer under a token, a TransactGetItems and a GetItem": (
        {"P": 0, "A": 1, "B": 0}, [transfer("T1", "A", "B", token="P"), snapshot("S", ("A", "B")), get("G", "B")]),
    "a transfer under a token, a put and a TransactGetItems": (
        {"P": 0, "A": 1, "B": 0}, [transfer("T1", "A", "B", token="P"), put("W", "A", 5), snapshot("S", ("A", "B"))]),
    # a write of a row its worker wrote last presumes what it wrote (items/known_rows.py): A as
    # it starts (right, unless the transfer or the put got there first); B as it was before
    # the transfer (wrong once the transfer wrote it)
    "a transfer and two updates presuming their rows": (
        {"A": 1, "B": 0},
        [transfer("T1", "A", "B"), add("W", "A", 10, presumed=(1, 0)), add("V", "B", 5, presumed=(0, 0))]),
    # the token's row is not empty, as the first attempt presumes (a retry: it holds a record)
    "a retried transfer under a token, an update and a TransactGetItems": (
        {"P": 1, "A": 1, "B": 0}, [transfer("T1", "A", "B", token="P"), add("W", "A", 10), snapshot("S", ("A", "B"))]),
    # a token's first attempt locks its row while it reads the others: cancelled (A is 0 until
    # the update), it releases the row before reading every row again to confirm
    "a transfer under a token cancelled or not by an update, and a TransactGetItems": (
        {"P": 0, "A": 0, "B": 0}, [transfer("T1", "A", "B", token="P"), add("W", "A", 1), snapshot("S", ("A", "B"))]),
    # ... and meeting another transaction's lock in its reads, it releases its row, then reads
    # every row again and settles the lock
    "two transfers under tokens in a chain and a GetItem": (
        {"P": 0, "Q": 0, "A": 1, "B": 0, "C": 0},
        [_tries(transfer("T1", "A", "B", token="P"), 3), _tries(transfer("T2", "B", "C", token="Q"), 3), get("G", "C")]),
    # a TransactGetItems whose second read finds a row newly prepared asks whether its
    # transaction had sent its commit (the worker's memory: Uncommitted); T2 can only commit
    # after T1 (it checks C >= 0, which T1 makes so), outside the rows the reader reads
    "a transfer under a token, a transfer after it and a TransactGetItems": (
        {"P": 0, "A": 1, "C": -1, "D": 1, "B": 0},
        [transfer("T1", "A", "C", token="P"), transfer("T2", "D", "B", checked="C"), snapshot("S", ("A", "B"))]),
}


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_no_interleaving_and_crash_shows_an_anomaly(scenario: str, capsys: pytest.CaptureFixture[str]) -> None:
    initial, actors = SCENARIOS[scenario]
    started = time.perf_counter()
    report = explore(initial, actors)
    seconds = time.perf_counter() - started
    with capsys.disabled():
        print(f"\n{scenario}: {report.schedules:,} interleavings ({report.states:,} states, {report.ends:,} end "
              f"states) in {seconds:.1f} s")
    assert report.anomalies == []
    assert report.ends > 10 and report.schedules > 1_000_000  # the crash and both transactions really interleave


class CommitsSecondariesFirst(WriteTxn):
    """Broken: applies the secondaries before the primary's commit point."""

    NEXT = {**WriteTxn.NEXT, Phase.SECONDARIES: Phase.APPLY, Phase.APPLY: Phase.COMMIT,  # noqa: RUF012
            Phase.ANSWER: Phase.CLEANUP}


class LocksSecondariesFirst(WriteTxn):
    """Broken: prewrites the secondaries before the primary (as prewriting them all at once
    may): a reader meeting a secondary's lock finds no lock at the primary, takes the
    transaction for aborted and removes the lock, and the transaction then commits."""

    NEXT = {**WriteTxn.NEXT, Phase.READ: Phase.SECONDARIES, Phase.SECONDARIES: Phase.PREWRITE,  # noqa: RUF012
            Phase.PREWRITE: Phase.COMMIT}


class TrustsAnAbsentPrimary(ReadItem):
    """Broken: a secondary whose primary holds no lock of its transaction is read as aborted,
    without reading the secondary again (the transaction may have committed and finished)."""

    def after(self, result: Any) -> ReadItem:
        seen = self.seen
        if self.pc == Reading.PRIMARY and seen is not None and seen.lock is not None and (
                result.lock is None or result.lock.txn != seen.lock.txn):
            return replace(self, pc=Reading.DONE)
        return super().after(result)


class ReadsAroundBlindly(SnapshotRead):
    """Broken: reads around a prepared lock without reading its primary (outside the rows):
    the transaction may have committed there, and answered, already."""

    def _outside(self) -> tuple[RowRef, ...]:
        return ()


class ReadsAroundNewLocksBlindly(SnapshotRead):
    """Broken: takes rows whose data both reads saw the same as unchanged whatever locks came
    or went between them, without the worker's word that their transactions were
    uncommitted (T1, under a token, had committed, and a later transfer depending on it had
    been applied on a row the reader read last in its first read)."""

    def _open_only(self, first: View, second: View) -> bool:
        return bool(first.data == second.data)


def test_the_checker_catches_a_snapshot_reading_around_a_new_lock_without_asking() -> None:
    world, rows = {"P": 0, "A": 1, "C": -1, "D": 1, "B": 0}, ("A", "B")
    actors = [transfer("T1", "A", "C", token="P"), transfer("T2", "D", "B", checked="C")]
    reader = snapshot("S", rows)
    broken = replace(reader, machine=ReadsAroundNewLocksBlindly(rows, pauses=PAUSES - 1))
    report = explore(world, [*actors, broken], crash=False)
    assert report.anomalies
    assert any("S=read:((1," in a and "T2=committed" in a for a in report.anomalies), report.anomalies
    assert explore(world, [*actors, reader], crash=False).anomalies == []


def test_the_checker_catches_a_snapshot_reading_around_a_committed_transaction() -> None:
    """The transfer answers once committed at its token's row; a TransactGetItems that starts
    then and reads around the secondaries' locks, still prepared, answers from before it."""
    world = {"P": 0, "A": 1, "B": 0}
    t1 = transfer("T1", "A", "B", token="P")
    reader = snapshot("S", ("A", "B"))
    broken = replace(reader, machine=ReadsAroundBlindly(("A", "B")))
    assert explore(world, [t1, broken], crash=False).anomalies
    assert explore(world, [t1, reader], crash=False).anomalies == []


def test_the_checker_catches_secondaries_committed_before_the_primary() -> None:
    t1 = transfer("T1", "A", "B")
    broken = replace(t1, machine=CommitsSecondariesFirst(t1.machine.txn, t1.machine.rows, t1.machine.decide))
    report = explore({"A": 1, "B": 0}, [broken, snapshot("S", ("A", "B"))])
    assert report.anomalies, "a crash between the secondary's apply and the commit point half-applies the transfer"
    assert any("T1=crashed" in a for a in report.anomalies)


def test_the_checker_catches_secondaries_locked_before_the_primary() -> None:
    t1 = transfer("T1", "A", "B")
    broken = replace(t1, machine=LocksSecondariesFirst(t1.machine.txn, t1.machine.rows, t1.machine.decide))
    assert explore({"A": 1, "B": 0}, [broken, add("W", "B", 10)], crash=False).anomalies
    assert explore({"A": 1, "B": 0}, [t1, add("W", "B", 10)], crash=False).anomalies == []


def test_the_checker_catches_a_reader_trusting_an_absent_primary() -> None:
    """A GetItem of A answers the transfer's new A before the broken GetItem of B starts, which
    still answers B from before the transfer: no serial order keeps real time."""
    reader = get("G", "B")
    report = explore({"A": 1, "B": 0},
                     [transfer("T1", "A", "B"), get("GA", "A"), replace(reader, machine=TrustsAnAbsentPrimary("B"))],
                     crash=False)
    assert report.anomalies
    assert explore({"A": 1, "B": 0}, [transfer("T1", "A", "B"), get("GA", "A"), reader], crash=False).anomalies == []


def test_the_checker_catches_a_half_visible_transfer_without_a_crash() -> None:
    """Without a crash, the broken variant is only caught by an interleaving: a reader between
    the secondary's apply and the primary's commit."""
    t1 = transfer("T1", "A", "B")
    broken = replace(t1, machine=CommitsSecondariesFirst(t1.machine.txn, t1.machine.rows, t1.machine.decide))
    assert explore({"A": 1, "B": 0}, [broken, snapshot("S", ("A", "B"))], crash=False).anomalies
    assert explore({"A": 1, "B": 0}, [t1, snapshot("S", ("A", "B"))], crash=False).anomalies == []


class TrustsItsGuess(SingleWrite):
    """Broken: a presumed write sent without its guard (only unlocked), as if what the worker
    wrote last were surely still the row."""

    def step(self) -> Step | Any:
        if self.presumed and self.pc == Writing.WRITE:
            return WriteIfUnlocked(self.row, self.intent)
        return super().step()


def test_the_checker_catches_a_presumed_write_without_its_guard() -> None:
    """The update presumes B as before the transfer: written unguarded after it, the transfer's
    +1 is lost; guarded, it reads B again and adds to what the transfer left."""
    world = {"A": 1, "B": 0}
    actor = add("V", "B", 5, presumed=(0, 0))
    broken = replace(actor, machine=TrustsItsGuess(**{f: getattr(actor.machine, f) for f in (
        "row", "change", "pc", "seen", "intent", "presumed")}))
    assert explore(world, [transfer("T1", "A", "B"), broken], crash=False).anomalies
    assert explore(world, [transfer("T1", "A", "B"), actor], crash=False).anomalies == []


class DecidesOnALock(WriteTxn):
    """Broken: a token's first attempt decides on the rows as read even when one holds another
    transaction's lock, instead of releasing its row and settling the lock: its prewrite of
    that row as read, lock and all, replaces the lock, and that transaction's change is lost."""

    def _first(self, locked: bool, views: tuple[View, ...]) -> WriteTxn:
        if not locked:
            return replace(self, blocked=self.rows[0])._again()
        decision = self.decide(views)
        if not isinstance(decision, Intents):
            return replace(self, views=views, decision=decision, pc=Phase.WITHDRAW)
        return replace(self, views=views, decision=decision, pc=self.NEXT[Phase.PREWRITE], i=0)


def test_the_checker_catches_a_first_attempt_deciding_on_a_lock() -> None:
    world = {"P": 0, "Q": 0, "A": 1, "B": 0, "C": 0}
    t1, t2 = transfer("T1", "A", "B", token="P"), transfer("T2", "B", "C", token="Q")
    m = t2.machine
    broken = replace(t2, machine=DecidesOnALock(**{f: getattr(m, f) for f in (
        "txn", "rows", "decide", "pc", "views", "tries", "pauses", "primary_at_once")}))
    assert explore(world, [t1, broken], crash=False).anomalies
    assert explore(world, [t1, t2], crash=False).anomalies == []
