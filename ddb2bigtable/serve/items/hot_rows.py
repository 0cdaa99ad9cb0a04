"""Writes to one hot item hold, as DynamoDB's do (it takes up to 1,000 writes a second on one
partition: AWS, "Best practices for designing and using partition keys effectively",
https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html,
read 2026-11-29).

A read-check-write (item_ops.change_item, resolve.SingleWrite) loses its CheckAndMutate
when another writer changed the row between its read and its write, and starts over. Two
things keep a hot row from turning that into errors (issue 43: 12 of 640 UpdateItems on one
item reached the application as ProvisionedThroughputExceeded after 8 quick tries):

- `one_writer`: within a worker the read-check-writes of one row take turns (an asyncio
  lock per row, held only while someone writes or waits, so the table of locks is as
  large as the writes in flight), so they never lose to each other;
- a write that lost to another worker or instance tries again after a jittered exponential
  pause for as long as the request's `Deadline` allows: the machine's Pause step, which
  the driver answers (transactions/driver.py); only then does the SDK see
  ProvisionedThroughputExceeded and retry.
"""

from __future__ import annotations

import asyncio
import time
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from ..errors import ServeError, throttled
from ..transactions.driver import WRITE_BUDGET

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
