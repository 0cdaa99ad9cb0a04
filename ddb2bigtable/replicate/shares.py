"""`--shards I/N`: which of the stream's shards this process reads, and how N processes
that share one work folder keep lineage order and their checkpoints apart.

Owner: shard `s` belongs to process `crc32(s) mod N` (I counts from 0, as Cloud Run's
CLOUD_RUN_TASK_INDEX and a Kubernetes indexed Job's JOB_COMPLETION_INDEX do). The hash
of the shard's own id never changes, unlike "the owner of its oldest listed ancestor",
which moves when that ancestor is trimmed (24 h) and would hand a half-read shard to a
process with no position for it while the first still reads it.

Lineage: a child may belong to another process than its parent, so it starts only after
the parent is finished in *any* checkpoint of the folder (each process reads its
siblings' files every round): every record of the parent is in Bigtable before the
child's first one is written. The work folder must therefore be shared by the N
processes (it also holds the load's types, which every one needs): a Cloud Storage
volume for a Cloud Run job, a ReadWriteMany volume for a Kubernetes Job.

Checkpoints: one file per share (`replicate.json` for 0/1, `replicate-I-of-N.json`
otherwise), each written by its process alone, so none overwrites another. Run again
with another N, a process starts from every file of the stream merged (the greatest
sequence number per shard, finished shards united): re-partitioning loses nothing. A
process refuses to start while one of another N still runs (its lock is held: the same
file locks as the work folder's, so on a volume without shared locks only processes of
one host see each other).

Direction: reverse replication (Bigtable back to DynamoDB, replicate/reverse/) shares the
same folder with its own names (`prefix` REVERSE: `replicate-reverse.json`,
`replicate-reverse-I-of-N.json`, its own locks and dead letters), so neither direction
reads, merges or overwrites the other's checkpoints.
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass
from pathlib import Path

from ..load.work_folder import LOCK, holder
from ..spec.errors import InputError, Problem
from .checkpoint import CHECKPOINT, Checkpoint, load_checkpoint

FORWARD, REVERSE = "replicate", "replicate-reverse"  # the direction's file names begin with it


def _files(prefix: str) -> re.Pattern[str]:
    return re.compile(re.escape(prefix) + r"(?:-(\d+)-of-(\d+))?\.json")


def _locks(prefix: str) -> re.Pattern[str]:
    return re.compile(re.escape(prefix) + r"-(\d+)-of-(\d+)\.lock")


@dataclass(frozen=True)
class Share:
    index: int = 0
    count: int = 1
    prefix: str = FORWARD  # the direction (FORWARD, REVERSE): its checkpoints, locks and dead letters

    def owns(self, shard_id: str) -> bool:
        return zlib.crc32(shard_id.encode()) % self.count == self.index

    @property
    def checkpoint_name(self) -> str:
        if self.count == 1:
            return CHECKPOINT if self.prefix == FORWARD else f"{self.prefix}.json"
        return f"{self.prefix}-{self.index}-of-{self.count}.json"

    @property
    def lock_name(self) -> str:
        """Forward's 0/1 holds the load's own lock (no load and replicate at once, as before
        shares); every other process its own."""
        if self.count == 1 and self.prefix == FORWARD:
            return LOCK
        return f"{self.prefix}-{self.index}-of-{self.count}.lock"

    @property
    def dead_letter_name(self) -> str:
        return f"{self.prefix}-dead-letters.jsonl" if self.count == 1 else \
            f"{self.prefix}-dead-letters-{self.index}-of-{self.count}.jsonl"

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def parse_share(text: str, prefix: str = FORWARD) -> Share:
    """`I/N` with 0 <= I < N, of the direction `prefix`."""
    match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
    if not match or not 0 <= int(match[1]) < int(match[2]):
        raise InputError([Problem.about(text, "--shards", "give I/N with 0 <= I < N: this process's index "
                                        "(from 0, as CLOUD_RUN_TASK_INDEX or JOB_COMPLETION_INDEX) and the "
                                        "number of processes, e.g. 0/4")])
    return Share(int(match[1]), int(match[2]), prefix)


def checkpoint_files(work_dir: Path, prefix: str = FORWARD) -> list[tuple[Path, int]]:
    """Every checkpoint of the direction `prefix` in the folder, with the N it was written for."""
    if not work_dir.is_dir():
        return []
    pattern = _files(prefix)
    found = [(p, pattern.fullmatch(p.name)) for p in sorted(work_dir.glob(f"{prefix}*.json"))]
    return [(p, int(m[2]) if m[2] else 1) for p, m in found if m]


def siblings(work_dir: Path, share: Share, stream_arn: str | None = None) -> list[tuple[Checkpoint, int]]:
    """The other checkpoints of the folder (of `stream_arn` when given), read now, with
    the N each was written for."""
    out = []
    for path, count in checkpoint_files(work_dir, share.prefix):
        if path.name == share.checkpoint_name:
            continue
        checkpoint = load_checkpoint(path)
        if checkpoint is not None and (stream_arn is None or checkpoint.stream_arn == stream_arn):
            out.append((checkpoint, count))
    return out


def finished_elsewhere(work_dir: Path, share: Share, stream_arn: str) -> frozenset[str]:
    """Shards another process has read to their end (their children may start)."""
    if share.count == 1:
        return frozenset()
    return frozenset().union(*(c.finished for c, _ in siblings(work_dir, share, stream_arn)))


def merged(checkpoints: list[Checkpoint]) -> Checkpoint | None:
    """One checkpoint holding all of them: where a process of a new partition starts."""
    if not checkpoints:
        return None
    after: dict[str, str] = {}
    for c in checkpoints:
        for shard, sequence in c.after.items():
            if shard not in after or int(sequence) > int(after[shard]):
                after[shard] = sequence
    first = checkpoints[0]
    return Checkpoint(first.stream_arn, first.target, min(c.start_micros for c in checkpoints),
                      max(c.saved_micros for c in checkpoints), after,
                      frozenset().union(*(c.finished for c in checkpoints)))


def other_partitions_running(work_dir: Path, share: Share) -> list[str]:
    """Processes of another N replicating from this folder now ("2/4 (PID 812)"), found by
    the locks they hold. Two partitions at once would each read shards the other's hash
    also gives out, and each start children from its own view of the parents. The 0/1
    process holds the load's lock, so a load running is named too."""
    pattern = _locks(share.prefix)
    names = [(p, f"{m[1]}/{m[2]}") for p in sorted(work_dir.glob(f"{share.prefix}-*-of-*.lock"))
             if (m := pattern.fullmatch(p.name)) and int(m[2]) != share.count]
    if share.count != 1 and share.prefix == FORWARD:
        names.append((work_dir / LOCK, "0/1 or a load"))
    return [f"{who} (PID {pid})" for path, who in names if (pid := holder(path))]


def running(work_dir: Path, prefix: str) -> list[str]:
    """Processes of the direction `prefix` at work in the folder now ("replicate 0/1 (PID
    812)"): the other direction waits for them (reverse) or refuses to start (forward).
    Forward's 0/1 holds the load's lock, so a load running is named too."""
    pattern = _locks(prefix)
    names = [(p, f"{prefix} {m[1]}/{m[2]}") for p in sorted(work_dir.glob(f"{prefix}-*-of-*.lock"))
             if (m := pattern.fullmatch(p.name))]
    if prefix == FORWARD:
        names.append((work_dir / LOCK, "replicate 0/1 (or a load)"))
    return [f"{who} (PID {pid})" for path, who in names if (pid := holder(path))]


def current_partition(work_dir: Path, prefix: str = FORWARD) -> list[Path]:
    """The checkpoint files of the latest partition (the N of the most recently saved file):
    `cutover check`'s lag is the worst of them; files of an earlier N are history."""
    saved = [(load_checkpoint(p), p, n) for p, n in checkpoint_files(work_dir, prefix)]
    live = [(c, p, n) for c, p, n in saved if c is not None]
    if not live:
        return []
    latest_n = max(live, key=lambda one: one[0].saved_micros)[2]
    return [p for _, p, n in live if n == latest_n]
