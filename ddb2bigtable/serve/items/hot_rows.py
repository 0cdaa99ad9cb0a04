"""Writes to one hot item hold, as DynamoDB's do (it takes up to 1,000 writes a second on one
partition: AWS, "Best practices for designing and using partition keys effectively",
https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html,
read 2026-11-29).

A read-check-write (item_ops.change_item) loses its CheckAndMutate when another writer
changed the row between its read and its write, and starts over. Two things keep a hot row
from turning that into errors (issue 43: 12 of 640 UpdateItems on one item reached the
application as ProvisionedThroughputExceeded after 8 quick tries):

- `one_writer`: within a worker the read-check-writes of one row take turns (an asyncio
  lock per row, held only while someone writes or waits, so the table of locks is as
  large as the writes in flight), so they never lose to each other;
- `tries`: a write that lost to another worker or instance tries again after a jittered
  exponential pause ("full jitter": AWS Architecture Blog, "Exponential Backoff And
  Jitter", https://aws.amazon.com/blogs/architecture/exponential-backoff-and-jitter/, read
  2026-11-29) for as long as the request's deadline allows; only then does the SDK see
  ProvisionedThroughputExceeded and retry.
"""

from __future__ import annotations

import asyncio
import random
import time
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from ..errors import ServeError, throttled

WRITE_BUDGET = 10.0  # seconds one write may spend waiting its turn and trying; the SDK's read timeout is 60 s
FIRST_PAUSE = 0.002  # seconds: about one CheckAndMutateRow on a nearby cluster
LONGEST_PAUSE = 0.2
_LOCKS: weakref.WeakValueDictionary[tuple[int, str, bytes], asyncio.Lock] = weakref.WeakValueDictionary()


class Deadline:
    """When the request's write must be done by (a monotonic clock)."""

    def __init__(self, seconds: float = WRITE_BUDGET):
        self.at = time.monotonic() + seconds

    def left(self) -> float:
        return self.at - time.monotonic()


def gave_up(table: str) -> ServeError:
    return throttled(f"the item's row in {table} kept changing while this write was checked; retry")


@asynccontextmanager
async def one_writer(table: str, row_key: bytes, deadline: Deadline) -> AsyncIterator[None]:
    """This worker's only writer of the row while inside; ProvisionedThroughputExceeded when
    the turn does not come before the deadline."""
    key = (id(asyncio.get_running_loop()), table, row_key)
    lock = _LOCKS.get(key)
    if lock is None:
        lock = _LOCKS[key] = asyncio.Lock()
    try:
        async with asyncio.timeout(max(deadline.left(), 0)):
            await lock.acquire()
    except TimeoutError:
        raise gave_up(table) from None
    try:
        yield
    finally:
        lock.release()


async def tries(deadline: Deadline) -> AsyncIterator[int]:
    """Attempt numbers 0, 1, 2, ... with a full-jitter pause between attempts, while the
    deadline leaves room for the pause; the caller raises `gave_up` after the last."""
    attempt = 0
    while True:
        yield attempt
        attempt += 1
        pause = random.uniform(0, min(LONGEST_PAUSE, FIRST_PAUSE * 2 ** min(attempt, 16)))  # noqa: S311 - jitter
        if pause >= deadline.left():
            return
        await asyncio.sleep(pause)
