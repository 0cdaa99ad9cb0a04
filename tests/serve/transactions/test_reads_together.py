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
