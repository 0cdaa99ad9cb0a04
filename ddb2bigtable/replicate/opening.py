"""Where a replication run begins: the start point `--since` names, the checkpoint to
resume (or a new one), and the types the load wrote the table with. Each refuses, with
what to do, a start that would lose writes: a stream that no longer reaches back, a
checkpoint of another table or instance, a `--since` beside an existing checkpoint, a
partition of another N still running in the folder.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from google.cloud.bigtable.data import BigtableDataClientAsync

from ..bigtable.table_types import held_by_table, read_types
from ..exports.manifests import ExportError, open_export
from ..load.state import STATE_FILE, LoadState
from ..load.writer import WriteError
from ..spec.errors import InputError, Problem, ServiceError
from ..spec.model import TableSpec
from .checkpoint import Checkpoint, load_checkpoint, resume_problem
from .lineage import REEXPORT, unreachable_start
from .outage import Outage
from .shares import FORWARD, REVERSE, Share, merged, other_partitions_running, running, siblings

LOADED_EXPORT = "the export you loaded (or its exportTime)"  # forward's first --since


def start_point(since: str) -> int:
    """`--since`: an ISO 8601 time with its zone, else an export whose exportTime it is."""
    try:
        moment = datetime.fromisoformat(since.replace("Z", "+00:00"))
    except ValueError:
        try:
            return open_export(since).export_time_micros
        except ExportError as error:
            raise InputError([Problem.about(since, "--since", f"neither a time (2026-11-24T01:00:00Z) nor a "
                                            f"readable export: {error}")]) from None
    if moment.tzinfo is None:
        raise InputError([Problem.about(since, "--since", "give the time's zone (Z for UTC, or +02:00)")])
    return int(moment.timestamp() * 1_000_000)


def require_seconds(value: float, command: str, option: str) -> None:
    """A limit in seconds (`--outage-limit`, `--max-lag`) must be a number above 0: 0 or
    less would make every run give up or every check fail, and nan compares false with all."""
    if not (math.isfinite(value) and value > 0):
        raise InputError([Problem.about(command, option, f"must be a number of seconds above 0, not {value:g}")])


def now_micros() -> int:
    return time.time_ns() // 1000


async def recorded_types(table: TableSpec, work_dir: Path, where: dict[str, str]) -> dict[str, str]:
    """The types the table's cells were written with, from the table's record
    (bigtable/table_types.py) and the load's work folder, which must agree: replication
    must write the same, and `cutover check` decode with them."""
    state_file = work_dir / STATE_FILE
    folder = LoadState.open(state_file, "", where)[0].table_types if state_file.is_file() else {}
    async with BigtableDataClientAsync(project=where["project"]) as client:
        record = await read_types(client, where["instance"], table.id)
    if not folder and not record:
        raise InputError([Problem.about(str(state_file), "", f"no load of {table.id} into {where} is recorded "
                                        f"here nor in the table: load the export first (replication writes with "
                                        f"the types the load inferred), or give its --work-dir")])
    return held_by_table(table, folder, record, state_file, where["instance"])


async def types_waited_for(table: TableSpec, work_dir: Path, where: dict[str, str], outage: Outage,
                           stopping: Callable[[], bool]) -> dict[str, str]:
    """`recorded_types`, read before any checkpoint is written (a table never loaded
    leaves no checkpoint behind). Bigtable out of reach is an outage like a failed write,
    waited out up to the run's limit; bad input is not retried."""
    while True:
        began = time.monotonic()
        try:
            types = await recorded_types(table, work_dir, where)
        except ServiceError as error:
            await outage.wait(WriteError("the record of the table's types", cause=str(error)), began, stopping)
            continue
        outage.over()
        return types


def opening_checkpoint(since_micros: int | None, share: Share, path: Path, arn: str, where: dict[str, str],
                       created: int | None, first_since: str = LOADED_EXPORT, remedy: str = REEXPORT) -> Checkpoint:
    """The checkpoint to resume (this share's, else every file of the folder merged: a
    new partition), or a new one at the start point; refuses what would lose writes. The
    N processes of one partition may all start with --since (at once, as a job's tasks).
    Forward replication refuses to start while reverse replication runs in the folder: it
    would copy the reverse direction's writes to DynamoDB back into Bigtable, older images
    over newer ones (the reverse direction waits for forward's end instead: reverse/run.py)."""
    backwards = running(path.parent, REVERSE) if share.prefix == FORWARD else []
    if backwards:
        raise InputError([Problem.about(str(path.parent), "replicate", f"reverse replication ({', '.join(backwards)}) "
                                        f"is writing Bigtable's changes into DynamoDB from this work folder: "
                                        f"forward replication would copy them back, older images over newer ones; "
                                        f"stop it first (docs/migration-guide.md, rolling back)")])
    others_n = other_partitions_running(path.parent, share)
    if others_n:
        raise InputError([Problem.about(str(path.parent), "--shards", f"replicate {', '.join(others_n)} is using this "
                                        f"work folder with another number of processes: two partitions at once "
                                        f"would read some shards twice and start children early; stop those "
                                        f"processes, then run all of them with --shards I/{share.count}")])
    own, others = load_checkpoint(path), siblings(path.parent, share)
    saved = own or merged([c for c, _ in others])
    now = now_micros()
    if since_micros is not None and (own or any(n != share.count for _, n in others)):
        raise InputError([Problem.about(str(path.parent), "--since", "a checkpoint exists (replicate*.json): "
                                        "rerun without --since to resume from it, or delete the "
                                        "checkpoints to start again from --since")])
    if since_micros is not None:
        saved = None
    elif saved is None:
        raise InputError([Problem.about(str(path), "--since", f"no checkpoint yet: give --since {first_since}")])
    if saved is not None:
        why = resume_problem(saved, path, arn, where)
        if why:
            raise InputError([Problem.about(str(path), "", f"cannot resume: the checkpoint {why}")])
        why = unreachable_start(saved.saved_micros, None, now, "its last save", remedy)
        if why:
            raise InputError([Problem.about(str(path), "", f"cannot resume from this checkpoint: {why}")])
        return saved
    assert since_micros is not None
    why = unreachable_start(since_micros, created, now, remedy=remedy)
    if why:
        raise InputError([Problem.about(arn, "--since", why)])
    return Checkpoint(arn, where, since_micros, now)
