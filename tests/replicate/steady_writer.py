"""Replication lag measured from the writer's side, for the lag test and the benchmark.

DynamoDB Local rounds a stream record's ApproximateCreationDateTime down to the minute,
so the report's lag (now minus that time) cannot show seconds there. Here each item
carries the moment it was written (`written_ns`), and the lag of a record is the time
from that write until Bigtable acknowledged the page holding it: `replicate` calls its
progress callback once per page, after the page's writes are acknowledged, and a
table of DynamoDB Local has one shard, so pages are acknowledged in the order read.
"""

from __future__ import annotations

import statistics
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from ddb2bigtable.replicate.stream import StreamReader

WRITTEN = "written_ns"
BATCH = 25  # items per BatchWriteItem, DynamoDB's limit


class TimedReader(StreamReader):
    """The table's stream, remembering each page's write times until the page is applied."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._pending: deque[list[int]] = deque()
        self.lags: list[float] = []  # seconds, one per record applied

    def read(self, arn, shard, after):
        for page in super().read(arn, shard, after):
            self._pending.append([int(r.new_image[WRITTEN]["N"]) for r in page.records
                                  if r.new_image and WRITTEN in r.new_image])
            yield page

    def applied(self, _report) -> None:
        """`replicate`'s progress callback: the oldest page read is in Bigtable now."""
        now = time.time_ns()
        if self._pending:
            self.lags += [(now - written) / 1e9 for written in self._pending.popleft()]


@dataclass
class SteadyWriter:
    """Puts `rate` items a second into `table` for `seconds` (the items due at each
    moment in one batch), then sets `done` (a `--follow` run given it as its stop event
    ends after the page in flight)."""

    client: object
    table: str
    rate: float
    seconds: float
    done: threading.Event = field(default_factory=threading.Event)
    applied: Callable[[], int] | None = None  # how many writes replicate has applied: wait for all
    written: int = 0
    elapsed: float = 0.0
    errors: list[str] = field(default_factory=list)

    def start(self) -> threading.Thread:
        thread = threading.Thread(target=self._run, daemon=True)
        thread.start()
        return thread

    def _run(self) -> None:
        began = time.monotonic()
        try:
            while (now := time.monotonic() - began) < self.seconds:  # at most `rate` a second, never later
                due = min(BATCH, int(now * self.rate) + 1 - self.written)
                if due <= 0:  # ahead of the schedule: wait for the next write's time
                    time.sleep(self.written / self.rate - now)
                    continue
                self._put(due)
            self.elapsed = time.monotonic() - began
            deadline = time.monotonic() + 60  # the last writes' turn to be applied (their lag counts too)
            while self.applied is not None and self.applied() < self.written and time.monotonic() < deadline:
                time.sleep(0.05)
            if self.applied is None:
                time.sleep(3)
        except Exception as error:  # reported by the caller, which must still be stopped
            self.errors.append(repr(error))
        finally:
            self.done.set()

    def _put(self, count: int) -> None:
        """The next `count` items in one BatchWriteItem (one PutItem each would bound the
        rate by one round trip per item), each stamped with the moment it was sent."""
        sent = str(time.time_ns())
        wanted = {self.table: [{"PutRequest": {"Item": {
            "year": {"N": "2030"}, "title": {"S": f"Steady {self.written + i}"},
            "info": {"M": {"rating": {"N": "5"}}}, WRITTEN: {"N": sent}}}} for i in range(count)]}
        while wanted:
            wanted = self.client.batch_write_item(RequestItems=wanted).get("UnprocessedItems")  # type: ignore[attr-defined]
        self.written += count

    @property
    def achieved_rate(self) -> float:
        return self.written / self.elapsed if self.elapsed else 0.0


def percentile(values: list[float], p: float) -> float:
    """The p-th percentile (0-100) by the nearest-rank rule."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(p / 100 * len(ordered)) - 1))]


def summary(lags: list[float]) -> dict[str, float]:
    return {"p50": percentile(lags, 50), "p99": percentile(lags, 99), "max": max(lags),
            "mean": statistics.fmean(lags)}
