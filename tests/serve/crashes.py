"""Killing a serve process while it holds transaction locks, for the crash tests.

A lock lives a few milliseconds now that secondaries are applied right after the answer, so
"see a lock, then SIGKILL" can kill a process whose locks were all released in between, and
the test then proves nothing. Freezing the process first (SIGSTOP), letting the requests it
had already sent land, and looking again makes the kill land on a process that holds locks.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import time
from collections.abc import Awaitable, Callable
from typing import Any

from botocore.exceptions import ClientError

SETTLE_SECONDS = 0.2  # mutations already on the wire when the process froze reach the emulator


async def kill_while_locked(victim: subprocess.Popen, locked: Callable[[], Awaitable[int]],
                            ready: Callable[[], bool] = lambda: True, seconds: float = 60) -> int:
    """SIGKILL `victim` at a moment Bigtable shows `locked()` > 0 with the process frozen, once
    `ready()`; how many are locked once it is dead (0 only if no such moment came in `seconds`)."""
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        if not ready() or await locked() == 0:
            await asyncio.sleep(0.01)
            continue
        os.kill(victim.pid, signal.SIGSTOP)
        await asyncio.sleep(SETTLE_SECONDS)
        if await locked():
            break
        os.kill(victim.pid, signal.SIGCONT)
    os.kill(victim.pid, signal.SIGKILL)
    victim.wait()
    return await locked()


def written_again(client: Any, table: str, keys: list[dict[str, Any]], until: float) -> list[dict[str, Any]]:
    """`SET w = 1` on each item, until every one is written or the monotonic clock reaches
    `until`: a lock the dead worker left is settled first, or, not expired yet, answered
    TransactionConflictException (DynamoDB's answer) and tried again. The keys not written."""
    pending = list(keys)
    while pending and time.monotonic() < until:
        for key in list(pending):
            try:
                client.update_item(TableName=table, Key=key, UpdateExpression="SET w = :w",
                                   ExpressionAttributeValues={":w": {"N": "1"}})
                pending.remove(key)
            except ClientError as error:
                assert error.response["Error"]["Code"] == "TransactionConflictException", error.response
        time.sleep(0.1)
    return pending
