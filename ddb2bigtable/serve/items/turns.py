"""Within a worker, the transactions on a row take turns: TransactGetItems together, a
TransactWriteItems alone, in the order they came (docs/transactions.md, "Within a worker").

The protocol needs none of it: between workers and instances, locks alone decide. But two
requests of one worker on the same rows would otherwise meet each other's locks: a writer
meeting a live transaction is cancelled (TransactionConflict), and a TransactGetItems whose
rows a writer changes between its two reads reads them all again, and is cancelled after
three tries. Taking turns, each waits instead, as DynamoDB Local's transactions on an item
do, and the protocol then finds the rows settled.

A row's turn is a gate passed in arrival order (asyncio.Lock is fair): a reader passes it
and is counted until done; a writer holds it for its whole turn, once the readers counted
before it are done. Rows are taken in one order (sorted), so no two requests wait on each
other: a chain of waits only goes to later rows. A turn that does not come within the
request's deadline is answered as a conflict on that row.

A writer whose turn has come reads, prewrites and, under a ClientRequestToken, commits
(none of which changes the readers' rows' data) while the readers before it finish their
reads, and waits for them only before a commit on one of their rows (without a token;
transactions/driver.Rows.after_readers). A reader asks the worker between its two reads
which transactions have not sent their commit (steps.Uncommitted) and reads around their
locks.

TransactGetItems of the same rows that arrive while one of them waits for its turn share
that one's read (`read_together`): it starts after all of them arrived and ends before any
of them answers, so the moment its snapshot is of lies within each one's own time, as
strict serializability asks. Under a writer, the readers that queue behind it make one
snapshot read (two ReadRows) between them instead of two ReadRows each.
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Hashable
from contextlib import asynccontextmanager
from typing import Any

from ..errors import ServeError
from ..transactions import cells
from ..transactions.steps import RowRef
from .hot_rows import Deadline


class _Turn:
    """One row's turns. A reader is counted on each row as it passes the row's gate, and is
    `passing` there until it has passed the gates of all its rows (then it reads)."""

    def __init__(self) -> None:
        self.gate = asyncio.Lock()
        self.readers = self.passing = 0
        self.idle, self.through = asyncio.Event(), asyncio.Event()  # no reader; no reader still passing
        self.idle.set()
        self.through.set()

    async def take(self, write: bool) -> None:
        if not write:
            async with self.gate:
                self.readers, self.passing = self.readers + 1, self.passing + 1
                self.idle.clear()
                self.through.clear()
            return
        await self.gate.acquire()
        try:  # readers counted before it may still be reading (`turns` says when they are done), but none
            await self.through.wait()  # still waiting at a later row's gate, which this writer may take next
        except BaseException:
            self.gate.release()
            raise

    def passed(self) -> None:
        """A reader counted here has passed all its gates."""
        self.passing -= 1
        if not self.passing:
            self.through.set()

    def give_back(self, write: bool) -> None:
        if write:
            self.gate.release()
            return
        self.readers -= 1
        if not self.readers:
            self.idle.set()


_TURNS: weakref.WeakValueDictionary[tuple[int, RowRef], _Turn] = weakref.WeakValueDictionary()


@asynccontextmanager
async def turns(rows: tuple[RowRef, ...], write: bool, conflict: Callable[[RowRef], ServeError]
                ) -> AsyncIterator[Callable[[], Awaitable[None]]]:
    """This request's turn on every row (`write`: alone); `conflict(row)` when a turn does not
    come in time. A writer's turn begins once no later request can start on its rows, while
    the readers that came before it may still be reading: it may read, prewrite and commit
    on other rows too, and awaits what it is given (`readers_gone`) before it commits on one
    of those rows. Past the deadline that
    wait ends anyway: the locks alone keep the protocol safe, turns only spare retries."""
    loop, deadline, held, passing = id(asyncio.get_running_loop()), Deadline(), list[_Turn](), True

    async def readers_gone() -> None:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(max(deadline.left(), 0)):
                for turn in held:
                    await turn.idle.wait()

    try:
        for row in sorted(rows, key=cells.split_row):
            turn = _TURNS.get((loop, row))
            if turn is None:
                turn = _TURNS[(loop, row)] = _Turn()
            try:
                async with asyncio.timeout(max(deadline.left(), 0)):
                    await turn.take(write)
            except TimeoutError:
                raise conflict(row) from None
            held.append(turn)
        if not write:
            for turn in held:
                turn.passed()
            passing = False
        yield readers_gone
    finally:
        for turn in held:
            if passing and not write:  # (a reader that gave up at a later gate)
                turn.passed()
            turn.give_back(write)


_WAITING: dict[tuple[int, Hashable], asyncio.Future[Any]] = {}  # (loop, what is read) -> the read not yet begun


async def read_together(rows: tuple[RowRef, ...], what: Hashable, conflict: Callable[[RowRef], ServeError],
                        read: Callable[[], Awaitable[Any]]) -> Any:
    """`read()` in a reader's turn on `rows`, shared with every request reading the same `what`
    that arrives before it begins (they answer from its result, or its error); one arriving
    after it began reads for itself. A reader whose request went away before its read began
    leaves the others to read for themselves."""
    loop = asyncio.get_running_loop()
    key = (id(loop), what)
    while (waiting := _WAITING.get(key)) is not None:
        try:
            return await asyncio.shield(waiting)
        except asyncio.CancelledError:
            if not waiting.cancelled():  # this request itself went away
                raise
    made = _WAITING[key] = loop.create_future()
    try:
        async with turns(rows, False, conflict):
            del _WAITING[key]  # from here on, a newcomer reads for itself
            result = await read()
    except asyncio.CancelledError:
        _forget(key, made)
        made.cancel()
        raise
    except BaseException as error:
        _forget(key, made)
        made.set_exception(error)
        made.exception()  # (marked retrieved: no joiner may be there to take it)
        raise
    made.set_result(result)
    return result


def _forget(key: tuple[int, Hashable], made: asyncio.Future[Any]) -> None:
    """The read `made` will not begin: newcomers no longer wait for it."""
    if _WAITING.get(key) is made:
        del _WAITING[key]
