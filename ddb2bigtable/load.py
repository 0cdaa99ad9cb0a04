"""The data load: a DynamoDB export into one Bigtable table, with nothing lost silently.

Manifest first (counts, md5 of every data file), then each data file streamed line by
line through the codec into the writer. Every item ends in exactly one bucket: loaded,
skipped as expired (TTL in the past), sampled out (a stage's `load.sample`), or
dead-lettered with its file, line and reason. The report adds them up against the
manifest's item count; `complete` is false when they do not match.
"""

from __future__ import annotations

import asyncio
import gc
import hashlib
import json
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from .codec import Codec, CodecError, Expired
from .export_reader import DataFile, ExportError, Manifest, Record, open_export, read_records, verify_file
from .load_state import FileCounts, LoadState, fingerprint
from .mutations import RowMutation
from .spec import TableSpec
from .type_inference import infer_types
from .writer import Source, WriteError, Writer, WriteSettings

DEAD_LETTER_DIR = "dead-letters"


@dataclass
class FileReport:
    file: str
    manifest_items: int
    counts: FileCounts
    status: str  # "loaded" | "resumed: already loaded" | "failed"
    error: str | None = None


@dataclass
class LoadReport:
    table: str
    instance: str
    export: str
    export_type: str
    output_format: str
    manifest_items: int
    files: list[FileReport] = field(default_factory=list)
    lossy: list[str] = field(default_factory=list)
    seconds: float = 0.0
    dead_letter_file: str | None = None
    error: str | None = None

    def total(self, name: str) -> int:
        return sum(getattr(f.counts, name) for f in self.files)

    @property
    def accounted(self) -> int:
        names = ("loaded", "expired", "dead_lettered", "sampled_out", "deleted")
        return sum(self.total(n) for n in names)

    @property
    def complete(self) -> bool:
        return self.error is None and all(f.status != "failed" for f in self.files) \
            and self.accounted == self.manifest_items

    @property
    def items_per_second(self) -> float:
        written = sum(f.counts.read for f in self.files if f.status == "loaded")
        return written / self.seconds if self.seconds else 0.0


@dataclass(frozen=True)
class LoadOptions:
    project: str
    instance_id: str
    app_profile_id: str | None
    work_dir: Path
    sample: float | None = None
    now_micros: int | None = None  # for tests: "now" when judging TTL expiry
    writer: WriteSettings = field(default_factory=WriteSettings)


def in_sample(row_key: bytes, fraction: float | None) -> bool:
    """A stable sample: the same rows are in it on every run and machine."""
    if fraction is None or fraction >= 1:
        return True
    digest = hashlib.blake2b(row_key, digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64 < fraction


class _DeadLetters:
    """One JSONL file per data file, truncated when that file starts: a rerun never duplicates."""

    def __init__(self, directory: Path, data_file: str):
        directory.mkdir(parents=True, exist_ok=True)
        name = hashlib.sha256(data_file.encode()).hexdigest()[:16] + ".jsonl"
        self.path = directory / name
        self.handle = self.path.open("w", encoding="utf-8")

    def add(self, file: str, line: int, reason: str, raw: str | None = None) -> None:
        record = {"file": file, "line": line, "reason": reason}
        if raw is not None:
            record["raw"] = raw
        self.handle.write(json.dumps(record) + "\n")

    def close(self) -> None:
        self.handle.close()
        if self.path.stat().st_size == 0:
            self.path.unlink()


def dead_letter_records(work_dir: Path) -> Iterator[dict]:
    for part in sorted((work_dir / DEAD_LETTER_DIR).glob("*.jsonl")):
        with part.open(encoding="utf-8") as handle:
            for line in handle:
                yield json.loads(line)


def combine_dead_letters(work_dir: Path) -> Path | None:
    parts = sorted((work_dir / DEAD_LETTER_DIR).glob("*.jsonl"))
    if not parts:
        return None
    combined = work_dir / "dead-letters.jsonl"
    with combined.open("w", encoding="utf-8") as out:
        for part in parts:
            out.write(part.read_text(encoding="utf-8"))
    return combined


def export_fingerprint(manifest: Manifest, table: TableSpec) -> str:
    return fingerprint(manifest.export_arn, manifest.export_type, [(f.key, f.md5) for f in manifest.files],
                       repr(table.source.key), repr(table.source.ttl), repr(table.mapping))


def all_items(manifest: Manifest) -> Iterator:
    for f in manifest.files:
        for record in read_records(manifest, f):
            if record.item is not None:
                yield record.item


@dataclass(frozen=True)
class Routed:
    """Where one export line goes; `route` has already counted it."""

    row: RowMutation | None = None  # to write: a put, a delete, or an expired item's older version going
    dead: str | None = None  # the reason, when the line goes to the dead letters
    expired: Expired | None = None


def route(record: Record, codec: Codec, write_time: int, now: int, sample: float | None,
          counts: FileCounts) -> Routed:
    """Every line into exactly one bucket (the local writer and the Beam pipeline share this)."""
    counts.read += 1
    try:
        row = _encode(record, codec, write_time, now)
    except CodecError as error:
        counts.dead_lettered += 1
        return Routed(dead=str(error))
    if row is None:
        counts.dead_lettered += 1
        return Routed(dead=record.error or "unreadable line")
    if isinstance(row, Expired):
        counts.expired += 1
        return Routed(row=row.delete, expired=row)  # incremental: an older, still-live version must go
    if not in_sample(row.key, sample):
        counts.sampled_out += 1
        return Routed()
    if record.kind == "delete":
        counts.deleted += 1
    else:
        counts.loaded += 1
    return Routed(row=row)


async def _rows(manifest: Manifest, f: DataFile, codec: Codec, options: LoadOptions, write_time: int,
                counts: FileCounts, dead: _DeadLetters, progress: Callable[[int], None]
                ) -> AsyncIterator[tuple]:
    now = options.now_micros or int(time.time() * 1_000_000)
    for record in read_records(manifest, f):
        progress(1)
        routed = route(record, codec, write_time, now, options.sample, counts)
        if routed.dead is not None:
            dead.add(record.file, record.line, routed.dead, record.raw)
        elif routed.row is not None:
            yield routed.row, Source(record.file, record.line)


def _encode(record: Record, codec: Codec, write_time: int, now: int):
    if record.kind == "error":
        return None
    if record.kind == "delete":  # the old image tells rule-based designs which cells were the item's
        return codec.delete(record.old_item or record.keys or {})
    replace = record.keys is not None  # incremental: the item may have had an older version
    return codec.encode(record.item or {}, write_time_micros=record.write_time_micros or write_time,
                        now_micros=now, replace=replace)


def start_load(table: TableSpec, export: str, options: LoadOptions) -> tuple[Manifest, LoadReport, LoadState]:
    """Manifests, an empty report and the resume state with the attribute types (shared by
    the local writer and the Beam pipeline). A new state checks every file's md5 before
    anything is read from it, then infers the types in one pass; an unreadable export
    leaves `report.error` set and `state.types` None."""
    manifest = open_export(export)
    report = LoadReport(table=table.id, instance=options.instance_id, export=export,
                        export_type=manifest.export_type, output_format=manifest.output_format,
                        manifest_items=manifest.item_count)
    state_path = options.work_dir / "state.json"
    state = LoadState.open(state_path, export_fingerprint(manifest, table))
    if state.types is None:
        try:
            for f in manifest.files:
                verify_file(manifest, f)
            state.types = infer_types(all_items(manifest), table)
        except ExportError as error:
            report.error = str(error)
            return manifest, report, state
        state.save(state_path)
    return manifest, report, state


async def load_table(table: TableSpec, export: str, options: LoadOptions,
                     progress: Callable[[int], None] = lambda n: None) -> LoadReport:
    started = time.monotonic()
    manifest, report, state = start_load(table, export, options)
    if state.types is None:
        report.seconds = time.monotonic() - started
        return report
    state_path = options.work_dir / "state.json"
    codec = Codec(table, state.types)
    report.lossy = list(codec.lossy)
    writer = Writer(options.project, options.instance_id, table.id, options.app_profile_id, options.writer)
    for f in manifest.files:
        if f.key in state.done:
            report.files.append(FileReport(f.key, f.item_count, state.done[f.key], "resumed: already loaded"))
            progress(f.item_count)
            continue
        counts = FileCounts()
        file_report = FileReport(f.key, f.item_count, counts, "failed")
        report.files.append(file_report)
        dead = _DeadLetters(options.work_dir / DEAD_LETTER_DIR, f.key)
        try:
            verify_file(manifest, f)

            def rejected(source: Source, reason: str, counts: FileCounts = counts, dead: _DeadLetters = dead) -> None:
                counts.loaded -= 1
                counts.dead_lettered += 1
                dead.add(source.file, source.line, reason)

            await writer.write(_rows(manifest, f, codec, options, manifest.export_time_micros, counts, dead,
                                     progress), rejected)
        except (ExportError, WriteError) as error:
            file_report.error = str(error)
            report.error = str(error)
            break
        finally:
            dead.close()
        if counts.read != f.item_count:
            file_report.error = (f"{f.key}: the manifest promises {f.item_count} items, the file holds "
                                 f"{counts.read} lines")
        file_report.status = "loaded"
        state.done[f.key] = counts
        state.save(state_path)
    report.seconds = time.monotonic() - started
    report.dead_letter_file = str(path) if (path := combine_dead_letters(options.work_dir)) else None
    return report


@contextmanager
def fewer_gc_passes() -> Iterator[None]:
    """A load allocates millions of short-lived dicts, and every full collection would rescan
    the long-lived objects (modules, the client, the codec) too. Freezing them keeps those
    passes short. The first threshold stays as it is: raising it made peak memory grow with
    the export's size (benchmarks/load_throughput.py)."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def run_load(table: TableSpec, export: str, options: LoadOptions,
             progress: Callable[[int], None] = lambda n: None) -> LoadReport:
    with fewer_gc_passes():
        return asyncio.run(load_table(table, export, options, progress))
