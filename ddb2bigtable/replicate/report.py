"""What a replication run did: records applied per kind, rate, lag, where it stopped."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .lineage import iso

KINDS = ("insert", "modify", "remove", "ttl")


@dataclass
class ReplicateReport:
    table: str
    stream_arn: str
    start_micros: int
    resumed: bool  # from a checkpoint (else from the start point)
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KINDS, 0))
    dead_letters: int = 0
    skipped_before_start: int = 0
    shards_finished: int = 0
    shards_seen: int = 0
    seconds: float = 0.0
    newest_micros: int | None = None  # the newest applied record's ApproximateCreationDateTime
    newest_by_shard: dict[str, int] = field(default_factory=dict)  # the same, per shard
    ended_micros: int = 0
    stopped: str = "caught up"  # or "interrupted"
    dead_letter_file: str | None = None
    checkpoint_file: str = ""
    share: str = "0/1"  # --shards I/N
    shards_owned: int = 0  # of those seen, this share's
    waiting: list[str] = field(default_factory=list)  # ours, their parent another process's, unfinished
    waiting_parents: list[str] = field(default_factory=list)  # the parents of `waiting` another process reads
    outage: str | None = None  # DynamoDB or Bigtable out of reach now: what failed and when the next try is
    outage_side: str = "DynamoDB"  # the side out now, or last out (outage.DYNAMODB, outage.BIGTABLE)
    outages: int = 0  # outages waited out (or being waited out)
    held: str | None = None  # why the run writes nothing now (reverse: forward still runs), else None

    @property
    def applied(self) -> int:
        return sum(self.counts.values())

    @property
    def records_per_second(self) -> float:
        return (self.applied + self.dead_letters) / self.seconds if self.seconds > 0 else 0.0

    @property
    def lag_seconds(self) -> float | None:
        """Now (when the run ended) minus the newest applied record's time: how far Bigtable
        trails DynamoDB. Streams round record times down, so it reads up to a second (a
        minute on DynamoDB Local) high. None when nothing was applied."""
        return None if self.newest_micros is None else self._lag(self.newest_micros)

    def saw(self, shard: str, micros: int) -> None:
        """An applied record of `shard` from `micros`."""
        self.newest_micros = max(micros, self.newest_micros or micros)
        self.newest_by_shard[shard] = max(micros, self.newest_by_shard.get(shard, micros))

    def _lag(self, micros: int) -> float:
        return max(0.0, (self.ended_micros - micros) / 1_000_000)

    def as_json(self) -> dict[str, Any]:
        return {"table": self.table, "stream_arn": self.stream_arn, "start": iso(self.start_micros),
                "resumed": self.resumed, "stopped": self.stopped, "applied": self.applied,
                "inserts": self.counts["insert"], "modifies": self.counts["modify"],
                "removes": self.counts["remove"], "ttl_deletes": self.counts["ttl"],
                "dead_letters": self.dead_letters, "skipped_before_start": self.skipped_before_start,
                "shards": self.share, "shards_seen": self.shards_seen, "shards_owned": self.shards_owned,
                "shards_finished": self.shards_finished, "waiting_for_parents": self.waiting,
                "seconds": round(self.seconds, 3), "records_per_second": round(self.records_per_second, 1),
                "newest_record": iso(self.newest_micros) if self.newest_micros is not None else None,
                "lag_seconds": None if self.lag_seconds is None else round(self.lag_seconds, 1),
                "lag_by_shard_seconds": {shard: round(self._lag(newest), 1)
                                         for shard, newest in sorted(self.newest_by_shard.items())},
                "outages": self.outages, "checkpoint": self.checkpoint_file, "dead_letter_file": self.dead_letter_file}

