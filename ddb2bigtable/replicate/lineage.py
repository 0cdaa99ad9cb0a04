"""Which shards may be read now, and whether the stream still reaches the start point.

Pure decisions over what DynamoDB Streams' DescribeStream says, so they are tested with
recorded answers (DynamoDB Local never splits a shard).

Lineage: a shard's records continue its parent's, so a child is read only after its
parent is finished (AWS, "DynamoDB Streams: reading and processing a stream": "process
a parent shard before you process a child shard"). A parent that DescribeStream no longer
lists has been trimmed (24 h retention): its child is ready.

Retention: a stream keeps records for 24 hours and knows nothing from before it was
enabled, so a start point before either cannot be reached: the writes between are in no
stream, and replicating would silently miss them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

RETENTION_MICROS = 24 * 3600 * 1_000_000
# ApproximateCreationDateTime is rounded down (to the second on AWS, to the minute by
# DynamoDB Local): a record written just after the start point may carry an earlier
# time. Records up to this margin before the start point are applied too: a harmless
# replay, where skipping one would lose a write.
START_MARGIN_MICROS = 60 * 1_000_000
REEXPORT = "re-export the table, load the export, then replicate within 24 h of its exportTime"


@dataclass(frozen=True)
class Shard:
    id: str
    parent: str | None
    closed: bool  # DescribeStream gives an EndingSequenceNumber: no more records will come


def shards_from(described: Iterable[Mapping[str, Any]]) -> list[Shard]:
    """DescribeStream's `Shards` entries as `Shard`s, in the order given."""
    return [Shard(s["ShardId"], s.get("ParentShardId"), "EndingSequenceNumber" in s.get("SequenceNumberRange", {}))
            for s in described]


def ready_shards(shards: list[Shard], finished: set[str]) -> list[Shard]:
    """The shards to read now: not finished, and their parent finished or trimmed away."""
    listed = {s.id for s in shards}
    return [s for s in shards if s.id not in finished
            and (s.parent is None or s.parent in finished or s.parent not in listed)]


def unreachable_start(start_micros: int, stream_created_micros: int | None, now_micros: int,
                      what: str = "the start point", remedy: str = REEXPORT) -> str | None:
    """Why the stream cannot hold every write since `start_micros` (None: it can)."""
    if stream_created_micros is not None and start_micros < stream_created_micros:
        return (f"the table's stream was enabled at {iso(stream_created_micros)}, after the start point "
                f"{iso(start_micros)}: writes in between are in no stream; {remedy}")
    if start_micros < now_micros - RETENTION_MICROS:
        return (f"{what} ({iso(start_micros)}) is more than 24 hours ago: the stream keeps 24 hours "
                f"of records, so older writes may be gone; {remedy}")
    return None


def before_start(record_micros: int, start_micros: int) -> bool:
    """A record from before the start point (allowing for the rounding of its time)."""
    return record_micros < start_micros - START_MARGIN_MICROS


def iso(micros: int) -> str:
    return datetime.fromtimestamp(micros / 1_000_000, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
