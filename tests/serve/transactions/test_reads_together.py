"""TransactGetItems of the same rows waiting for their turn share one read (items/turns.py,
`read_together`), and only while it has not begun: pure asyncio, the read a stand-in that
counts itself (what it reads is the driver's, tested elsewhere)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from ddb2bigtable.serve.errors import ServeError
from ddb2bigtable.serve.items.turns import read_together, turns

ROWS = (("TxAccounts", b"x"), ("TxAccounts", b"y"))


def _conflict(row: Any) -> ServeError:
    return ServeError("TransactionCanceledException", f"conflict on {row}")


class Reads:
    """The reads made: each waits for `go`, then answers its number."""

    def __init__(self) -> None:
        self.made = 0
        self.go = asyncio.Event()

    async def read(self) -> int:
        self.made += 1
        number = self.made
        await self.go.wait()
        return number


async def _writer_holding(rows: tuple[Any, ...], release: asyncio.Event, holding: asyncio.Event) -> None:
    async with turns(rows, True, _conflict):
        holding.set()
        await release.wait()


def test_readers_queued_behind_a_writer_share_one_read() -> None:
    async def test() -> None:
        reads, release, holding = Reads(), asyncio.Event(), asyncio.Event()
        writer = asyncio.create_task(_writer_holding(ROWS, release, holding))
        await holding.wait()
        waiting = [asyncio.create_task(read_together(ROWS, ROWS, _conflict, reads.read)) for _ in range(4)]
        await asyncio.sleep(0.01)
        assert reads.made == 0  # all wait for the writer's turn
        release.set()
        await writer
        await asyncio.sleep(0.01)
        late = asyncio.create_task(read_together(ROWS, ROWS, _conflict, reads.read))  # the shared read has begun
        other = asyncio.create_task(read_together(ROWS[:1], ROWS[:1], _conflict, reads.read))  # other rows
        await asyncio.sleep(0.01)
        reads.go.set()
        assert await asyncio.gather(*waiting) == [1, 1, 1, 1]
        assert sorted([await late, await other]) == [2, 3]
        assert reads.made == 3  # (fails before sharing: 6)

    asyncio.run(test())


def test_a_failed_shared_read_fails_every_reader_and_a_cancelled_one_leaves_them_to_read() -> None:
    async def test() -> None:
        release, holding = asyncio.Event(), asyncio.Event()
        writer = asyncio.create_task(_writer_holding(ROWS, release, holding))
        await holding.wait()

        async def fails() -> Any:
            raise ServeError("InternalServerError", "Bigtable did not answer")

        first = asyncio.create_task(read_together(ROWS, ROWS, _conflict, fails))
        await asyncio.sleep(0.01)
        joined = asyncio.create_task(read_together(ROWS, ROWS, _conflict, fails))
        release.set()
        await writer
        for task in (first, joined):
            with pytest.raises(ServeError, match="did not answer"):
                await task

        reads, release, holding = Reads(), asyncio.Event(), asyncio.Event()
        writer = asyncio.create_task(_writer_holding(ROWS, release, holding))
        await holding.wait()
        gone = asyncio.create_task(read_together(ROWS, ROWS, _conflict, reads.read))
        await asyncio.sleep(0.01)
        stays = asyncio.create_task(read_together(ROWS, ROWS, _conflict, reads.read))
        await asyncio.sleep(0.01)
        gone.cancel()  # its request went away before its read began
        await asyncio.sleep(0.01)
        release.set()
        reads.go.set()
        await writer
        assert await stays == 1 and reads.made == 1
        assert gone.cancelled()

    asyncio.run(test())


def test_a_writers_turn_begins_while_earlier_readers_read_and_its_writes_wait_for_them() -> None:
    """A writer's turn comes once no later request can start on its rows: it may read (and lock
    a token's row) while a reader that came first still reads, and `readers_gone` ends only
    when that reader is done (before: the writer's turn itself waited for the reader)."""
    async def test() -> None:
        reading, done = asyncio.Event(), asyncio.Event()

        async def reader() -> None:
            async with turns(ROWS, False, _conflict):
                reading.set()
                await done.wait()

        first = asyncio.create_task(reader())
        await reading.wait()
        entered = asyncio.Event()
        gone = asyncio.Event()

        async def writer() -> None:
            async with turns(ROWS, True, _conflict) as readers_gone:
                entered.set()
                await readers_gone()
                gone.set()

        second = asyncio.create_task(writer())
        await asyncio.wait_for(entered.wait(), 1)  # (fails before: the turn waited for the reader)
        later = asyncio.create_task(reader())  # a reader after the writer waits for the writer's turn to end
        await asyncio.sleep(0.01)
        assert not gone.is_set()
        done.set()
        await asyncio.wait_for(gone.wait(), 1)
        await asyncio.gather(first, second, later)

    asyncio.run(test())


def test_a_writer_never_takes_a_gate_a_reader_counted_before_it_still_needs() -> None:
    """A reader of rows a, b, c counted on a, waiting at b's gate (another writer holds b), gets
    through b and c before a writer of a and c that came after it on a takes c: else that
    writer, waiting for the reader to finish, and the reader, waiting at c, would wait for
    each other until the deadline (10 s; the bank test's transfers took such waits)."""
    a, b, c = ("TxAccounts", b"a"), ("TxAccounts", b"b"), ("TxAccounts", b"c")

    async def test() -> None:
        release, holding, done = asyncio.Event(), asyncio.Event(), asyncio.Event()
        first = asyncio.create_task(_writer_holding((b,), release, holding))
        await holding.wait()
        reading = asyncio.Event()

        async def reader() -> None:
            async with turns((a, b, c), False, _conflict):
                reading.set()
                await done.wait()

        counted = asyncio.create_task(reader())  # counted on a, waits at b
        await asyncio.sleep(0.01)
        gone = asyncio.Event()

        async def writer() -> None:
            async with turns((a, c), True, _conflict) as readers_gone:
                await readers_gone()
                gone.set()

        second = asyncio.create_task(writer())
        await asyncio.sleep(0.01)
        release.set()
        await asyncio.wait_for(reading.wait(), 1)  # (fails without the wait for readers passing: deadlock)
        done.set()
        await asyncio.wait_for(gone.wait(), 1)
        await asyncio.gather(first, counted, second)

    asyncio.run(test())
