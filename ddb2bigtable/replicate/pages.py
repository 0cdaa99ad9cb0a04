"""One shard's pages through three overlapping stages: read (GetRecords), prepare (the
codec: records -> Bigtable entries), write (`_Run._apply`).

Reading waits mostly on DynamoDB, preparing is Python work, writing waits mostly on
Bigtable: done one after the other in one thread, each waited for the others (measured
in benchmarks/README.md: preparing in the read thread made a page's read and encode
take as long as the two added). Here page k+2 is read while k+1 is prepared and k is
written. Order is kept: pages are read one at a time from one iterator, prepared and
handed out in the order read, and the caller writes one before asking for the next.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from typing import Generic, TypeVar

from .stream import Page

P = TypeVar("P")


class PagePipeline(Generic[P]):
    """`next()`: the next page, prepared (None: no more in this visit). At most `budget`
    pages are read; reading stops after an empty or final page."""

    def __init__(self, pages: Iterator[Page], budget: int,
                 in_thread: Callable[..., Awaitable[object]], prepare: Callable[[Page], P]):
        self._pages, self._budget, self._in_thread, self._prepare = pages, budget, in_thread, prepare
        self._reads = 0
        self._raw: asyncio.Future[Page | None] | None = self._read()
        self._ahead: asyncio.Future[P | None] | None = None

    def _read(self) -> asyncio.Future[Page | None]:
        self._reads += 1
        return asyncio.ensure_future(self._in_thread(next, self._pages, None))  # type: ignore[arg-type]

    async def _prepared(self, raw: asyncio.Future[Page | None]) -> P | None:
        page = await raw
        if page is None:
            return None
        more = bool(page.raw) and not page.ended
        self._raw = self._read() if more and self._reads < self._budget else None
        return await self._in_thread(self._prepare, page)  # type: ignore[return-value]

    def next(self) -> asyncio.Future[P | None] | None:
        """Starts preparing the page read next (after the previous one was prepared)."""
        raw, self._raw = self._raw, None
        self._ahead = None if raw is None else asyncio.ensure_future(self._prepared(raw))
        return self._ahead

    async def settle(self) -> None:
        """Waits for work in flight (a stop or a failure): nothing is left running; pages
        read but not written are read again next time, the checkpoint being before them."""
        pending = [f for f in (self._ahead, self._raw) if f is not None and not f.done()]
        if pending:
            await asyncio.wait(pending)
