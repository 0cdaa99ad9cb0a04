"""The model checker's world: an in-memory store performing the protocol's single-row steps,
the actors (the protocol's own machines with small decisions: a transfer, an add, reads),
the sequential specification each actor must agree with, and the exhaustive explorer.

A row's data is (value, version): every write makes a new version, as every Bigtable write
makes cells with new timestamps, so a row that reads the same twice did not change between.
An intent is the row's next value (None: only checked).
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from ddb2bigtable.serve.transactions.resolve import BlindWrite, ReadItem, SingleWrite, Sweep, Writing
from ddb2bigtable.serve.transactions.snapshot import SnapshotRead
from ddb2bigtable.serve.transactions.steps import (
    Answer,
    Commit,
    Expired,
    Finished,
    Lock,
    Pause,
    Prewrite,
    Read,
    Release,
    Together,
    Uncommitted,
    View,
    WriteIfUnchanged,
    WriteIfUnlocked,
)
from ddb2bigtable.serve.transactions.writer import Cancel, Intents, Phase, WriteTxn

Row = tuple[str, tuple[int, int], Lock | None]  # name, (value, version), lock
Store = tuple[Row, ...]
CRASHED = Finished("crashed")
PAUSES = 2  # a single write's Pause is answered both ways this many times, then "no time left"


def _apply(data: tuple[int, int], intent: int | None) -> tuple[int, int]:
    return data if intent is None else (intent, data[1] + 1)


def _same_lock(held: Lock | None, lock: Lock) -> bool:
    return held is not None and (held.txn, held.state) == (lock.txn, lock.state)


def perform(store: Store, step: Any) -> tuple[Store, Any]:
    """One single-row atomic operation on the in-memory store: (store after, answer)."""
    rows: dict[Any, tuple[tuple[int, int], Lock | None]] = {name: (data, lock) for name, data, lock in store}
    target = step.row if isinstance(step, Read | Commit | Release | WriteIfUnlocked) else step.seen.row
    data, lock = rows[target]
    answer: Any = False
    if isinstance(step, Read):
        return store, View(target, data, lock)
    if isinstance(step, Prewrite | WriteIfUnchanged):
        if (data, lock) == (step.seen.data, step.seen.lock):
            answer = True
            rows[target] = (data, step.lock) if isinstance(step, Prewrite) else (_apply(data, step.intent), None)
    elif isinstance(step, WriteIfUnlocked):
        if lock is None:
            answer, rows[target] = True, (_apply(data, step.intent), None)
    elif isinstance(step, Commit):
        if _same_lock(lock, step.lock):
            answer, rows[target] = True, (_apply(data, step.lock.intent), step.lock.committed())
    elif isinstance(step, Release):
        if _same_lock(lock, step.lock):
            answer, rows[target] = True, (_apply(data, step.lock.intent) if step.apply else data, None)
    else:
        raise AssertionError(step)
    return tuple((name, *rows[name]) for name, _, _ in store), answer


# --- actors: a machine and the specification it must agree with ----------------------------------

@dataclass(frozen=True)
class Actor:
    """`machine` runs the protocol; `spec(values, finished)` applies the actor's effect to the
    row values of a serial execution and says whether its answer agrees with them (None: it
    crashed, and took effect in this order)."""

    name: str
    machine: Any
    spec: Callable[[dict[str, int], Finished | None], bool]
    writes: bool = True  # may crash, and may or may not have taken effect when it did


def transfer(name: str, src: str, dst: str, checked: str | None = None, token: str | None = None) -> Actor:
    """TransactWriteItems: move 1 from src to dst if src >= 1 (and, with `checked`, if that row
    is >= 0: a ConditionCheck on a third row). With `token`, that row is the primary and only
    checked, as a ClientRequestToken's row is (its record is no value here), and, as serve
    does, the first attempt presumes it empty (value 0, never written) instead of reading it."""
    rows = (src, dst, checked) if checked else (src, dst)
    rows = (token, *rows) if token else rows

    def decide(views: tuple[View, ...]) -> Intents | Cancel:
        value = {v.row: v.data[0] for v in views}
        if value[src] < 1 or (checked and value[checked] < 0):
            return Cancel("failed")
        return Intents(((None,) if token else ()) + (value[src] - 1, value[dst] + 1) + ((None,) if checked else ()),
                       answer="ok")

    def spec(values: dict[str, int], finished: Finished | None) -> bool:
        holds = values[src] >= 1 and (not checked or values[checked] >= 0)
        committed = finished is None or finished.kind == "committed"
        if committed:
            values[src] -= 1
            values[dst] += 1
        return holds == committed

    # a live transaction met is waited for: one Pause answered both ways, then "no time left"
    # (twice, as for a single write, took two transactions crossing 240 s instead of 40)
    machine = WriteTxn(name, rows, decide, pauses=PAUSES - 1, primary_at_once=token is not None)
    return Actor(name, machine.presuming(View(token, (0, 0), None)) if token else machine, spec)


def add(name: str, row: str, amount: int, presumed: tuple[int, int] | None = None) -> Actor:
    """A single-item UpdateItem: row += amount, answering the old value. With `presumed`, as
    serve writes a row it wrote last (items/known_rows.py): no read first, the change decided
    on that (value, version) and written only while the row is still it."""
    def spec(values: dict[str, int], finished: Finished | None) -> bool:
        old = values[row]
        values[row] += amount
        return finished is None or bool(finished.value[0][0] == old)

    def change(data: tuple[int, int]) -> int:
        return data[0] + amount

    if presumed is None:
        return Actor(name, SingleWrite(row, change), spec)
    return Actor(name, SingleWrite(row, change, pc=Writing.WRITE, seen=View(row, presumed, None),
                                   intent=change(presumed), presumed=True), spec)


def put(name: str, row: str, value: int) -> Actor:
    """A PutItem with no condition and nothing returned: no read unless the row is locked."""
    def spec(values: dict[str, int], finished: Finished | None) -> bool:
        values[row] = value
        return True

    return Actor(name, BlindWrite(row, value), spec)


def put_if(name: str, row: str, value: int, expected: int) -> Actor:
    """A PutItem with a ConditionExpression (row = expected), as serve's change decides one: a
    failed condition ends the write without writing (Finished("failed", the value seen))."""
    def change(data: tuple[int, int]) -> int | Finished:
        return value if data[0] == expected else Finished("failed", data[0])

    def spec(values: dict[str, int], finished: Finished | None) -> bool:
        holds = values[row] == expected
        if holds and (finished is None or finished.kind == "written"):
            values[row] = value
        return finished is None or holds == (finished.kind == "written")

    return Actor(name, SingleWrite(row, change), spec)


def get(name: str, row: str) -> Actor:
    """GetItem (strongly consistent)."""
    def spec(values: dict[str, int], finished: Finished | None) -> bool:
        return finished is not None and bool(finished.value[0] == values[row])

    return Actor(name, ReadItem(row), spec, writes=False)


def snapshot(name: str, rows: tuple[str, ...]) -> Actor:
    """TransactGetItems."""
    def spec(values: dict[str, int], finished: Finished | None) -> bool:
        return finished is not None and tuple(d[0] for d in finished.value) == tuple(values[r] for r in rows)

    # a reader that waits (rows that kept changing, a lock not read around): one Pause
    # answered both ways, then "no time left"
    return Actor(name, SnapshotRead(rows, pauses=PAUSES - 1), spec, writes=False)


# --- the explorer ---------------------------------------------------------------------------------

@dataclass
class Report:
    states: int = 0  # distinct global states reached
    schedules: int = 0  # complete interleavings (paths from the start to an end), counted over the state graph
    ends: int = 0  # distinct end states checked
    anomalies: list[str] = field(default_factory=list)


# store, each actor's machine or Finished, crashed yet, and for each actor that started the
# actors that had answered before its first step (real time: those come before it in any order)
State = tuple[Store, tuple[Any, ...], bool, tuple[frozenset[int] | None, ...]]


def explore(initial: dict[str, int], actors: list[Actor], crash: bool = True) -> Report:
    """Every interleaving of the actors' steps, each Expired question answered both ways (each
    Pause too, up to PAUSES of one write), and at most one crash of a writing actor at any
    step; each end recovered by a Sweep and checked."""
    store: Store = tuple((name, (value, 0), None) for name, value in initial.items())
    report = Report()
    memo: dict[State, int] = {}
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 20_000))

    def paths(state: State) -> int:
        if state in memo:
            return memo[state]
        memo[state] = -1  # on the stack: a cycle would be a machine that never ends
        successors = list(_successors(state, actors, crash))
        if successors:
            total = 0
            for successor in successors:
                count = paths(successor)
                assert count >= 0, f"a cycle through {successor}"
                total += count
        else:
            total = 1
            report.ends += 1
            problem = _check(state, initial, actors)
            if problem and len(report.anomalies) < 5:
                report.anomalies.append(problem)
        memo[state] = total
        return total

    report.schedules = paths((store, tuple(a.machine for a in actors), False, (None,) * len(actors)))
    report.states = len(memo)
    return report


def _successors(state: State, actors: list[Actor], crash: bool) -> Iterator[State]:
    store, machines, crashed, starts = state
    for k, machine in enumerate(machines):
        if isinstance(machine, Finished):
            continue
        if crash and not crashed and actors[k].writes:  # after its Answer, the answer stays given
            yield store, _replaced(machines, k, machine.answer if isinstance(machine, Replied) else CRASHED), True, starts
        if starts[k] is None:
            answered = frozenset(j for j, m in enumerate(machines) if isinstance(m, Replied) or (
                isinstance(m, Finished) and m is not CRASHED))
            starts = _replaced(starts, k, answered)
        for after, moved in _moves(store, machine, machines):
            yield after, _replaced(machines, k, moved), crashed, starts
        starts = state[3]


_NOT_YET = Finished("not yet")  # a step of a Together not performed yet


@dataclass(frozen=True)
class Pending:
    """A machine's Together under way: its steps, each answered or _NOT_YET."""

    machine: Any
    steps: tuple[Any, ...]
    answers: tuple[Any, ...]


@dataclass(frozen=True)
class Replied:
    """An actor past its Answer: the caller has `answer`, `machine` goes on behind it."""

    answer: Finished
    machine: Any


def _moves(store: Store, machine: Any, machines: tuple[Any, ...]) -> Iterator[tuple[Store, Any]]:
    """Each way the actor's next step can go: (the store after, the actor after, or how it ended).
    A Together's steps are performed one at a time, in every order, each a step of its own.
    `machines`: every actor's, for a question about the worker's memory (Uncommitted)."""
    if isinstance(machine, Replied):
        for after, moved in _moves(store, machine.machine, machines):
            yield after, machine.answer if isinstance(moved, Finished) else replace(machine, machine=moved)
        return
    if isinstance(machine, Pending):
        for j, step in enumerate(machine.steps):
            if machine.answers[j] is _NOT_YET:
                after, answer = perform(store, step)
                answers = _replaced(machine.answers, j, answer)
                done = _NOT_YET not in answers
                yield after, _settled(machine.machine.after(answers)) if done else replace(machine, answers=answers)
        return
    step = machine.step()
    if isinstance(step, Together):
        yield from _moves(store, Pending(machine, step.steps, (_NOT_YET,) * len(step.steps)), machines)
    elif isinstance(step, Answer):
        rest = _settled(machine.after(None))
        yield store, step.finished if isinstance(rest, Finished) else Replied(step.finished, rest)
    elif isinstance(step, Uncommitted):
        yield store, _settled(machine.after(_open(machines)))
    else:
        for after, answer in _answers(store, step):
            yield after, _settled(machine.after(answer))


def _open(machines: tuple[Any, ...]) -> frozenset[str]:
    """What serve's driver (transactions/driver.py, _OPEN) answers, or more: the lock ids of
    the running transactions that have not sent their commit, their earlier attempts' too
    (those never commit). The driver knows a transaction from its first prewrite, this from
    its start; both only ever name transactions that have not committed. One past its
    Answer, ended or crashed is named by neither. Every actor counts as of the asking one's
    worker: a reader told less (another worker's transaction, one not prewritten yet) reads
    the primaries, or every row again, as without the question."""
    held: set[str] = set()
    for m in machines:
        inner = m.machine if isinstance(m, Pending) else m
        if isinstance(inner, WriteTxn):
            held.update(f"{inner.txn}.{a}" for a in range(inner.attempt))
            if inner.pc not in (Phase.ANSWER, Phase.APPLY, Phase.CLEANUP, Phase.UNWIND, Phase.END):
                held.add(f"{inner.txn}.{inner.attempt}")
    return frozenset(held)


def _answers(store: Store, step: Any) -> list[tuple[Store, Any]]:
    """A step's answers: a clock question's both, a store step's one."""
    if isinstance(step, Pause):  # the clock: time for another try, or the request's deadline has come
        return [(store, True), (store, False)] if step.attempt < PAUSES else [(store, False)]
    return [(store, True), (store, False)] if isinstance(step, Expired) else [perform(store, step)]


def _settled(machine: Any) -> Any:
    """The machine, or how it ended."""
    ended = machine.step()
    return ended if isinstance(ended, Finished) else machine


def _replaced(machines: tuple[Any, ...], k: int, machine: Any) -> tuple[Any, ...]:
    return (*machines[:k], machine, *machines[k + 1:])


def recover(store: Store) -> tuple[Store, Finished]:
    """The sweep after everyone stopped: every lock is old by now, so every Expired is true."""
    sweep: Any = Sweep(tuple(name for name, _, _ in store))
    while not isinstance(step := sweep.step(), Finished):
        if isinstance(step, Expired):
            answer: Any = True
        else:
            store, answer = perform(store, step)
        sweep = sweep.after(answer)
    return store, step


def _check(state: State, initial: dict[str, int], actors: list[Actor]) -> str | None:
    store, ended, _, starts = state
    store, swept = recover(store)
    if swept.value or any(lock is not None for _, _, lock in store):
        return f"locks left after recovery: {store}"
    final = {name: data[0] for name, data, _ in store}
    if not serializable(initial, final, actors, list(ended), starts):
        outcomes = ", ".join(f"{a.name}={f.kind}:{f.value}" for a, f in zip(actors, ended, strict=True))
        return f"no serial order explains {outcomes} -> {final}"
    return None


def serializable(initial: dict[str, int], final: dict[str, int], actors: list[Actor], ended: list[Finished],
                 starts: tuple[frozenset[int] | None, ...]) -> bool:
    """Whether some serial order of the actors that took effect gives every answer they gave and
    the final values, and keeps real time (an actor that answered before another started comes
    first): committed and written ones took effect, crashed ones may have, cancelled ones must
    have seen their condition fail there (failed single writes too), conflicts took none."""
    sure = [k for k, f in enumerate(ended) if f.kind in ("committed", "cancelled", "written", "failed", "read")]
    maybe = [k for k, f in enumerate(ended) if f is CRASHED]
    for chosen in itertools.chain.from_iterable(itertools.combinations(maybe, r) for r in range(len(maybe) + 1)):
        for order in itertools.permutations(sure + list(chosen)):
            if any(j in order[i:] for i, k in enumerate(order) for j in starts[k] or ()):
                continue
            values = dict(initial)
            finished = {k: (None if k in chosen else ended[k]) for k in order}
            if all(actors[k].spec(values, finished[k]) for k in order) and values == final:
                return True
    return False
