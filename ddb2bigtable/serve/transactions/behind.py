"""What a worker runs behind an answer: a committed transaction's remaining steps (its
secondaries applied, its primary's lock removed) after the client has its answer
(steps.Answer; docs/transactions.md, "What runs after the answer").

The worker owns these tasks: it keeps them until they end and waits for them at shutdown.
None of them is needed for safety. The transaction committed at its primary before the
answer, so if a task fails (a Bigtable error) or the worker dies first, the locks it leaves
say committed at the primary and the next reader or writer of those rows rolls them forward,
as after any crash; a failure is logged in one line, never raised.

A request of the same worker that reads a row such a task still holds waits until the task
has written it (`clear_of`, at most WAIT_SECONDS) rather than settling the lock itself: one
round of side-by-side calls instead of three calls one after another per row (read the
primary, roll the row forward, read it again). A secondary is free once applied, not when
the task ends: the primary's release after it is one more round trip nobody waits for
(the next transaction's primary is its own token's row). The wait only delays a read; what
it reads is the protocol's either way.
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
# (event loop, row) -> the task that holds the row, and what is done once it no longer does
_HOLDING: dict[tuple[int, RowRef], tuple[asyncio.Task[Any], asyncio.Future[None]]] = {}


def later(rest: Coroutine[Any, Any, Any], rows: Iterable[RowRef]) -> None:
    """Run `rest`, which holds `rows`, behind the answer being sent, on the running event loop."""
    loop = asyncio.get_running_loop()
    task = loop.create_task(_quietly(rest))  # (what it holds is set before it first runs)
    keys = [(id(loop), row) for row in rows]
    _RUNNING.add(task)
    _HOLDING.update((key, (task, loop.create_future())) for key in keys)

    def ended(done: asyncio.Task[Any]) -> None:
        _RUNNING.discard(done)
        for key in keys:
            _free(key, done)

    task.add_done_callback(ended)


def wrote(rows: Iterable[RowRef]) -> None:
    """The running task wrote `rows` for the last time: it no longer holds them (a task's
    secondaries are free once applied, while it goes on to release its primary), and whoever
    waits for them goes on now, not when the task ends."""
    if not _HOLDING:
        return
    task, loop = asyncio.current_task(), id(asyncio.get_running_loop())
    for row in rows:
        _free((loop, row), task)


def _free(key: tuple[int, RowRef], task: asyncio.Task[Any] | None) -> None:
    held = _HOLDING.get(key)
    if held is not None and held[0] is task:
        del _HOLDING[key]
        held[1].set_result(None)


async def clear_of(rows: Iterable[RowRef]) -> None:
    """Wait until this worker's tasks no longer hold any of `rows` (at most WAIT_SECONDS)."""
    if not _HOLDING:
        return
    loop = id(asyncio.get_running_loop())
    freed = {held[1] for row in rows if (held := _HOLDING.get((loop, row))) is not None}
    if freed:
        await asyncio.wait(freed, timeout=WAIT_SECONDS)


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
