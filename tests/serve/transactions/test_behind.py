"""A worker's requests wait for what a committed transaction still does behind its answer
only until it has written their rows (transactions/behind.py): pure asyncio, the task's
steps stand-ins (what they write is the driver's, tested elsewhere)."""

from __future__ import annotations

import asyncio

from ddb2bigtable.serve.transactions import behind

PRIMARY, X, Y = ("_tokens", b"t"), ("Contended", b"x"), ("Contended", b"y")


async def _rest(applied: asyncio.Event, released: asyncio.Event) -> None:
    """A committed transaction's last steps: the secondaries applied, then the primary released
    (which waits for `released`, as a slow round trip would)."""
    await asyncio.sleep(0)
    behind.wrote([X, Y])
    applied.set()
    await released.wait()


def test_a_secondary_is_free_once_applied_not_when_the_task_ends() -> None:
    asyncio.run(_free_once_applied())


def test_a_row_the_task_does_not_hold_waits_for_nothing() -> None:
    asyncio.run(_not_held())


async def _free_once_applied() -> None:
    applied, released = asyncio.Event(), asyncio.Event()
    behind.later(_rest(applied, released), (PRIMARY, X, Y))
    waiting = asyncio.ensure_future(behind.clear_of([X]))  # waits from before the apply
    await asyncio.wait_for(waiting, 0.5)  # the primary's release has not ended
    assert applied.is_set() and not released.is_set()
    primary = asyncio.ensure_future(behind.clear_of([PRIMARY]))
    await asyncio.sleep(0.01)
    assert not primary.done()  # the task still holds its primary
    released.set()
    await asyncio.wait_for(primary, 0.5)
    await behind.drain(1)


async def _not_held() -> None:
    go = asyncio.Event()

    async def holding_x() -> None:
        await go.wait()
        behind.wrote([X])

    behind.later(holding_x(), (PRIMARY, X))
    await asyncio.wait_for(behind.clear_of([Y]), 0.1)  # the task has not written X yet
    held = asyncio.ensure_future(behind.clear_of([X]))
    await asyncio.sleep(0.01)
    assert not held.done()
    go.set()
    await asyncio.wait_for(held, 0.5)
    await behind.drain(1)
