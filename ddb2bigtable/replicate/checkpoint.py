"""Where replication stands: per shard, the last sequence number whose write Bigtable
acknowledged, and which shards are finished.

Saved in the load's work folder (`replicate.json` beside the load's `state.json`), 0600,
atomically (write + rename) and only after the writes it covers are acknowledged: a kill
at any moment leaves a checkpoint at or before what Bigtable holds, and the rerun
replays from there, which is harmless (apply.py says why). Bound to one stream and one
Bigtable target: another stream (the stream was disabled and enabled again) left writes
in neither, and another target holds none of these rows, so either is refused.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..load.work_folder import replace_private
from ..spec.errors import InputError, Problem

CHECKPOINT = "replicate.json"


@dataclass(frozen=True)
class Checkpoint:
    stream_arn: str
    target: dict[str, str]
    start_micros: int  # where replication began: records before it are skipped on new shards
    saved_micros: int = 0
    after: dict[str, str] = field(default_factory=dict)  # shard -> last applied sequence number
    finished: frozenset[str] = frozenset()  # closed shards read to their end
    # For `cutover check`'s lag: the newest applied record's time, and when a run last
    # found every shard empty (everything written before it is in Bigtable).
    newest_micros: int | None = None
    caught_up_micros: int | None = None

    def advanced(self, shard: str, sequence: str | None, finished: bool, now_micros: int,
                 newest_micros: int | None = None) -> Checkpoint:
        after = {**self.after, shard: sequence} if sequence else self.after
        newest = max(filter(None, (self.newest_micros, newest_micros)), default=None)
        return replace(self, after=after, finished=self.finished | {shard} if finished else self.finished,
                       saved_micros=now_micros, newest_micros=newest)


def load_checkpoint(path: Path) -> Checkpoint | None:
    """The saved checkpoint, None when there is none; a damaged one is bad input (resuming
    from nothing could skip records, starting over needs a start point)."""
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return Checkpoint(str(data["stream_arn"]), dict(data["target"]), int(data["start_micros"]),
                          int(data["saved_micros"]), {str(k): str(v) for k, v in data["after"].items()},
                          frozenset(map(str, data["finished"])), _micros(data.get("newest_micros")),
                          _micros(data.get("caught_up_micros")))
    except (OSError, UnicodeDecodeError, ValueError, TypeError, KeyError, AttributeError) as error:
        raise InputError([Problem.about(str(path), "", f"the replication checkpoint is damaged "
                                        f"({type(error).__name__}: {error}); delete it and rerun "
                                        f"with --since the export you loaded")]) from None


def _micros(value: object) -> int | None:
    """An optional time (checkpoints saved before `cutover check` have none)."""
    return None if value is None else int(value)  # type: ignore[call-overload]


def save_checkpoint(path: Path, checkpoint: Checkpoint) -> None:
    document = {"stream_arn": checkpoint.stream_arn, "target": checkpoint.target,
                "start_micros": checkpoint.start_micros, "saved_micros": checkpoint.saved_micros,
                "after": checkpoint.after, "finished": sorted(checkpoint.finished),
                "newest_micros": checkpoint.newest_micros, "caught_up_micros": checkpoint.caught_up_micros}
    replace_private(path, json.dumps(document, indent=1, sort_keys=True))


def resume_problem(checkpoint: Checkpoint, path: Path, stream_arn: str, target: dict[str, str]) -> str | None:
    """Why this checkpoint cannot be resumed against this stream and target (None: it can)."""
    if checkpoint.target != target:
        return (f"was written for {checkpoint.target}, not {target}: delete it (or give another --work-dir) and "
                f"rerun with --since the export loaded into this target")
    if checkpoint.stream_arn != stream_arn:
        return (f"belongs to the stream {checkpoint.stream_arn}; the table's stream is now {stream_arn} (it was "
                f"disabled and enabled again: writes in between are in neither). Re-export, load, delete {path} "
                f"and replicate with --since the new export")
    return None
