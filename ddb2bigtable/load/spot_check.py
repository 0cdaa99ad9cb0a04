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
the same export may delete a row an earlier file wrote. A file this run's encoder wrote
names its first rows itself (`candidate`, as it routes them), so only files done by an
earlier run are read again.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from google.api_core import exceptions
from google.cloud.bigtable.data import BigtableDataClientAsync, ReadRowsQuery

from ..bigtable.deadlines import lookup_table
from ..bigtable.row_views import ONE_CELL
from ..codec.codec import Codec
from ..codec.mutations import AddToCell, RowCells, RowMutation, SetCell
from ..exports.manifests import FULL_EXPORT, DataFile, Manifest
from ..exports.reader import read_records
from .buckets import route
from .state import FileCounts

MAX_FILES = 32
LINES_PER_FILE = 4
CANDIDATES = 2 * LINES_PER_FILE  # first rows an encoder names, in case Bigtable rejected some of them
SOON_MICROS = 3600 * 1_000_000  # an item expiring within the hour may already be collected

# A row the load wrote from a put line: its key, its line, and its cells' timestamps after
# the "now" it was routed with (a TTL in the future: it may expire before the check).
Candidate = tuple[bytes, int, tuple[int, ...]]


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
                now_micros: int, dead: set[tuple[str, int]],
                named: dict[str, list[Candidate]] | None = None) -> dict[bytes, tuple[str, int]]:
    """Row keys the load must have written, a few per file spread over the export, with
    the line each comes from; none for an incremental export (its deletes remove rows).
    `named`: the first rows of the files this run encoded (by file), instead of reading them."""
    if manifest.export_type != FULL_EXPORT:
        return {}
    wanted: dict[bytes, tuple[str, int]] = {}
    soon = now_micros + SOON_MICROS
    for f in _spread(files):
        taken = 0
        rows = (named or {}).get(f.key)
        for key, line, later in _first_rows(manifest, f, codec, now_micros, sample) if rows is None else rows:
            if taken == LINES_PER_FILE:
                break
            if (f.key, line) in dead or any(t <= soon for t in later):
                continue  # rejected by Bigtable, or expiring (or expired) within the hour
            wanted.setdefault(key, (f.key, line))
            taken += 1
    return wanted


def candidate(row: RowMutation | RowCells, line: int, now_micros: int) -> Candidate:
    """What `wanted_rows` needs of a row written from `line`, routed at `now_micros`."""
    if isinstance(row, RowCells):
        later = tuple(time for _, _, time in row.cells if time > now_micros)
    else:
        later = tuple(m.timestamp_micros for m in row.mutations
                      if isinstance(m, SetCell | AddToCell) and m.timestamp_micros > now_micros)
    return row.key, line, later


def _first_rows(manifest: Manifest, f: DataFile, codec: Codec, now: int, sample: float | None) -> Iterator[Candidate]:
    """The rows of a file's put lines, routed as the load routes them (none for a line
    dead-lettered, expired or sampled out), read again from the file."""
    for record in read_records(manifest, f):
        if record.kind == "put":
            row = route(record, codec, manifest.export_time_micros, now, sample, FileCounts()).row
            if row is not None:
                yield candidate(row, record.line, now)


async def absent_rows(wanted: dict[bytes, tuple[str, int]], *, project: str, instance_id: str, table_id: str,
                      app_profile_id: str | None, client: BigtableDataClientAsync | None = None) -> Absent:
    """Which of the wanted rows the table does not hold (all of them when it is gone);
    `client`: the load's, when it has one open."""
    if not wanted:
        return Absent(0, ())
    if client is None:
        async with BigtableDataClientAsync(project=project) as own:
            return await absent_rows(wanted, project=project, instance_id=instance_id, table_id=table_id,
                                     app_profile_id=app_profile_id, client=own)
    table = lookup_table(client, instance_id, table_id, app_profile_id)
    try:
        rows = await table.read_rows(ReadRowsQuery(row_keys=list(wanted), row_filter=ONE_CELL))  # not its records
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


def absent_sentence(absent: Absent, instance_id: str, table_id: str) -> str:
    if absent.table_missing:
        return (f"table {instance_id}/{table_id} does not exist, yet the resume state counts rows in it: create it "
                f"(load --create-tables) and rerun the load")
    file, line = absent.missing[0]
    return (f"{len(absent.missing)} of {absent.checked} sampled rows that this load counts as loaded are not in "
            f"{instance_id}/{table_id} (the first: {file} line {line}); the table was emptied, dropped or "
            f"recreated since those files were loaded. They are no longer marked done: rerun the load")
