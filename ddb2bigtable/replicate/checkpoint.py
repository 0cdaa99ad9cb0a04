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
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..load.work_folder import replace_private
from ..spec.errors import InputError, Problem
from ..spec.file_limits import read_text
from ..spec.yaml_source import JsonPath, compose_text, format_path

CHECKPOINT = "replicate.json"
# A SequenceNumber of DynamoDB Streams is a string of 21 to 40 digits (API reference,
# https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_streams_StreamRecord.html,
# read 2026-11-25); fewer are accepted, as DynamoDB Local and the tests write them.
_SEQUENCE = re.compile(r"[0-9]{1,40}")
MAX_MICROS = 253_402_300_800_000_000  # 10000-01-01: a later time is no time a checkpoint holds


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
    """The saved checkpoint, None when there is none; a damaged one is bad input, located
    at the value at fault (resuming from a wrong place could skip records, and `cutover
    check` would judge the lag from it)."""
    if not os.path.lexists(path):
        return None
    text, unreadable = read_text(path, str(path), "a replication checkpoint", "delete it")
    if unreadable:
        raise _damaged(unreadable)
    try:
        data = json.loads(text)  # Infinity and NaN are read as floats, and refused below at their place
    except json.JSONDecodeError as error:
        raise _damaged(Problem(str(path), error.lineno, error.colno, "", f"not JSON: {error.msg}")) from None
    wrong = next(_wrong(data), None)
    if wrong is not None:
        doc, _ = compose_text(text, str(path))  # the same text, composed for each value's line and column
        where, message = wrong
        raise _damaged(doc.problem(where, message) if doc else Problem.about(str(path), format_path(where), message))
    return Checkpoint(data["stream_arn"], data["target"], data["start_micros"], data["saved_micros"], data["after"],
                      frozenset(data["finished"]), data.get("newest_micros"), data.get("caught_up_micros"))


def _damaged(problem: Problem) -> InputError:
    return InputError([replace(problem, message=f"the replication checkpoint is damaged: {problem.message}; delete "
                                                f"it and rerun with --since the export you loaded")])


def _wrong(data: object) -> Iterator[tuple[JsonPath, str]]:
    """The values that are not what `save_checkpoint` writes: (path, why), the first first."""
    if not isinstance(data, dict):
        yield (), "expected a JSON object"
        return
    missing = [key for key in ("stream_arn", "target", "start_micros", "saved_micros", "after", "finished")
               if key not in data]
    yield from (((key,), "missing") for key in missing)
    if not isinstance(data.get("stream_arn", ""), str) or not data.get("stream_arn", "-"):
        yield ("stream_arn",), "expected the stream's ARN"
    target = data.get("target", {})
    if not isinstance(target, dict) or not all(isinstance(v, str) for v in target.values()):
        yield ("target",), "expected the Bigtable target (project, instance, table, endpoint)"
    for key in ("start_micros", "saved_micros", "newest_micros", "caught_up_micros"):
        if key in data and (data[key] is not None or key in ("start_micros", "saved_micros")) \
                and not _is_micros(data[key]):
            yield (key,), f"{json.dumps(data[key])[:50]} is not a time in microseconds since 1970"
    after = data.get("after", {})
    if not isinstance(after, dict):
        yield ("after",), "expected shard ids and sequence numbers"
        after = {}
    for shard, sequence in after.items():
        if not (isinstance(sequence, str) and _SEQUENCE.fullmatch(sequence)):
            yield ("after", shard), f"{json.dumps(sequence)[:50]} is not a DynamoDB Streams sequence number (digits)"
    finished = data.get("finished", [])
    if not isinstance(finished, list) or not all(isinstance(s, str) for s in finished):
        yield ("finished",), "expected a list of shard ids"


def _is_micros(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < MAX_MICROS


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
