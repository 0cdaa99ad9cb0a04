"""One shard's pages through three overlapping stages: read (GetRecords), prepare (the
sink's: records -> Bigtable entries, or DynamoDB requests in reverse), write (`Run._apply`).

Reading waits mostly on DynamoDB, preparing is Python work, writing waits mostly on
Bigtable: done one after the other in one thread, each waited for the others (measured
in benchmarks/README.md). Here one thread reads the shard's pages back to back, up to
READ_AHEAD pages ahead of the preparing, while page k+1 is prepared and page k written.
The reads follow one another in their own thread rather than being started by the event
loop, which is busy with the writes: each next GetRecords then began 10-20 ms late, a
tenth of a 1,000-record page's read. Order is kept: pages are read one at a time from
one iterator, prepared and handed out in the order read, and the caller writes one
before asking for the next.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from .stream_records import Page, StreamRecord

P = TypeVar("P")
READ_AHEAD = 2  # pages read and not yet taken for preparing (memory: a page is up to 1 MB)


class PagePipeline(Generic[P]):
    """`next()`: the next page, prepared (None: no more in this visit). At most `budget`
    pages are read; reading stops after an empty or final page. What stopped the reading
    (DynamoDB out of reach) is raised by the `next()` that finds no page after it."""

    def __init__(self, pages: Iterator[Page], budget: int,
                 in_thread: Callable[..., Awaitable[object]], prepare: Callable[[Page], P]):
        self._pages, self._budget, self._in_thread, self._prepare = pages, budget, in_thread, prepare
        self._loop = asyncio.get_running_loop()
        self._read: asyncio.Queue[Page | None] = asyncio.Queue()
        self._slots = threading.Semaphore(READ_AHEAD)
        self._stop = threading.Event()
        self._done = False
        self._reading = asyncio.ensure_future(in_thread(self._read_all))
        self._ahead: asyncio.Future[P | None] | None = None

    def _read_all(self) -> None:
        """The reading thread: pages in order, each handed to the loop as soon as it is read."""
        try:
            for _ in range(self._budget):
                self._slots.acquire()
                if self._stop.is_set():
                    return
                page = next(self._pages, None)
                if page is None:
                    return
                self._loop.call_soon_threadsafe(self._read.put_nowait, page)
                if not page.raw or page.ended:
                    return
        finally:
            self._loop.call_soon_threadsafe(self._read.put_nowait, None)

    async def _prepared(self) -> P | None:
        page = await self._read.get()
        if page is None:
            self._done = True
            await self._reading  # raises what ended the reading, if it failed
            return None
        self._slots.release()
        return await self._in_thread(self._prepare, page)  # type: ignore[return-value]

    def next(self) -> asyncio.Future[P | None] | None:
        """Starts preparing the page read next (after the previous one was prepared)."""
        self._ahead = None if self._done else asyncio.ensure_future(self._prepared())
        return self._ahead

    async def settle(self) -> None:
        """Stops the reading and waits for work in flight (a stop or a failure): nothing is
        left running; pages read but not written are read again next time, the checkpoint
        being before them."""
        self._stop.set()
        self._slots.release()  # a reading thread waiting for a slot wakes and sees the stop
        pending = [f for f in (self._ahead, self._reading) if f is not None]
        await asyncio.wait(pending)
        for future in pending:
            if not future.cancelled():
                future.exception()  # seen: a failure already raised, or one nobody waits for now


class Sink(Protocol):
    """Where a direction writes a page's records: Bigtable (apply.BigtableSink) or the
    source DynamoDB table (reverse/writes.py). The run around it (rounds, shards, order,
    checkpoints, outages, dead letters, counts) is the same for both."""

    name: str  # what a write that failed past its retries names: "Bigtable table T in instance I"

    def encode(self, records: list[StreamRecord], start_micros: int) -> object:
        """The page's writes, made in a thread (Python work) while the previous page is written."""

    async def write(self, prepared: Prepared) -> dict[tuple[str, int], str]:
        """Writes a prepared page, its writes of one item in the records' order; answers the
        records refused (shard, sequence number) -> why. A side out of reach raises
        `Unavailable` or `WriteError`: nothing after the checkpoint counts as written."""


@dataclass(frozen=True)
class Prepared:
    """One page, its records kept (after the start point) and encoded by the sink."""

    page: Page
    records: list[StreamRecord]
    skipped: int  # records from before the start point
    start_micros: int
    writes: object  # the sink's (Sink.encode)
