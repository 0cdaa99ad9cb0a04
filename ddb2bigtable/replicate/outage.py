"""What interrupts a replication run: DynamoDB or Bigtable out of reach, and stop signals.

A side out of reach: a restart, a network blip, an overloaded endpoint. boto3 retries
each DynamoDB call (stream.MAX_ATTEMPTS), the writer each Bigtable write (up to
`WriteSettings.operation_timeout_seconds`); past that, a round fails with
`stream.Unavailable` or `load.writer.WriteError`, and the run waits it out here before
trying the round again from the checkpoint (what Bigtable acknowledged), with doubling
pauses of up to LONGEST_PAUSE, each announced (`ReplicateReport.outage`: the live line,
or a line on stderr) naming the side that is out. A `--follow` waits up to FOLLOW_LIMIT,
`--until-caught-up` up to CAUGHT_UP_LIMIT (`--outage-limit` sets either); then the run
ends with a `ServiceError` (exit 1) naming what is out: rerun to resume.
SIGINT (Ctrl-C) and SIGTERM ask the run to stop after the page in flight (`StopOnSignals`).
"""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import Callable
from typing import TypeVar

from ..load.writer import WriteError
from ..spec.errors import ServiceError
from .stream import Unavailable

FOLLOW_LIMIT = 900.0  # seconds an outage is waited out under --follow (shard iterators last 15 min)
CAUGHT_UP_LIMIT = 60.0  # under --until-caught-up
FIRST_PAUSE = 1.0
LONGEST_PAUSE = 30.0
STOP_CHECK = 0.2  # a stop asked during a pause is seen within this

T = TypeVar("T")
DYNAMODB, BIGTABLE = "DynamoDB", "Bigtable"  # which side is out


def out_of_reach(error: Unavailable | WriteError, bigtable: str) -> tuple[str, str]:
    """The side that is out and what failed, as the outage's messages say it (`bigtable`:
    "Bigtable table T in instance I"). A write's failure is worded here, not with the
    load's text: its source is a stream record (shard and sequence number, not a data
    file's line) and its remedy is waiting, not rerunning the load."""
    if isinstance(error, Unavailable):
        return DYNAMODB, f"{error.where} {error.detail}"
    if error.rows is None:
        return BIGTABLE, f"{bigtable} cannot be written past the writer's retries ({error.cause or error.what})"
    first = f" (first: shard {error.first.file} record {error.first.line}: {error.cause})" if error.first else ""
    return BIGTABLE, f"{bigtable} cannot be written: {error.rows} row(s) failed past the writer's retries{first}"


class Outage:
    """One run's outages: `wait` after a failed round, `over` after a good one."""

    def __init__(self, limit: float, notify: Callable[[str | None], None], resume_hint: str, bigtable: str = ""):
        """`notify(message)`: an outage's news (None: it is over; `side` says which side
        was out). `bigtable`: "Bigtable table T in instance I", how a failed write names it."""
        self.limit, self.notify, self.resume_hint, self.bigtable = limit, notify, resume_hint, bigtable
        self.began: float | None = None  # when the first failed round of this outage began
        self.side = DYNAMODB  # the side out in the latest failed round
        self.tries = 0
        self.count = 0  # outages ridden out so far

    async def wait(self, error: Unavailable | WriteError, round_began: float, stopping: Callable[[], bool]) -> None:
        """Pauses before the next try (returns early on a stop); raises a `ServiceError`
        once the outage has lasted `limit` seconds."""
        now = time.monotonic()
        if self.began is None:
            self.began, self.tries = round_began, 0
            self.count += 1
        self.tries += 1
        self.side, what = out_of_reach(error, self.bigtable)
        down = now - self.began
        if down >= self.limit:
            raise ServiceError(f"{what}; gave up after {down:,.0f} s of retries: "
                               f"rerun to resume ({self.resume_hint})") from None
        pause = min(LONGEST_PAUSE, FIRST_PAUSE * 2 ** (self.tries - 1), self.limit - down)
        self.notify(f"{what}; retrying in {pause:,.0f} s (out for {down:,.0f} s, "
                    f"giving up after {self.limit:,.0f} s)")
        until = time.monotonic() + pause
        while not stopping() and (left := until - time.monotonic()) > 0:
            await asyncio.sleep(min(STOP_CHECK, left))

    def over(self) -> None:
        """A round went through: the outage (if any) is over."""
        if self.began is not None:
            self.notify(None)
            self.began = None


def limit_for(follow: bool, limit: float | None = None) -> float:
    """`limit` (--outage-limit) when given, else the mode's own."""
    if limit is not None:
        return limit
    return FOLLOW_LIMIT if follow else CAUGHT_UP_LIMIT


async def answer(call: Callable[[], T], outage: Outage, stopping: Callable[[], bool]) -> T:
    """`call`'s answer (in a thread), DynamoDB out of reach waited out (a stop: the error)."""
    while True:
        began = time.monotonic()
        try:
            found = await asyncio.to_thread(call)
        except Unavailable as error:
            if stopping():
                raise
            await outage.wait(error, began, stopping)
            continue
        outage.over()
        return found


class StopOnSignals:
    """SIGINT and SIGTERM call `stop` (handlers on the running loop, in the main thread only)."""

    def __init__(self, stop: Callable[[], None]):
        self.stop = stop
        self.installed: list[signal.Signals] = []

    def __enter__(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                loop.add_signal_handler(sig, self.stop)
                self.installed.append(sig)
            except (ValueError, RuntimeError, NotImplementedError):  # not the main thread
                pass

    def __exit__(self, *exc: object) -> None:
        loop = asyncio.get_running_loop()
        for sig in self.installed:
            loop.remove_signal_handler(sig)
