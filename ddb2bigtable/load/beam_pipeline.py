"""The data load on Apache Beam: the local loader's transform, on DirectRunner or Dataflow.

Same codec, same mutation translation, same buckets as `load.py` (loaded, expired, sampled
out, deleted, dead-lettered with file, line and reason), so `load --runner beam` prints
the same report and `verify` reads the result the same way.

    data-file keys ─ Reshuffle ─ ReadAndEncode ─┬─ rows ──────────> WriteRows (sync batcher)
                                                ├─ expired ───────> expired/beam-*.jsonl
                                                ├─ dead letters ──> dead-letters/beam-*.jsonl
                                                └─ file counts ───> summed per file
                     (WriteRows adds the rows Bigtable refused to dead letters and file counts)

- One element per data file. `ReadAndEncode` checks the file's md5 first (a mismatch or a
  truncated gzip fails the bundle: the runner retries it, then the job fails, loudly),
  then streams its lines (`read_records`) through a `Codec` built once per DoFn instance.
- Counts: Beam Metrics counters (namespace `ddb2bigtable`) for the totals, and one
  per-file record (summed per file) for the report's file lines. Counters are added once
  per file, not per item: cheap, and a retried bundle's committed values stay exact.
- `WriteRows` holds google-cloud-bigtable's sync data client per DoFn instance (`setup`)
  and one mutations batcher per bundle, flushed in `finish_bundle` (and drained every
  5 x flow-control mutations, so memory stays bounded); a row Bigtable refuses for good
  becomes a dead letter, a transient failure past the retries fails the bundle.
- Types: `run_beam_load` infers them on the launcher (one streaming pass, as `load.py`
  does, saved in `state.json` so `verify` and a rerun use the same). `launch_dataflow`
  infers them inside the job instead (per file, merged, a side input), so `pulumi up`
  never streams a large export through the machine that runs it.

On Dataflow the workers need this package: `launch_dataflow` builds its wheel with
`uv build` (Pulumi's toolchain here is uv) and stages it with `extra_packages`; see
`pipeline_options_for` for why, and DDB2BIGTABLE_SDK_CONTAINER_IMAGE for a prebuilt image.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import shutil
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from ..codec.codec import Codec
from ..codec.type_inference import AttributeTypes, merge_types
from ..exports.reader import ExportError, Manifest, open_export, read_records, verify_file
from ..exports.types import export_types, file_types
from ..spec.model import TableSpec
from .buckets import route
from .jobs import LoadJobPlan, table_fingerprint
from .run import DEAD_LETTER_DIR, FileReport, LoadOptions, LoadReport, combine_dead_letters, save_types, start_load
from .state import FileCounts
from .writer import Collections, Source, WriteError, WriteSettings, read_responses_raw, row_entry, sort_failures


def _import_beam():
    """Apache Beam, without its import-time warnings about optional GCP modules (the base
    install lacks them on purpose; `launch_dataflow` says what to install when needed)."""
    previous = logging.root.manager.disable
    logging.disable(logging.WARNING)
    try:
        import apache_beam
    finally:
        logging.disable(previous)
    return apache_beam


beam = _import_beam()
from apache_beam.metrics import Metrics  # noqa: E402
from apache_beam.metrics.metric import MetricsFilter  # noqa: E402
from apache_beam.options.pipeline_options import PipelineOptions  # noqa: E402
from apache_beam.pvalue import AsSingleton, TaggedOutput  # noqa: E402
from apache_beam.transforms.window import GlobalWindows  # noqa: E402

NAMESPACE = "ddb2bigtable"
COUNTERS = ("read", "loaded", "expired", "dead_lettered", "deleted", "sampled_out")
EXPIRED, DEAD, COUNTS = "expired", "dead_letters", "counts"
EXPIRED_DIR = "expired"
GCP_EXTRA_HINT = ("launching on Dataflow needs Apache Beam's GCP extra, which is not installed here: "
                  "pip install 'apache-beam[gcp]' (uv: uv pip install 'apache-beam[gcp]'), then run "
                  "`pulumi up` again")
CONTAINER_IMAGE_ENV = "DDB2BIGTABLE_SDK_CONTAINER_IMAGE"
WORKER_PACKAGE_DIR = Path(tempfile.gettempdir()) / "ddb2bigtable-dataflow"


class DataflowUnavailable(RuntimeError):
    """Dataflow cannot be used from this environment; the message says what to install or set."""


@dataclass(frozen=True)
class BeamLoad:
    """Everything the pipeline needs, decided on the launcher (picklable, no clients)."""

    table: TableSpec
    manifest: Manifest
    files: tuple[str, ...]  # data-file keys to load (a resumed load skips finished ones)
    project: str
    instance_id: str
    app_profile_id: str | None
    work_dir: str  # local folder or gs:// URL: dead letters, expired items, per-file counts
    run_id: str
    now_micros: int  # one "now" for every worker when judging TTL expiry
    types: AttributeTypes | None = None  # None: inferred inside the pipeline (a side input)
    sample: float | None = None
    writer: WriteSettings = field(default_factory=WriteSettings)

    def path(self, *parts: str) -> str:
        return "/".join([self.work_dir.rstrip("/"), *parts])


# --- the transforms --------------------------------------------------------------------

def _dead_letter(file: str, line: int, reason: str, raw: str | None = None) -> str:
    record: dict[str, Any] = {"file": file, "line": line, "reason": reason}
    if raw is not None:
        record["raw"] = raw
    return json.dumps(record)


class _InferFileTypes(beam.DoFn):
    def __init__(self, table: TableSpec, manifest: Manifest):
        self.table, self.manifest = table, manifest

    def process(self, key: str) -> Iterator[AttributeTypes]:
        yield file_types(self.manifest, next(f for f in self.manifest.files if f.key == key), self.table)


class _MergeTypes(beam.CombineFn):
    def create_accumulator(self) -> AttributeTypes:
        return {}

    def add_input(self, accumulator: AttributeTypes, types: AttributeTypes) -> AttributeTypes:
        return merge_types(accumulator, types)

    def merge_accumulators(self, accumulators: Iterable[AttributeTypes]) -> AttributeTypes:
        merged: AttributeTypes = {}
        for accumulator in accumulators:
            merged = merge_types(merged, accumulator)
        return merged

    def extract_output(self, accumulator: AttributeTypes) -> AttributeTypes:
        return accumulator


class ReadAndEncode(beam.DoFn):
    """A data-file key in; (RowMutation, Source) rows out, plus tagged expired items, dead
    letters (JSON lines) and the file's counts. Mirrors `load._rows` bucket for bucket."""

    def __init__(self, load: BeamLoad):
        self.load = load
        self._codec: Codec | None = None
        self._codec_types: AttributeTypes | None = None

    def setup(self) -> None:
        self._files = {f.key: f for f in self.load.manifest.files}
        self._counters = {name: Metrics.counter(NAMESPACE, name) for name in COUNTERS}
        if self.load.types is not None:
            self._codec = Codec(self.load.table, self.load.types)  # once per worker, not per file

    def _codec_for(self, types: AttributeTypes | None) -> Codec:
        if self._codec is None or (types is not None and types is not self._codec_types):
            self._codec, self._codec_types = Codec(self.load.table, types or {}), types
        return self._codec

    def process(self, key: str, types: AttributeTypes | None = None) -> Iterator[Any]:
        load, manifest = self.load, self.load.manifest
        f = self._files[key]
        codec = self._codec_for(types)
        verify_file(manifest, f)  # an md5 mismatch fails the bundle before any row is written
        counts = FileCounts()
        write_time, now, sample = manifest.export_time_micros, load.now_micros, load.sample
        for record in read_records(manifest, f):
            routed = route(record, codec, write_time, now, sample, counts)
            if routed.dead is not None:
                yield TaggedOutput(DEAD, _dead_letter(record.file, record.line, routed.dead, record.raw))
            if routed.expired is not None:
                yield TaggedOutput(EXPIRED, json.dumps({"file": record.file, "line": record.line,
                                                        "expiry_micros": routed.expired.expiry_micros}))
            if routed.row is not None:
                yield routed.row, Source(record.file, record.line)
        for name, counter in self._counters.items():
            counter.inc(getattr(counts, name))
        yield TaggedOutput(COUNTS, (key, asdict(counts)))


class WriteRows(beam.DoFn):
    """Rows into Bigtable with the sync data client's mutations batcher (same settings as
    the local writer). BIGTABLE_EMULATOR_HOST, when set, points the client at the emulator.

    The batcher bounds what is in flight, not what waits to be sent: `append` never blocks.
    So the batcher is drained (closed, which waits for every batch, and opened again) each
    `drain_every` mutations: a worker's memory stays bounded even when Bigtable is slower
    than the reader, and failures surface at least that often.
    """

    def __init__(self, load: BeamLoad):
        self.project, self.instance_id, self.table_id = load.project, load.instance_id, load.table.id
        self.app_profile_id, self.settings = load.app_profile_id, load.writer
        self.drain_every = 5 * load.writer.flow_control_max_mutation_count
        self._batcher = None
        self._collections = Collections(load.writer.rows_per_collection)

    def setup(self) -> None:
        import warnings

        from google.cloud.bigtable.data import BigtableDataClient

        warnings.filterwarnings("ignore", message="Connecting to Bigtable emulator", category=RuntimeWarning)
        self._client = BigtableDataClient(project=self.project)
        read_responses_raw(self._client)
        self._table = self._client.get_table(self.instance_id, self.table_id, app_profile_id=self.app_profile_id)
        self._loaded = Metrics.counter(NAMESPACE, "loaded")
        self._dead = Metrics.counter(NAMESPACE, "dead_lettered")

    def _open(self) -> None:
        s = self.settings
        self._pending = self._rows = 0
        self._batcher = self._table.mutations_batcher(
            flush_limit_mutation_count=s.flush_limit_mutation_count,
            flow_control_max_mutation_count=s.flow_control_max_mutation_count,
            batch_operation_timeout=s.operation_timeout_seconds,
        )

    def _close(self) -> list[tuple[Source, str]]:
        """Flushes and waits; the rows Bigtable refused for good. A transient failure past the
        retries raises WriteError: the bundle fails, the runner retries it (writes are
        idempotent), and a job that keeps failing stops with the reason."""
        from google.cloud.bigtable.data.exceptions import MutationsExceptionGroup

        batcher, self._batcher = self._batcher, None
        rejected: list[tuple[Source, str]] = []
        try:
            batcher.close()
        except MutationsExceptionGroup as group:
            sort_failures(group, self.table_id, lambda source, reason: rejected.append((source, reason)))
        self._collections.acknowledged(self._rows)
        return rejected

    def _rejected(self, rejected: list[tuple[Source, str]], wrap) -> Iterator[Any]:
        for source, reason in rejected:  # as `load.py`: a rejected row moves from loaded to dead-lettered
            self._loaded.dec()
            self._dead.inc()
            yield TaggedOutput(DEAD, wrap(_dead_letter(source.file, source.line, reason)))
            yield TaggedOutput(COUNTS, wrap((source.file, {"loaded": -1, "dead_lettered": 1})))

    def start_bundle(self) -> None:
        self._open()

    def process(self, element: tuple) -> Iterator[Any]:
        row, source = element
        entry = row_entry(row, source)
        self._batcher.append(entry)
        self._rows += 1
        self._pending += len(entry.mutations)
        if self._pending >= self.drain_every:
            rejected = self._close()
            self._open()
            yield from self._rejected(rejected, lambda value: value)

    def finish_bundle(self) -> Iterator[Any]:
        yield from self._rejected(self._close(), GlobalWindows.windowed_value)

    def teardown(self) -> None:
        client = getattr(self, "_client", None)
        if client is not None:
            client.close()


def _sum_counts(parts: Iterable[dict[str, int]]) -> dict[str, int]:
    total = dict.fromkeys(COUNTERS, 0)
    for part in parts:
        for name, value in part.items():
            total[name] += value
    return total


def build_pipeline(pipeline: beam.Pipeline, load: BeamLoad) -> None:
    """The load as Beam transforms on `pipeline` (shared by DirectRunner and Dataflow)."""
    keys = (pipeline
            | "DataFiles" >> beam.Create(list(load.files))
            | "SpreadFiles" >> beam.Reshuffle())  # on Dataflow: files spread over the workers
    types = None
    if load.types is None:
        types = AsSingleton(keys
                            | "InferFileTypes" >> beam.ParDo(_InferFileTypes(load.table, load.manifest))
                            | "MergeTypes" >> beam.CombineGlobally(_MergeTypes()))
    encoded = keys | "ReadAndEncode" >> beam.ParDo(ReadAndEncode(load), types).with_outputs(
        EXPIRED, DEAD, COUNTS, main="rows")
    written = encoded.rows | "WriteRows" >> beam.ParDo(WriteRows(load)).with_outputs(DEAD, COUNTS)
    text = {"file_name_suffix": ".jsonl", "skip_if_empty": True}
    ((encoded[DEAD], written[DEAD])
     | "AllDeadLetters" >> beam.Flatten()
     | "WriteDeadLetters" >> beam.io.WriteToText(load.path(DEAD_LETTER_DIR, f"beam-{load.run_id}"), **text))
    (encoded[EXPIRED]
     | "WriteExpired" >> beam.io.WriteToText(load.path(EXPIRED_DIR, f"beam-{load.run_id}"), **text))
    ((encoded[COUNTS], written[COUNTS])
     | "AllCounts" >> beam.Flatten()
     | "CountsPerFile" >> beam.CombinePerKey(_sum_counts)
     | "CountsAsJson" >> beam.MapTuple(lambda key, counts: json.dumps({"file": key, **counts}))
     | "WriteCounts" >> beam.io.WriteToText(load.path("beam-runs", load.run_id, "counts"), **text))


# --- DirectRunner: the `load --runner beam` command -------------------------------------

def direct_options() -> PipelineOptions:
    """In-process DirectRunner, one worker: rows stream from reader to writer in one bundle."""
    return PipelineOptions(flags=[], runner="DirectRunner", direct_num_workers=1, direct_running_mode="in_memory",
                           save_main_session=False)


def run_beam_load(table: TableSpec, export: str, options: LoadOptions) -> LoadReport:
    """The local loader's `run_load`, on Beam's DirectRunner: same work dir (resume state,
    dead letters), same report. A pipeline failure marks no file done; a rerun reloads them."""
    started = time.monotonic()
    manifest, report, state = start_load(table, export, options)
    if state.types is None:
        try:
            save_types(state, export_types(manifest, table), options)
        except ExportError as error:  # nothing was written
            report.error = str(error)
            report.seconds = time.monotonic() - started
            return report
    work = options.work_dir
    state_path = work / "state.json"
    report.lossy = list(Codec(table, state.types).lossy)
    pending = [f for f in manifest.files if f.key not in state.done]
    _clear_stale_outputs(work, pending, fresh=not state.done)
    counts: dict[str, FileCounts] = {}
    if pending:
        load = BeamLoad(table=table, manifest=manifest, files=tuple(f.key for f in pending),
                        project=options.project, instance_id=options.instance_id,
                        app_profile_id=options.app_profile_id, work_dir=str(work),
                        run_id=time.strftime("%Y%m%dT%H%M%S") + "-" + uuid.uuid4().hex[:6],
                        now_micros=options.now_micros or int(time.time() * 1_000_000), types=state.types,
                        sample=options.sample, writer=options.writer)
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
            report.files.append(FileReport(f.key, f.item_count, state.done[f.key], "resumed: already loaded"))
            continue
        c = counts.get(f.key)
        if c is None:
            error = report.error if report.error and f.key in report.error else None
            report.files.append(FileReport(f.key, f.item_count, FileCounts(), "failed", error))
            continue
        error = None
        if c.read != f.item_count:
            error = f"{f.key}: the manifest promises {f.item_count} items, the file holds {c.read} lines"
        report.files.append(FileReport(f.key, f.item_count, c, "loaded", error))
        state.done[f.key] = c
    state.save(state_path)
    report.seconds = time.monotonic() - started
    report.dead_letter_file = str(path) if (path := combine_dead_letters(work)) else None
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
        (work / "dead-letters.jsonl").unlink(missing_ok=True)  # the previous load's combined file
    for f in pending:
        (work / DEAD_LETTER_DIR / (hashlib.sha256(f.key.encode()).hexdigest()[:16] + ".jsonl")).unlink(
            missing_ok=True)


def _cause(error: BaseException) -> str:
    """The DoFn's own message: Beam re-raises the same exception with where it ran appended."""
    return re.sub(r" \[while running '[^']*'\]", "", str(error)).strip()


# --- Dataflow: the post-deploy hook ------------------------------------------------------

def job_name(job: LoadJobPlan) -> str:
    """Dataflow's job-name rules ([a-z]([-a-z0-9]*[a-z0-9])?): one name per load content, so
    Dataflow itself refuses a second running job for the same load."""
    raw = f"ddb2bigtable-{job.instance_id}-{job.table_id}".lower()
    name = re.sub(r"-+", "-", re.sub(r"[^a-z0-9-]", "-", raw)).strip("-")[:90].rstrip("-")
    return f"{name}-{job.fingerprint[:8].lower()}"


def work_location(job: LoadJobPlan) -> str:
    """Where a Dataflow load keeps dead letters, expired items and per-file counts."""
    if not job.temp_location:
        raise DataflowUnavailable(f"{job.instance_id}/{job.table_id}: a Dataflow load needs the stage's "
                                  f"load.temp_location (a gs:// folder for staging, temp files and dead letters)")
    return f"{job.temp_location.rstrip('/')}/ddb2bigtable/{job.instance_id}/{job.table_id}/{job.fingerprint}"


def pipeline_options_for(job: LoadJobPlan) -> PipelineOptions:
    """Dataflow options for one load job.

    How the workers get this package: `extra_packages` with this project's wheel (built by
    `launch_dataflow` with `uv build`, the toolchain Pulumi runs here). The workers
    `pip install` it with all its pinned dependencies: what the load uses
    (google-cloud-bigtable, orjson, amazon-ion, fsspec) and, unused there, Pulumi's SDKs
    (slower worker start-up: the price of one distribution); apache-beam 2.77 is already in
    Dataflow's matching SDK image. Rejected alternatives: `setup_file` (Beam builds an sdist with
    `python -m build --no-isolation`, which needs `build` and hatchling installed next to
    Pulumi) and `save_main_session` (this code is a package, not a main module).
    `requirements_file` only adds the fsspec filesystem the export's URL needs (gcsfs,
    s3fs: same release as fsspec), with `requirements_cache=skip` so launching needs no pip.
    Set DDB2BIGTABLE_SDK_CONTAINER_IMAGE to a prebuilt image holding the package instead
    (faster worker start-up, nothing installed at run time).
    """
    if not job.project:
        raise DataflowUnavailable(f"{job.instance_id}/{job.table_id}: a Dataflow load needs the stage's GCP "
                                  f"project (gcp:project)")
    work_location(job)  # a clear error without a temp_location
    temp = job.temp_location.rstrip("/")
    settings: dict[str, Any] = {
        "runner": "DataflowRunner",
        "project": job.project,
        "region": job.region,
        "temp_location": f"{temp}/temp",
        "staging_location": f"{temp}/staging",
        "job_name": job_name(job),
        "save_main_session": False,
        "labels": [f"ddb2bigtable-instance={_label(job.instance_id)}", f"ddb2bigtable-table={_label(job.table_id)}"],
    }
    if job.service_account:
        settings["service_account_email"] = job.service_account
    image = os.environ.get(CONTAINER_IMAGE_ENV)
    if image:
        settings["sdk_container_image"] = image
    else:
        settings["extra_packages"] = [str(worker_wheel())]
        if _filesystem_requirements(job.export):
            settings["requirements_file"] = str(WORKER_PACKAGE_DIR / "requirements.txt")
            settings["requirements_cache"] = "skip"
    return PipelineOptions(flags=[], **settings)


def _label(value: str) -> str:
    return re.sub(r"[^a-z0-9_-]", "-", value.lower())[:63]


def _version() -> str:
    try:
        return metadata.version("ddb2bigtable")
    except metadata.PackageNotFoundError:
        return "0.1.0"


def worker_wheel() -> Path:
    """Where `launch_dataflow` puts the wheel the workers install (hatchling's file name)."""
    return WORKER_PACKAGE_DIR / f"ddb2bigtable-{_version()}-py3-none-any.whl"


def _filesystem_requirements(export: str) -> list[str]:
    scheme = export.split("://", 1)[0] if "://" in export else ""
    package = {"gs": "gcsfs", "gcs": "gcsfs", "s3": "s3fs", "s3a": "s3fs"}.get(scheme)
    return [f"{package}=={metadata.version('fsspec')}"] if package else []


def build_worker_package(export: str) -> None:
    """This project's wheel (and the requirements file) where `pipeline_options_for` names them."""
    root = Path(__file__).resolve().parents[2]
    if not (root / "pyproject.toml").is_file():
        raise DataflowUnavailable(f"cannot find this project's pyproject.toml next to {root / 'ddb2bigtable'} to "
                                  f"build the package Dataflow's workers install; launch from a checkout, or "
                                  f"set {CONTAINER_IMAGE_ENV} to an SDK image that holds it")
    uv = shutil.which("uv")
    if uv is None:
        raise DataflowUnavailable(f"building the package for Dataflow's workers needs uv "
                                  f"(https://docs.astral.sh/uv/), or set {CONTAINER_IMAGE_ENV}")
    WORKER_PACKAGE_DIR.mkdir(parents=True, exist_ok=True)
    worker_wheel().unlink(missing_ok=True)
    built = subprocess.run([uv, "build", "--wheel", "--out-dir", str(WORKER_PACKAGE_DIR), str(root)],
                           capture_output=True, text=True)
    if built.returncode != 0 or not worker_wheel().is_file():
        raise DataflowUnavailable(f"`uv build --wheel {root}` failed: {built.stderr.strip()[-500:]}")
    requirements = _filesystem_requirements(export)
    if requirements:
        (WORKER_PACKAGE_DIR / "requirements.txt").write_text("\n".join(requirements) + "\n")


def require_gcp_extra() -> None:
    """DataflowUnavailable (with the pip command) unless Beam's GCP extra is installed."""
    try:
        previous = logging.root.manager.disable
        logging.disable(logging.WARNING)
        try:
            from apache_beam.io.gcp import gcsio  # noqa: F401  google-cloud-storage
            from apache_beam.runners.dataflow.internal import apiclient  # noqa: F401  google-cloud-dataflow-client
        finally:
            logging.disable(previous)
    except ImportError as error:
        raise DataflowUnavailable(f"{GCP_EXTRA_HINT} (missing: {error.name or error})") from None


def find_table(job: LoadJobPlan) -> TableSpec:
    """The table a job loads, from the spec file the plan came from; refused when the
    mapping there changed since the plan (its fingerprint would differ)."""
    from ..spec.errors import InputError
    from ..spec.loader import load_spec

    try:
        spec = load_spec(job.spec_file)
    except InputError as error:
        raise DataflowUnavailable(f"{job.instance_id}/{job.table_id}: {error}") from None
    table = next((t for t in spec.tables if t.id == job.table_id), None)
    if table is None or table_fingerprint(job.export, table, job.sample) != job.fingerprint:
        raise DataflowUnavailable(f"{job.instance_id}/{job.table_id}: {job.spec_file} no longer has this table "
                                  f"with the planned key, TTL and mapping; run `pulumi up` again")
    return table


def launch_dataflow(job: LoadJobPlan, table: TableSpec | None = None) -> str:
    """Starts the load on Dataflow and returns its job id, without waiting for it.

    The launcher reads only the export's manifests; the types are inferred by the job.
    """
    require_gcp_extra()
    options = pipeline_options_for(job)
    table = table or find_table(job)
    manifest = open_export(job.export)
    if CONTAINER_IMAGE_ENV not in os.environ:
        build_worker_package(job.export)
    load = BeamLoad(table=table, manifest=manifest, files=tuple(f.key for f in manifest.files),
                    project=job.project or "", instance_id=job.instance_id, app_profile_id=job.app_profile_id,
                    work_dir=work_location(job), run_id=time.strftime("%Y%m%dT%H%M%S"),
                    now_micros=int(time.time() * 1_000_000), types=None, sample=job.sample)
    pipeline = beam.Pipeline(options=options)
    build_pipeline(pipeline, load)
    result = pipeline.run()
    return result.job_id()
