"""`verify`: every export item read back from Bigtable, decoded, compared with the source.

In the spirit of the Spanner migration tool's report: what was loaded, what was skipped as
expired, what was dead-lettered and why, and every item that is missing or different.
For a full export, the items found in the table plus the expired plus the dead-lettered
must equal the manifest's item count, or the verification fails; for a chain (`--chain`),
the item count of its final state.

A live table changes after its export (serve, replicate): an item that differs from the
export, or that the table holds beyond it, is judged by when its row was written
(later_writes.py): after the export's time it is reported and expected, otherwise a failure
with examples. `reasons` says why a verification failed, first, in every output.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from google.cloud.bigtable.data import BigtableDataClientAsync, ReadRowsQuery, RowRange

from ..bigtable.deadlines import SCAN_ATTEMPT_SECONDS, SCAN_SECONDS, lookup_table
from ..bigtable.preflight import check_target
from ..bigtable.row_views import items_and_newest_record
from ..bigtable.table_types import agreed, read_types
from ..bigtable.table_types import where as where_recorded
from ..codec.codec import Codec, CodecError, Expired
from ..codec.items import Item
from ..codec.mutations import Cell
from ..codec.type_inference import AttributeTypes, held_types, infer_types
from ..exports.manifests import FULL_EXPORT, Manifest, open_export
from ..exports.reader import Record, read_records
from ..spec.families import family_names
from ..spec.model import TableSpec
from .chain import ordered_chain
from .later_writes import after_export, dated_families, written_micros
from .locks import locked_rows
from .run import all_items, export_fingerprint
from .state import STATE_FILE, LoadState, target
from .verify_report import CHAIN, VerifyReport
from .work_folder import dead_letter_records

LOOKUP_BATCH = 500


def canonical(value: Any) -> Any:
    """Values equal as DynamoDB sees them: numbers by value, sets unordered."""
    if isinstance(value, dict):
        if len(value) == 1:
            (tag, inner), = value.items()
            if tag == "N":
                return ("N", _number(inner))
            if tag == "NS":
                return ("NS", frozenset(_number(n) for n in inner))
            if tag in ("SS", "BS"):
                return (tag, frozenset(inner))
        return {k: canonical(v) for k, v in value.items()}
    if isinstance(value, list):
        return [canonical(v) for v in value]
    return value


def _number(text: str) -> Decimal | str:
    try:
        return Decimal(text).normalize()
    except InvalidOperation:
        return text


def _export_records(manifest: Manifest) -> Iterator[Record]:
    return (r for f in manifest.files for r in read_records(manifest, f))


def key_names(table: TableSpec) -> list[str]:
    return [k.name for k in (table.source.key.partition, table.source.key.sort) if k is not None]


def item_key(item: Item, names: list[str]) -> str:
    """An item's primary key as one comparable value (numbers by value)."""
    return repr([canonical(item.get(name)) for name in names])


def final_records(manifests: list[Manifest], table: TableSpec) -> list[Record]:
    """A chain's final state (`verify --chain`): the exports' records applied in memory in
    chain order, by primary key, so each key keeps its last put (the item as the chain
    leaves it) or the delete that removed it (verify checks it is absent). Memory grows
    with the table's key count; unreadable lines are kept as they are (dead letters)."""
    names = key_names(table)
    last: dict[str, Record] = {}
    unreadable: list[Record] = []
    for manifest in manifests:
        for record in _export_records(manifest):
            if record.kind == "error":
                unreadable.append(record)
                continue
            image = (record.item if record.kind == "put" else record.keys) or {}
            last[item_key(image, names)] = record
    return [*last.values(), *unreadable]


def _sampled(records: Iterable[Record], sample: int | None) -> Iterator[Record]:
    if sample is None:
        yield from records
        return
    chosen: list[Record] = []  # reservoir sampling: N records, one pass, fixed seed
    rng = random.Random(0)
    for i, record in enumerate(records):
        if i < sample:
            chosen.append(record)
        elif (j := rng.randint(0, i)) < sample:
            chosen[j] = record
    yield from chosen


# A row's items, or why its cells cannot be read back (a difference to report, not a crash).
RowItems = list[Item] | CodecError


class RowReader:
    """Rows by key, decoded with the codec; expired TTL cells are left out (the emulator's
    and Bigtable's GC are lazy). `verify` and replicate's `cutover check` read through it."""

    def __init__(self, table, codec: Codec, ttl_families: frozenset[str], now: int):
        self.table, self.codec, self.ttl_families, self.now = table, codec, ttl_families, now
        self.dated = dated_families(codec)
        self.view = items_and_newest_record(family_names(codec.table))  # not 24 h of stream records (row_views.py)
        self.written: dict[bytes, int | None] = {}  # the rows `lookup` read last: when each was written

    def _items(self, row) -> RowItems:
        cells = [Cell(c.family, c.qualifier, c.value, c.timestamp_micros) for c in row
                 if not (c.family in self.ttl_families and c.timestamp_micros < self.now)]  # GC is lazy
        try:
            return self.codec.decode(row.row_key, cells) if cells else []
        except CodecError as error:
            return error

    async def lookup(self, keys: list[bytes]) -> dict[bytes, RowItems]:
        rows = await self.table.read_rows(ReadRowsQuery(row_keys=list(dict.fromkeys(keys)), row_filter=self.view))
        self.written = {row.row_key: written_micros(row, self.dated) for row in rows}
        return {row.row_key: self._items(row) for row in rows}

    async def scan_beyond(self, export_keys: set[str], export_rows: set[bytes], report: VerifyReport) -> int:
        """Items in the table, each one the export does not hold judged in `report`
        (`VerifyReport.beyond`); a row that cannot be decoded counts as one item (its key is
        reported where an export item names it, else as beyond the export)."""
        count = 0
        names = list(report.key_names)
        rows = await self.table.read_rows_stream(ReadRowsQuery(row_ranges=[RowRange()], row_filter=self.view),
                                                 operation_timeout=SCAN_SECONDS, attempt_timeout=SCAN_ATTEMPT_SECONDS)
        async for row in rows:
            items = self._items(row)
            if isinstance(items, CodecError):
                count += 1
                if row.row_key not in export_rows:
                    report.beyond(row.row_key, None, written_micros(row, self.dated), unreadable(row.row_key, items))
                continue
            count += len(items)
            for item in items:
                if item_key(item, names) not in export_keys:
                    report.beyond(row.row_key, item, written_micros(row, self.dated))
        return count


async def verify_table(table: TableSpec, export: str, *, project: str, instance_id: str,
                       work_dir: Path | None = None, sample: int | None = None,
                       now_micros: int | None = None, chain: bool = False) -> VerifyReport:
    """The table against one export, or with `chain` against the final state of the chain
    of exports below `export` (its full export and incrementals, `chain.ordered_chain`)."""
    started = time.monotonic()
    manifests = ordered_chain(export) if chain else [open_export(export)]
    check_target(project, instance_id, table)  # credentials, endpoint, table: the cause in seconds
    now = now_micros or int(time.time() * 1_000_000)
    names = key_names(table)
    if chain:
        records: Iterable[Record] = final_records(manifests, table)
        report = VerifyReport(table=table.id, export=export, export_type=CHAIN, sampled=sample is not None,
                              manifest_items=sum(1 for r in records if r.kind == "put"))
    else:
        (manifest,) = manifests
        records = _export_records(manifest)
        report = VerifyReport(table=table.id, export=export, export_type=manifest.export_type,
                              manifest_items=manifest.item_count, sampled=sample is not None)
    report.export_time_micros, report.key_names = manifests[-1].export_time_micros, tuple(names)
    scanned = sample is None and report.export_type in (FULL_EXPORT, CHAIN)
    export_keys: set[str] = set()  # the export's keys and rows, when the table is scanned for what lies beyond
    export_rows: set[bytes] = set()
    seen: set[str] = set()  # every attribute name the export's items hold, for the indexes' keys
    codec = Codec(table, await _table_types(table, manifests, work_dir, project, instance_id))
    report.lossy = list(codec.lossy)
    dead = {(d["file"], d["line"]) for d in dead_letter_records(work_dir)} if work_dir else set()
    async with BigtableDataClientAsync(project=project) as client:
        reader = RowReader(lookup_table(client, instance_id, table.id), codec, codec.ttl_families, now)
        batch: list[tuple[Record, bytes]] = []
        for record in _sampled(records, sample):
            report.checked += 1
            if record.kind == "put" and record.item:
                seen.update(record.item)
            if scanned and record.kind != "error":
                export_keys.add(item_key((record.item if record.kind == "put" else record.keys) or {}, names))
            key = _row_to_read(record, codec, now, dead, report)
            if key is None:
                continue
            if scanned:
                export_rows.add(key)
            batch.append((record, key))
            if len(batch) >= LOOKUP_BATCH:
                await _compare(reader, batch, report, export_keys if scanned else None)
                batch = []
        if batch:
            await _compare(reader, batch, report, export_keys if scanned else None)
        if scanned:
            report.table_items = await reader.scan_beyond(export_keys, export_rows, report)
        report.locked_rows = await locked_rows(reader.table)
    report.notes = [f"index {index} is keyed on {name}, which none of the {report.checked:,} export items read has: "
                    f"DynamoDB leaves such items out of the index, so it holds nothing; a misspelt name in the spec?"
                    for index, name in table.source.index_keys if seen and name not in seen]
    report.seconds = time.monotonic() - started
    return report


def _row_to_read(record: Record, codec: Codec, now: int, dead: set[tuple[str, int]],
                 report: VerifyReport) -> bytes | None:
    """The row key to read for `record`, or None when it is judged without a read:
    dead-lettered, expired, or one the load could not have written."""
    if (record.file, record.line) in dead or record.kind == "error":
        report.dead_lettered += 1
        if (record.file, record.line) not in dead:
            report.problem(record, "unreadable line not dead-lettered", record.error or "")
        return None
    try:
        if record.kind == "put" and isinstance(
                codec.encode(record.item or {}, write_time_micros=0, now_micros=now), Expired):
            report.expired += 1
            return None
        return codec.row_key((record.item if record.kind == "put" else record.keys) or {})
    except CodecError as error:  # loaded, it would have been a dead letter
        report.mismatched += 1
        report.problem(record, "does not fit the table's types or mapping", str(error))
        return None


async def _compare(reader: RowReader, batch: list[tuple[Record, bytes]], report: VerifyReport,
                   export_keys: set[str] | None) -> None:
    """The batch's rows read and judged; each item's key as it reads back (a lossy mapping
    may not keep all of it) added to `export_keys`, for the scan of what lies beyond."""
    found = await reader.lookup([key for _, key in batch])
    for record, key in batch:
        items = found.get(key, [])
        if record.kind == "delete":
            if isinstance(items, CodecError):
                report.mismatched += 1
                report.problem(record, "different", unreadable(key, items))
                continue
            keys = canonical(record.keys)
            present = any(canonical({k: item.get(k) for k in record.keys or {}}) == keys for item in items)
            if present:
                report.mismatched += 1
                report.problem(record, "deleted item still present", key.decode("utf-8", "replace"))
            else:
                report.deleted_absent += 1
                report.matched += 1
            continue
        try:
            expected = reader.codec.expected(record.item or {}, now_micros=reader.now) or {}
        except CodecError as error:
            report.mismatched += 1
            report.problem(record, "does not fit the table's types or mapping", str(error))
            continue
        if export_keys is not None:
            export_keys.add(item_key(expected, list(report.key_names)))
        found_difference = item_difference(expected, items, key)
        written = reader.written.get(key)
        if found_difference is None:
            report.matched += 1
        elif found_difference.kind == "missing":
            report.missing += 1
            report.problem(record, "missing", found_difference.detail)
        elif not isinstance(items, CodecError) and after_export(written, report.export_time_micros):
            # serve or replicate wrote it since; a row that cannot be read back is wrong whenever written
            report.changed(record, key, written, found_difference.detail)
        else:
            report.mismatched += 1
            report.problem(record, found_difference.kind, found_difference.detail)


@dataclass(frozen=True)
class Difference:
    kind: str  # "missing" (no such row) or "different"
    detail: str  # the wording reports show
    attributes: tuple[str, ...] = ()  # the attributes that differ, for "different"


def unreadable(key: bytes, error: CodecError) -> str:
    return f"row {key.decode('utf-8', 'replace')} cannot be read back: {error}"


def item_difference(expected: Item, items: RowItems, key: bytes) -> Difference | None:
    """How the row at `key` (its decoded items) fails to hold `expected` (`Codec.expected`
    of the source item), None when one of its items equals it. Shared by `verify` and
    `cutover check` so both judge and word a difference the same way."""
    if isinstance(items, CodecError):
        return Difference("different", unreadable(key, items))
    wanted = canonical(expected)
    if any(canonical(item) == wanted for item in items):
        return None
    if not items:
        return Difference("missing", f"no row {key!r}")
    closest = items[0]
    names = tuple(name for name in sorted(set(expected) | set(closest))
                  if canonical(expected.get(name)) != canonical(closest.get(name)))
    return Difference("different", "attributes differ: " + ", ".join(names[:10]), names)


async def _table_types(table: TableSpec, manifests: list[Manifest], work_dir: Path | None, project: str,
                       instance_id: str) -> AttributeTypes:
    """The types the table's cells were written with: the table's record
    (bigtable/table_types.py), which a load's state for this target must agree with (across
    every export of its chain, whichever one is verified); without either, the exports' own
    types, inferred as a load of them would."""
    async with BigtableDataClientAsync(project=project) as client:
        record = await read_types(client, instance_id, table.id)
    folder: AttributeTypes = {}
    if work_dir is not None:
        where = target(project, instance_id, table.id)
        folder = LoadState.open(work_dir / STATE_FILE, export_fingerprint(manifests[-1], table), where)[0].table_types
    if folder or record:
        return held_types(table, agreed(folder, record, (work_dir or Path(".")) / STATE_FILE, instance_id, table.id),
                          where_recorded(instance_id, table.id))
    return infer_types((item for manifest in manifests for item in all_items(manifest)), table)


def run_verify(table: TableSpec, export: str, **kwargs: Any) -> VerifyReport:
    return asyncio.run(verify_table(table, export, **kwargs))
