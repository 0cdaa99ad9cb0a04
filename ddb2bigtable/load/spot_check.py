"""Before a load says "complete": the rows it counts as loaded are really in the table.

The resume state says which data files are done, but the table it describes can be gone:
dropped and recreated empty, or a new emulator on the same port. Counting those files
again would report rows that were never written, the worst thing a migration tool can
say. So every load, fresh or resumed, reads back a few rows of the files it counts: the
first put lines of up to `MAX_FILES` done files, spread over the export, encoded with the
load's own codec (same row keys), in one ReadRows call.

Only rows that must be there are asked for: not dead-lettered lines, not rows outside the
stage's sample, not items whose TTL passes within the hour (the TTL family's GC may have
dropped them, as DynamoDB would). Incremental exports are not checked: a later file of
the same export may delete a row an earlier file wrote.
"""

from __future__ import annotations

from dataclasses import dataclass

from google.api_core import exceptions
from google.cloud.bigtable.data import BigtableDataClientAsync, ReadRowsQuery

from ..bigtable.deadlines import lookup_table
from ..codec.codec import Codec
from ..codec.mutations import AddToCell, SetCell
from ..exports.manifests import FULL_EXPORT, DataFile, Manifest
from ..exports.reader import Record, read_records
from .buckets import route
from .state import FileCounts

MAX_FILES = 32
LINES_PER_FILE = 4
SOON_MICROS = 3600 * 1_000_000  # an item expiring within the hour may already be collected


@dataclass(frozen=True)
class Absent:
    """What the table lacks: sampled rows (export file and line) or the whole table."""

    checked: int
    missing: tuple[tuple[str, int], ...]
    table_missing: bool = False

    @property
    def files(self) -> set[str]:
        return {file for file, _ in self.missing}


def wanted_rows(manifest: Manifest, files: list[DataFile], codec: Codec, *, sample: float | None,
                now_micros: int, dead: set[tuple[str, int]]) -> dict[bytes, tuple[str, int]]:
    """Row keys the load must have written, a few per file spread over the export, with
    the line each comes from; none for an incremental export (its deletes remove rows)."""
    if manifest.export_type != FULL_EXPORT:
        return {}
    wanted: dict[bytes, tuple[str, int]] = {}
    for f in _spread(files):
        taken = 0
        for record in read_records(manifest, f):
            if taken == LINES_PER_FILE:
                break
            key = _expected_key(record, codec, manifest.export_time_micros, now_micros, sample, dead)
            if key is not None:
                wanted.setdefault(key, (record.file, record.line))
                taken += 1
    return wanted


async def absent_rows(wanted: dict[bytes, tuple[str, int]], *, project: str, instance_id: str, table_id: str,
                      app_profile_id: str | None) -> Absent:
    """Which of the wanted rows the table does not hold (all of them when it is gone)."""
    if not wanted:
        return Absent(0, ())
    async with BigtableDataClientAsync(project=project) as client:
        table = lookup_table(client, instance_id, table_id, app_profile_id)
        try:
            rows = await table.read_rows(ReadRowsQuery(row_keys=list(wanted)))
        except exceptions.NotFound:
            return Absent(len(wanted), tuple(wanted.values()), table_missing=True)
    present = {row.row_key for row in rows}
    return Absent(len(wanted), tuple(where for key, where in wanted.items() if key not in present))


def _spread(files: list[DataFile]) -> list[DataFile]:
    """At most MAX_FILES of them, evenly over the export (first and last included)."""
    if len(files) <= MAX_FILES:
        return files
    step = (len(files) - 1) / (MAX_FILES - 1)
    return [files[round(i * step)] for i in range(MAX_FILES)]


def _expected_key(record: Record, codec: Codec, write_time: int, now: int, sample: float | None,
                  dead: set[tuple[str, int]]) -> bytes | None:
    """The row key of a put line the load wrote (routed as the load routes it), or None."""
    if record.kind != "put" or (record.file, record.line) in dead:
        return None
    row = route(record, codec, write_time, now, sample, FileCounts()).row
    if row is None or any(isinstance(m, SetCell | AddToCell) and now < m.timestamp_micros <= now + SOON_MICROS
                          for m in row.mutations):
        return None  # dead-lettered, expired, sampled out, or expiring within the hour
    return row.key


def absent_sentence(absent: Absent, instance_id: str, table_id: str) -> str:
    if absent.table_missing:
        return (f"table {instance_id}/{table_id} does not exist, yet the resume state counts rows in it: create it "
                f"(load --create-tables) and rerun the load")
    file, line = absent.missing[0]
    return (f"{len(absent.missing)} of {absent.checked} sampled rows that this load counts as loaded are not in "
            f"{instance_id}/{table_id} (the first: {file} line {line}); the table was emptied, dropped or "
            f"recreated since those files were loaded. They are no longer marked done: rerun the load")
