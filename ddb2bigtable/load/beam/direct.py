"""`load --runner beam`: the local loader's `run_load` on Beam's in-process DirectRunner."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import shutil
import time
import uuid
from pathlib import Path

from ...codec.codec import Codec
from ...exports.manifests import ExportError
from ...exports.types import export_types
from ...spec.model import TableSpec
from ..reports import FileReport, LoadReport
from ..run import LoadOptions, confirm_rows, save_types, start_load
from ..state import STATE_FILE, FileCounts
from ..table_record import adopt_record, record_load_types
from ..work_folder import (
    DEAD_LETTER_DIR,
    EXPIRED_DIR,
    dead_letter_dir,
    locked,
    make_private,
    part_name,
)
from ..writer import WriteError
from .pipeline import COUNTERS, NAMESPACE, BeamLoad, MetricsFilter, PipelineOptions, beam, build_pipeline


def direct_options() -> PipelineOptions:
    """In-process DirectRunner, one worker: rows stream from reader to writer in one bundle."""
    return PipelineOptions(flags=[], runner="DirectRunner", direct_num_workers=1, direct_running_mode="in_memory",
                           save_main_session=False)


def run_beam_load(table: TableSpec, export: str, options: LoadOptions) -> LoadReport:
    """The local loader's `run_load`, on Beam's DirectRunner: same work dir (resume state,
    dead letters, lock), same report. A pipeline failure marks no file done; a rerun reloads them."""
    with locked(options.work_dir):
        return _beam_load(table, export, options)


def _beam_load(table: TableSpec, export: str, options: LoadOptions) -> LoadReport:
    started = time.monotonic()
    manifest, report, state = start_load(table, export, options)
    asyncio.run(adopt_record(state, options.project, table, options.instance_id, options.work_dir,
                             options.types_profile_id))  # the table's record of its types, before inferring
    if state.types is None:
        try:
            save_types(state, export_types(manifest, table, state.table_types), options)
        except ExportError as error:  # nothing was written
            report.error = str(error)
            report.seconds = time.monotonic() - started
            return report
    work = options.work_dir
    state_path = work / STATE_FILE
    types = state.types or {}  # saved just above
    report.lossy = list(Codec(table, types).lossy)
    pending = [f for f in manifest.files if f.key not in state.done]
    _clear_stale_outputs(work, pending, fresh=not state.done)
    counts: dict[str, FileCounts] = {}
    if pending:
        report.error = asyncio.run(record_load_types(state, options.project, options.instance_id, table.id, work,
                                                     options.types_profile_id))  # before the first row
        if report.error:
            report.seconds = time.monotonic() - started
            return report
        load = BeamLoad(table=table, manifest=manifest, files=tuple(f.key for f in pending),
                        project=options.project, instance_id=options.instance_id,
                        app_profile_id=options.app_profile_id, work_dir=str(work),
                        run_id=time.strftime("%Y%m%dT%H%M%S") + "-" + uuid.uuid4().hex[:6],
                        now_micros=options.now_micros or int(time.time() * 1_000_000), types=state.types,
                        sample=options.sample, writer=options.writer, redact=options.redact_dead_letters)
        try:
            counts, totals = _run_direct(load)
        except (ExportError, WriteError) as error:  # anything else is a bug: its traceback surfaces
            report.error = _cause(error)
        else:
            summed = {name: sum(getattr(c, name) for c in counts.values()) for name in COUNTERS}
            if summed != totals:
                report.error = f"Beam's counters {totals} disagree with the per-file counts {summed}"
    for f in manifest.files:
        if f.key in state.done:
            report.files.append(FileReport.resumed(f, state.done[f.key]))
            continue
        c = counts.get(f.key)
        if c is None:
            why = report.error if report.error and f.key in report.error else None
            report.files.append(FileReport(f.key, f.item_count, FileCounts(), "failed", why))
            continue
        report.files.append(FileReport.loaded(f, c))
        state.done[f.key] = c
    state.save(state_path)
    report.seconds = time.monotonic() - started
    asyncio.run(confirm_rows(table, manifest, report, state, options))
    make_private(work)
    report.dead_letters = str(path) if (path := dead_letter_dir(work)) else None
    return report


def _run_direct(load: BeamLoad) -> tuple[dict[str, FileCounts], dict[str, int]]:
    pipeline = beam.Pipeline(options=direct_options())
    build_pipeline(pipeline, load)
    # Quiet: "no shards found to finalize" (no dead letters: the good case), and the DoFn
    # traceback Beam logs before re-raising the error the report states anyway.
    quiet = {"apache_beam.io.filebasedsink": logging.ERROR, "apache_beam.runners.common": logging.CRITICAL}
    levels = {name: logging.getLogger(name).level for name in quiet}
    for name, level in quiet.items():
        logging.getLogger(name).setLevel(level)
    run_dir = Path(load.path("beam-runs", load.run_id))
    try:
        result = pipeline.run()
        result.wait_until_finish()
        totals = dict.fromkeys(COUNTERS, 0)
        for counter in result.metrics().query(MetricsFilter().with_namespace(NAMESPACE))["counters"]:
            value = counter.committed if counter.committed is not None else counter.attempted
            totals[counter.key.metric.name] += value or 0
        counts = {}
        for part in sorted(run_dir.glob("counts*.jsonl")):
            for line in part.read_text(encoding="utf-8").splitlines():
                record = json.loads(line)
                key = record.pop("file")
                counts[key] = FileCounts(**record)
    finally:
        for name, level in levels.items():
            logging.getLogger(name).setLevel(level)
        shutil.rmtree(run_dir, ignore_errors=True)
        with contextlib.suppress(OSError):
            run_dir.parent.rmdir()  # "beam-runs", when no other run left counts there
        for folder in (DEAD_LETTER_DIR, EXPIRED_DIR):  # a failed run's unfinished text sinks
            for temp in Path(load.path(folder)).glob(f"beam-temp-*{load.run_id}*"):
                shutil.rmtree(temp, ignore_errors=True)
    return counts, totals


def _clear_stale_outputs(work: Path, pending: list, fresh: bool) -> None:
    """A rerun never duplicates dead letters: a fresh load (nothing done yet, or a changed
    export or mapping) starts with none; a resumed one drops only the pending files' parts
    the local loader left. Beam's own parts belong to finished runs, so to finished files."""
    if fresh:
        for folder in (work / DEAD_LETTER_DIR, work / EXPIRED_DIR):
            for part in folder.glob("*.jsonl"):
                part.unlink()
    for f in pending:
        (work / DEAD_LETTER_DIR / part_name(f.key)).unlink(missing_ok=True)


def _cause(error: BaseException) -> str:
    """The DoFn's own message: Beam re-raises the same exception with where it ran appended."""
    return re.sub(r" \[while running '[^']*'\]", "", str(error)).strip()


