"""What a worker's scans of a stream found, kept between GetRecords (emulator stages).

A scan of the stream family visits every row of the table on the emulator's side whatever
it returns, but what it returns is the larger cost: each row of records is a gRPC message
the client takes apart, about 0.24 s for 4,609 rows of records against 0.05 s for the same
rows holding none in the scan's time range (2026-12-07, benchmarks/README.md). So a worker
keeps the records its scans found, per shard in sequence order, and a later read scans only
the time since the last scan's bound (`Scanned.extend`): each record crosses the gRPC
channel once per worker, not once per GetRecords. The records are the cells themselves:
immutable once written (a record is never rewritten; GC only removes cells older than the
retention, which the reads leave out anyway).

Pure: no I/O; scan_source.py reads and decides when to scan.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from dataclasses import dataclass, field

from .positions import SHARDS, Position, at_time, sequence, shard_of_row
from .records import number_of

# The values a worker keeps of all its streams: past it the least recently scanned streams
# are forgotten, then the one read's oldest records (a reader behind them scans again from its
# own start). Local scale: the emulator's tables are small.
MAX_BYTES = 64 * 1024 * 1024
Record = tuple[str, int, bytes]  # sequence number, commit time (epoch micros), stored value
Cell = tuple[bytes, int, bytes, bytes]  # row key, commit time, column, value: a scan's cell


@dataclass
class Scanned:
    """A stream's records committed in [start, bound), per shard in sequence order, as of
    `taken` (time.monotonic() of the last scan)."""

    start: int
    bound: int
    taken: float
    shards: list[list[Record]] = field(default_factory=lambda: [[] for _ in range(SHARDS)])
    size: int = 0  # bytes of values held

    def extend(self, cells: Iterable[Cell], bound: int, taken: float) -> None:
        """Adds a scan of [self.bound, bound): its records are all later than those held,
        so each shard's list stays in order once the new ones are sorted among themselves."""
        new: list[list[Record]] = [[] for _ in range(SHARDS)]
        for row_key, micros, column, value in cells:
            if self.bound <= micros < bound:
                new[shard_of_row(row_key)].append((sequence(micros, row_key, number_of(column)), micros, value))
                self.size += len(value)
        for held, added in zip(self.shards, new, strict=True):
            held.extend(sorted(added))
        self.bound, self.taken = bound, taken
        if self.size > MAX_BYTES:
            self.trim(self._median_micros())

    def trim(self, oldest: int) -> None:
        """Forgets the records committed before `oldest` (past the retention, or over MAX_BYTES)."""
        if oldest <= self.start:
            return
        cut = at_time(oldest)
        for i, held in enumerate(self.shards):
            gone = bisect.bisect_left(held, cut, key=lambda r: r[0])
            self.size -= sum(len(value) for _, _, value in held[:gone])
            self.shards[i] = held[gone:]
        self.start = oldest

    def _median_micros(self) -> int:
        times = sorted(micros for held in self.shards for _, micros, _ in held)
        return times[len(times) // 2] if times else self.bound

    def covers(self, start: int) -> bool:
        """Whether every record from `start` to the bound is held."""
        return self.start <= start

    def after(self, position: Position, start: int, bound: int, most: int) -> list[Record]:
        """Up to `most` of the shard's records the position admits, committed in [start,
        bound), in order."""
        held = self.shards[position.shard]
        first = bisect.bisect_left(held, at_time(start), key=lambda r: r[0])
        if position.after:
            find = bisect.bisect_left if position.inclusive else bisect.bisect_right
            first = max(first, find(held, position.after, key=lambda r: r[0]))
        last = bisect.bisect_left(held, at_time(bound), key=lambda r: r[0])
        return held[first:min(last, first + most)]


def evicted(held: dict[str, Scanned], keep: str, limit: int = MAX_BYTES) -> list[str]:
    """The streams whose records to forget so that what is held stays within `limit` bytes:
    the least recently scanned first, never `keep` (the stream being read)."""
    total, out = sum(h.size for h in held.values()), []
    for arn, scanned in sorted(held.items(), key=lambda kv: kv[1].taken):
        if total <= limit:
            break
        if arn != keep:
            out.append(arn)
            total -= scanned.size
    return out
