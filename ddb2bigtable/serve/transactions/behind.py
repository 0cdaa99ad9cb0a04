"""What a worker runs behind an answer: a committed transaction's remaining steps (its
secondaries applied, its primary's lock removed) after the client has its answer
(steps.Answer; docs/transactions.md, "What runs after the answer").

The worker owns these tasks: it keeps them until they end and waits for them at shutdown.
None of them is needed for safety. The transaction committed at its primary before the
answer, so if a task fails (a Bigtable error) or the worker dies first, the locks it leaves
say committed at the primary and the next reader or writer of those rows rolls them forward,
as after any crash; a failure is logged in one line, never raised.

A request of the same worker that reads a row such a task still holds waits for the task
(`clear_of`, at most WAIT_SECONDS) rather than settling the lock itself: one round of
side-by-side calls instead of three calls one after another per row (read the primary,
roll the row forward, read it again). The wait only delays a read; what it reads is the
protocol's either way.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine, Iterable
from typing import Any

from .steps import RowRef

log = logging.getLogger("ddb2bigtable.serve")

WAIT_SECONDS = 1.0  # far above the few calls a task makes; past it the reader settles the locks itself

_RUNNING: set[asyncio.Task[Any]] = set()  # strong references: the event loop keeps only weak ones
_HOLDING: dict[tuple[int, RowRef], asyncio.Task[Any]] = {}  # (event loop, row) -> the task that holds the row


def later(rest: Coroutine[Any, Any, Any], rows: Iterable[RowRef]) -> None:
    """Run `rest`, which holds `rows`, behind the answer being sent, on the running event loop."""
    loop = asyncio.get_running_loop()
    task = loop.create_task(_quietly(rest))  # (what it holds is set before it first runs)
    keys = [(id(loop), row) for row in rows]
    _RUNNING.add(task)
    _HOLDING.update(dict.fromkeys(keys, task))

    def ended(done: asyncio.Task[Any]) -> None:
        _RUNNING.discard(done)
        for key in keys:
            if _HOLDING.get(key) is done:
                del _HOLDING[key]

    task.add_done_callback(ended)


def wrote(rows: Iterable[RowRef]) -> None:
    """The running task wrote `rows` for the last time: it no longer holds them (a task's
    secondaries are free once applied, while it goes on to release its primary)."""
    if not _HOLDING:
        return
    task, loop = asyncio.current_task(), id(asyncio.get_running_loop())
    for row in rows:
        if _HOLDING.get((loop, row)) is task:
            del _HOLDING[(loop, row)]


async def clear_of(rows: Iterable[RowRef]) -> None:
    """Wait for this worker's tasks that still hold any of `rows` (at most WAIT_SECONDS)."""
    if not _HOLDING:
        return
    loop = id(asyncio.get_running_loop())
    tasks = {task for row in rows if (task := _HOLDING.get((loop, row))) is not None}
    if tasks:
        await asyncio.wait(tasks, timeout=WAIT_SECONDS)


async def _quietly(rest: Coroutine[Any, Any, Any]) -> None:
    try:
        await rest
    except Exception as error:  # noqa: BLE001 - the rows are settled by whoever meets them next
        log.warning("a committed transaction's remaining steps stopped (%s: %s); the next reader or writer "
                    "of its rows rolls them forward", type(error).__name__, error)


async def drain(seconds: float) -> None:
    """Wait, at most `seconds`, for every task still running (a worker shutting down)."""
    if _RUNNING:
        await asyncio.wait(set(_RUNNING), timeout=seconds)
