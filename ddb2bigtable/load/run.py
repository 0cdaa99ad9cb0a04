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
import os
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from google.cloud.bigtable.data import BigtableDataClientAsync, RowMutationEntry

from ..bigtable.preflight import check_target
from ..codec.codec import Codec
from ..codec.type_inference import AttributeTypes
from ..exports.manifests import DataFile, ExportError, Manifest, open_export
from ..exports.reader import read_records
from ..exports.types import export_types
from ..spec.errors import InputError, Problem
from ..spec.model import TableSpec
from .chain import extended
from .encoder import EncodeJob, Encoder, EncoderDied, chunks_of
from .reports import FileReport, LoadReport
from .spot_check import Candidate, absent_rows, absent_sentence, wanted_rows
from .state import STATE_FILE, FileCounts, LoadState, fingerprint, target
from .table_record import adopt_record, record_load_types
from .work_folder import DeadLetters, dead_letter_dir, dead_letter_records, locked
from .writer import Source, WriteError, Writer, WriteSettings, unpack

# A load where more than this share of the lines is dead-lettered is not complete: the export
# and the mapping do not fit (the wrong table's export dead-letters every line).
MAX_DEAD_SHARE = 0.5


@dataclass(frozen=True)
class LoadOptions:
    project: str
    instance_id: str
    app_profile_id: str | None
    work_dir: Path
    sample: float | None = None
    now_micros: int | None = None  # for tests: "now" when judging TTL expiry
    writer: WriteSettings = field(default_factory=WriteSettings)
    redact_dead_letters: bool = False  # dead letters without the line's text or quoted values
    fresh: str | None = None  # why to ignore the resume state and reload every file ("--fresh", ...)
    allow_other_table: bool = False  # load an export whose tableArn names another table
    types_profile_id: str | None = None  # where the table's record of its types is written (table_types.types_profile)


def export_fingerprint(manifest: Manifest, table: TableSpec) -> str:
    return fingerprint(manifest.export_arn, manifest.export_type, [(f.key, f.md5) for f in manifest.files],
                       repr(table.source.key), repr(table.source.ttl), repr(table.mapping))


def all_items(manifest: Manifest) -> Iterator:
    for f in manifest.files:
        for record in read_records(manifest, f):
            if record.item is not None:
                yield record.item


def start_load(table: TableSpec, export: str, options: LoadOptions) -> tuple[Manifest, LoadReport, LoadState]:
    """Manifests, an empty report and the resume state (shared by the local writer and the
    Beam pipeline). A new state has no attribute types yet: each writer infers them
    before anything is written and keeps them with `save_types`."""
    manifest = open_export(export)
    if manifest.table_name not in (None, table.source.table) and not options.allow_other_table:
        raise InputError([Problem.about(export, "export", (
            f"this is an export of DynamoDB table {manifest.table_name} ({manifest.table_arn}), but table "
            f"{table.id} of the spec comes from {table.source.table}: give the export of {table.source.table}, or "
            f"--allow-other-table when it is the same data under another name"))])
    check_target(options.project, options.instance_id, table)
    report = LoadReport(table=table.id, instance=options.instance_id, export=export,
                        export_type=manifest.export_type, output_format=manifest.output_format,
                        manifest_items=manifest.item_count)
    state, why = LoadState.open(options.work_dir / STATE_FILE, export_fingerprint(manifest, table),
                                target(options.project, options.instance_id, table.id), fresh=options.fresh,
                                export_id=manifest.export_id)
    if why:
        report.notes.append(why)
    chain = extended(state.chain, manifest, export, options.fresh, options.work_dir)
    if chain != state.chain:  # recorded before any row is written: from now on the table may hold it
        state.chain = chain
        state.save(options.work_dir / STATE_FILE)
    return manifest, report, state


def save_types(state: LoadState, types: AttributeTypes, options: LoadOptions) -> None:
    """The types in the resume state, before the first row is written: a rerun encodes
    with the very types the first run did, even if it reads only the files left; and the
    table's record of its cells' types gains this export's new attributes."""
    state.types = types
    state.table_types = {**state.table_types, **types}
    state.save(options.work_dir / STATE_FILE)


async def _entries(run: _Run, f: DataFile, counts: FileCounts, dead: DeadLetters, read_to_end: asyncio.Event
                   ) -> AsyncIterator[list[RowMutationEntry]]:
    """One data file's rows from the encoder process, as batcher entries; its dead letters
    written and its counts added on the way (its first rows kept for the spot check).
    `read_to_end` is set when the file's last rows arrive, read without error: the lane's
    next file then reads while the batchers that hold them close (a file that ends on a
    batcher's bound, as every 1,000-row Movies file does, would otherwise wait for a close:
    `Writer.write` asks for more rows only when fewer than `batchers_in_flight` close)."""
    async for message in chunks_of(run.encoder, f.key):
        for line, reason, raw in message.dead:
            dead.add(f.key, line, reason, raw)
        run.progress(message.read)
        end = message.end
        if end is not None:
            counts.add(end.counts)
            if end.error is None:
                run.named[f.key] = list(end.firsts)
                read_to_end.set()
        if message.lines:
            yield unpack(message.packed, f.key, message.lines, message.sizes)
        if end is not None and end.error is not None:
            raise ExportError(end.error)


@dataclass
class _Run:
    """What the file tasks of one load share."""

    options: LoadOptions
    report: LoadReport
    state: LoadState
    encoder: Encoder
    writer: Writer
    progress: Callable[[int], None]
    open_files: asyncio.Semaphore
    named: dict[str, list[Candidate]]  # the first rows of each file written (spot_check.wanted_rows)
    failed: bool = False


async def _load_file(run: _Run, f: DataFile, file_report: FileReport, turn: asyncio.Event,
                     next_turn: asyncio.Event) -> None:
    """One data file. Each encoder process (a lane) delivers its files in manifest order,
    and the lanes are written side by side, so the writer always has rows from one of
    them while the other encodes. In a lane, a file reads only in its turn and hands the
    turn on as soon as its last rows have arrived, so the lane's next file flows while
    this one's last batches are in flight. At most one file per lane plus one are
    open at once (`run.open_files`), or staged rows would pile up when Bigtable is slower
    than the reading. The file is done (resume state) only when every one of its rows is
    acknowledged. After a failure no file starts; files already started finish."""
    try:
        await turn.wait()
        if run.failed:  # a file failed: stop here, as a rerun resumes from the state
            return
        async with run.open_files:
            await _write_file(run, f, file_report, next_turn)
    finally:
        next_turn.set()


async def _write_file(run: _Run, f: DataFile, file_report: FileReport, next_turn: asyncio.Event) -> None:
    """The data file through its own batcher; the turn passes when its last row is handed over
    (the next file may read while these rows land; on failure, `_load_file` passes it)."""
    file_report.status = "failed"
    counts = file_report.counts
    dead = DeadLetters(run.options.work_dir, f.key, redact=run.options.redact_dead_letters)

    def rejected(source: Source, reason: str) -> None:
        counts.loaded -= 1
        counts.dead_lettered += 1
        dead.add(source.file, source.line, reason)

    try:
        await run.writer.write(_entries(run, f, counts, dead, next_turn), rejected)
    except (ExportError, WriteError, EncoderDied) as error:
        file_report.error = str(error)
        run.report.error = run.report.error or str(error)
        run.failed = True
        return
    finally:
        dead.close()
    done = FileReport.loaded(f, counts)
    file_report.status, file_report.error = done.status, done.error
    run.state.done[f.key] = counts
    run.state.save(run.options.work_dir / STATE_FILE)


async def load_table(table: TableSpec, export: str, options: LoadOptions,
                     progress: Callable[..., None] = lambda n, total=None: None) -> LoadReport:
    """`progress(n)` after every n lines; first `progress(0, total=items in the manifest)`.

    The encoder processes are forked first, so that they infer the types while this
    process opens its client and reads the table's record (before the client: a child
    never inherits a gRPC channel). One client for the whole load (the record's read and
    write, the rows, the spot check): on Cloud Bigtable each new client is a channel with
    its own TLS and auth handshake."""
    started = time.monotonic()
    manifest, report, state = start_load(table, export, options)
    for f in manifest.files:
        if f.key in state.done:
            report.files.append(FileReport.resumed(f, state.done[f.key]))
        else:
            report.files.append(FileReport(f.key, f.item_count, FileCounts(), "pending"))
    pending = [r for r in report.files if r.status == "pending"]
    encoder = _encoders(table, manifest, state, pending, options) if pending else None
    try:
        async with Writer(options.project, options.instance_id, table.id, options.app_profile_id,
                          options.writer) as writer:
            record = await adopt_record(state, options.project, table, options.instance_id, options.work_dir,
                                        options.types_profile_id, writer.client)
            progress(0, total=manifest.item_count)
            for r in report.files:
                if r.status != "pending":  # resumed
                    progress(r.manifest_items)
            if not pending and state.types is None:  # an export without data files
                save_types(state, export_types(manifest, table, state.table_types), options)
            named: dict[str, list[Candidate]] = {}  # by data file: its first rows, as its encoder named them
            if encoder is not None:
                await _load_pending(manifest, report, state, pending, options, progress, named, writer, record,
                                    encoder)
            if state.types is not None:
                report.lossy = list(Codec(table, state.types).lossy)
            report.files = [r for r in report.files if r.status != "pending"]  # never started: an earlier one failed
            await confirm_rows(table, manifest, report, state, options, named, writer.client)
    finally:
        if encoder is not None:
            await encoder.close()
    report.seconds = time.monotonic() - started
    report.dead_letters = str(path) if (path := dead_letter_dir(options.work_dir)) else None
    return report


async def confirm_rows(table: TableSpec, manifest: Manifest, report: LoadReport, state: LoadState,
                       options: LoadOptions, named: dict[str, list[Candidate]] | None = None,
                       client: BigtableDataClientAsync | None = None) -> None:
    """Fails the load when more than MAX_DEAD_SHARE of its lines were dead-lettered, or when
    rows it counts as loaded are not in the table (`spot_check`); in the second case it
    forgets every done file: the state no longer describes the table, and a rerun rewrites
    them (idempotently). `named`: the first rows of files this run wrote, by file (the
    others are read again); `client`: the load's, when it has one open."""
    read, dead = report.total("read"), report.total("dead_lettered")
    if not report.error and read and dead > MAX_DEAD_SHARE * read:
        report.error = (f"{dead:,} of {read:,} lines were dead-lettered (more than {MAX_DEAD_SHARE:.0%}): the export "
                        f"and the spec's mapping do not fit (another table's export? a key attribute missing?); see "
                        f"the dead letters")
    if report.error or state.types is None or not state.done:
        return
    done = [f for f in manifest.files if f.key in state.done]
    lines = {(d["file"], d["line"]) for d in dead_letter_records(options.work_dir)}
    wanted = wanted_rows(manifest, done, Codec(table, state.types), sample=options.sample,
                         now_micros=options.now_micros or int(time.time() * 1_000_000), dead=lines, named=named)
    absent = await absent_rows(wanted, project=options.project, instance_id=options.instance_id,
                               table_id=table.id, app_profile_id=options.app_profile_id, client=client)
    if not absent.missing:
        return
    report.error = absent_sentence(absent, options.instance_id, table.id)
    for file_report in report.files:
        if file_report.file in state.done:
            file_report.status, file_report.error = "failed", "counted as loaded, but its rows are not in the table"
    state.done.clear()
    state.save(options.work_dir / STATE_FILE)


def _encoders(table: TableSpec, manifest: Manifest, state: LoadState, pending: list[FileReport],
              options: LoadOptions) -> Encoder:
    """The encoder processes of the files not done yet (on a fresh load they start by
    inferring the types: `Encoder.types`)."""
    now = options.now_micros or int(time.time() * 1_000_000)
    job = EncodeJob(manifest, table, state.types, tuple(manifest.files_by_key[r.file] for r in pending),
                    manifest.export_time_micros, now, options.sample)
    return Encoder(job, os.cpu_count() or 1)


async def _load_pending(manifest: Manifest, report: LoadReport, state: LoadState,  # noqa: PLR0913
                        pending: list[FileReport], options: LoadOptions, progress: Callable[[int], None],
                        named: dict[str, list[Candidate]], writer: Writer, record: AttributeTypes,
                        encoder: Encoder) -> None:
    """The files not done yet, through the encoder processes and the load's writer;
    `record`: the table's, as `adopt_record` read it (on a fresh load, its types win over
    the inferred ones)."""
    files = manifest.files_by_key
    if state.types is None:
        try:
            save_types(state, await encoder.types(state.table_types), options)
        except (ExportError, EncoderDied) as error:  # nothing was written
            report.error = str(error)
            return
    report.error = await record_load_types(state, options.project, options.instance_id, writer.table_id,
                                           options.work_dir, options.types_profile_id, writer.client, record)
    if report.error:
        return
    run = _Run(options, report, state, encoder, writer, progress, asyncio.Semaphore(encoder.lanes + 1), named)
    turns = [asyncio.Event() for _ in range(encoder.lanes)]  # per lane: what its next file waits for
    for turn in turns:
        turn.set()
    tasks = []
    for r in pending:
        lane = encoder.lane(r.file)
        turn, turns[lane] = turns[lane], asyncio.Event()
        tasks.append(_load_file(run, files[r.file], r, turn, turns[lane]))
    await asyncio.gather(*tasks)


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
             progress: Callable[..., None] = lambda n, total=None: None) -> LoadReport:
    with locked(options.work_dir), fewer_gc_passes():
        return asyncio.run(load_table(table, export, options, progress))
