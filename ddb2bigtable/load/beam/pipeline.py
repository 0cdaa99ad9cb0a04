"""The data load on Apache Beam: the local loader's transform, on DirectRunner or Dataflow.

Same codec, same mutation translation, same buckets as `load/run.py` (loaded, expired, sampled
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
- Types: `run_beam_load` infers them on the launcher (one streaming pass, as `load/run.py`
  does, saved in `state.json` so `verify` and a rerun use the same). `launch_dataflow`
  infers them inside the job instead (per file, merged, a side input), so `pulumi up`
  never streams a large export through the machine that runs it. Either way the types
  are the table's as the local loader's are (load/table_record.py): the launch reads the
  table's record (`recorded`), the attributes it holds keep their type, and the job
  records its types (`RecordTypes`, first writer wins) before `ReadAndEncode` may use
  them, so before any row is written; a type another writer recorded since the launch
  fails the job naming both.

On Dataflow the workers need this package: `launch_dataflow` builds its wheel with
`uv build` (Pulumi's toolchain here is uv) and stages it with `extra_packages`; see
`pipeline_options_for` for why, and DDB2BIGTABLE_SDK_CONTAINER_IMAGE for a prebuilt image.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

from ...bigtable.emulator import quiet_connection_warning
from ...codec.codec import Codec
from ...codec.type_inference import AttributeTypes, merge_types, with_recorded
from ...exports.manifests import Manifest, verify_file
from ...exports.reader import read_records
from ...exports.types import file_types
from ...spec.errors import ServiceError
from ...spec.model import TableSpec
from ..buckets import count_loaded, loaded_cells, route
from ..entry_bytes import EntryBytes
from ..state import FileCounts
from ..table_record import record_before_writing
from ..work_folder import DEAD_LETTER_DIR, EXPIRED_DIR, record_json
from ..writer import Collections, Source, WriteSettings, read_responses_raw, row_entry, sort_failures


def _import_beam_quietly() -> None:
    """Apache Beam, without its import-time warnings about optional GCP modules (the base
    install lacks them on purpose; `launch_dataflow` says what to install when needed)."""
    previous = logging.root.manager.disable
    logging.disable(logging.WARNING)
    try:
        import apache_beam  # noqa: F401  imported for its side effect: the module cache
    finally:
        logging.disable(previous)


_import_beam_quietly()
import apache_beam as beam  # noqa: E402  the module imported quietly above
from apache_beam.metrics import Metrics  # noqa: E402

# Re-exported for direct.py and dataflow.py, so Beam is always first imported quietly, here.
from apache_beam.metrics.metric import MetricsFilter as MetricsFilter  # noqa: E402
from apache_beam.options.pipeline_options import PipelineOptions as PipelineOptions  # noqa: E402
from apache_beam.pvalue import AsSingleton, TaggedOutput  # noqa: E402
from apache_beam.transforms.window import GlobalWindows  # noqa: E402

NAMESPACE = "ddb2bigtable"
COUNTERS = ("read", "loaded", "expired", "dead_lettered", "deleted", "sampled_out")
EXPIRED, DEAD, COUNTS = "expired", "dead_letters", "counts"


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
    recorded: AttributeTypes = field(default_factory=dict)  # the table's record at launch (types=None only)
    types_profile_id: str | None = None  # where the job records its types (table_types.types_profile)
    sample: float | None = None
    writer: WriteSettings = field(default_factory=WriteSettings)
    redact: bool = False  # dead letters without the line's text or quoted values

    def path(self, *parts: str) -> str:
        return "/".join([self.work_dir.rstrip("/"), *parts])


# --- the transforms --------------------------------------------------------------------

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


def _record_job_types(inferred: AttributeTypes, load: BeamLoad) -> AttributeTypes:
    """The job's types: its inference over the record read at launch (`with_recorded`),
    recorded with the table; ServiceError (the job fails, nothing written) when another
    writer recorded another type since the launch."""
    types = with_recorded(inferred, load.recorded, load.table)
    _, error = asyncio.run(record_before_writing(load.project, load.instance_id, load.table.id, types,
                                                 load.types_profile_id, "launch the load again (`pulumi up "
                                                 "--replace` of its LoadJob)"))
    if error is not None:
        raise ServiceError(error)
    return types


class ReadAndEncode(beam.DoFn):
    """A data-file key in; (row, Source) rows out (a `buckets.Routed.row`), plus tagged
    expired items, dead letters (JSON lines) and the file's counts. Mirrors `load._rows`
    bucket for bucket."""

    def __init__(self, load: BeamLoad):
        self.load = load
        self._codec: Codec | None = None
        self._codec_types: AttributeTypes | None = None

    def setup(self) -> None:
        self._counters = {name: Metrics.counter(NAMESPACE, name) for name in COUNTERS}
        if self.load.types is not None:
            self._codec = Codec(self.load.table, self.load.types)  # once per worker, not per file

    def _codec_for(self, types: AttributeTypes | None) -> Codec:
        if self._codec is None or (types is not None and types is not self._codec_types):
            self._codec, self._codec_types = Codec(self.load.table, types or {}), types
        return self._codec

    def process(self, key: str, types: AttributeTypes | None = None) -> Iterator[Any]:
        load, manifest = self.load, self.load.manifest
        f = manifest.files_by_key[key]
        codec = self._codec_for(types)
        verify_file(manifest, f)  # an md5 mismatch fails the bundle before any row is written
        counts = FileCounts()
        write_time, now, sample = manifest.export_time_micros, load.now_micros, load.sample
        fast, loaded = loaded_cells(codec, sample), 0  # the common case in one call, as the local encoders
        for record in read_records(manifest, f, check=False):  # route checks as it encodes
            declined = False
            if fast is not None and record.unchecked is not None:
                row = fast(record.item, write_time, now)
                if row is not None:
                    loaded += 1
                    yield row, Source(record.file, record.line)
                    continue
                declined = True
            routed = route(record, codec, write_time, now, sample, counts, declined)
            if routed.dead is not None:
                yield TaggedOutput(DEAD, record_json(record.file, record.line, routed.dead, routed.raw,
                                                     redact=load.redact))
            if routed.expired is not None:
                yield TaggedOutput(EXPIRED, json.dumps({"file": record.file, "line": record.line,
                                                        "expiry_micros": routed.expired.expiry_micros}))
            if routed.row is not None:
                yield routed.row, Source(record.file, record.line)
        count_loaded(counts, loaded)
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
        self.app_profile_id, self.settings, self.redact = load.app_profile_id, load.writer, load.redact
        self.drain_every = 5 * load.writer.flow_control_max_mutation_count
        self._batcher: Any = None  # the open MutationsBatcher, between start_bundle and its close
        self._collections = Collections(load.writer.rows_per_collection)

    def setup(self) -> None:
        from google.cloud.bigtable.data import BigtableDataClient

        with quiet_connection_warning():
            self._client = BigtableDataClient(project=self.project)
        read_responses_raw(self._client)
        self._table = self._client.get_table(self.instance_id, self.table_id, app_profile_id=self.app_profile_id)
        self._cells = EntryBytes()  # the compiled encoder's rows as wire bytes, heads made once per worker
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
        for source, reason in rejected:  # as `run.py`: a rejected row moves from loaded to dead-lettered
            self._loaded.dec()
            self._dead.inc()
            yield TaggedOutput(DEAD, wrap(record_json(source.file, source.line, reason, None, redact=self.redact)))
            yield TaggedOutput(COUNTS, wrap((source.file, {"loaded": -1, "dead_lettered": 1})))

    def start_bundle(self) -> None:
        self._open()

    def process(self, element: tuple) -> Iterator[Any]:
        row, source = element
        entry = row_entry(row, source, self._cells)
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


def _sum_counts(parts: Iterable[dict[str, Any]]) -> dict[str, Any]:
    total = FileCounts()
    for part in parts:
        total.add(FileCounts(**part))
    return asdict(total)


def build_pipeline(pipeline: beam.Pipeline, load: BeamLoad) -> None:
    """The load as Beam transforms on `pipeline` (shared by DirectRunner and Dataflow)."""
    keys = (pipeline
            | "DataFiles" >> beam.Create(list(load.files))
            | "SpreadFiles" >> beam.Reshuffle())  # on Dataflow: files spread over the workers
    types = None
    if load.types is None:
        types = AsSingleton(keys
                            | "InferFileTypes" >> beam.ParDo(_InferFileTypes(load.table, load.manifest))
                            | "MergeTypes" >> beam.CombineGlobally(_MergeTypes())
                            | "RecordTypes" >> beam.Map(_record_job_types, load))
    encoded = keys | "ReadAndEncode" >> beam.ParDo(ReadAndEncode(load), types).with_outputs(
        EXPIRED, DEAD, COUNTS, main="rows")
    written = encoded.rows | "WriteRows" >> beam.ParDo(WriteRows(load)).with_outputs(DEAD, COUNTS)

    def text_sink(prefix: str) -> Any:
        return beam.io.WriteToText(prefix, file_name_suffix=".jsonl", skip_if_empty=True)

    ((encoded[DEAD], written[DEAD])
     | "AllDeadLetters" >> beam.Flatten()
     | "WriteDeadLetters" >> text_sink(load.path(DEAD_LETTER_DIR, f"beam-{load.run_id}")))
    (encoded[EXPIRED]
     | "WriteExpired" >> text_sink(load.path(EXPIRED_DIR, f"beam-{load.run_id}")))
    ((encoded[COUNTS], written[COUNTS])
     | "AllCounts" >> beam.Flatten()
     | "CountsPerFile" >> beam.CombinePerKey(_sum_counts)
     | "CountsAsJson" >> beam.MapTuple(lambda key, counts: json.dumps({"file": key, **counts}))
     | "WriteCounts" >> text_sink(load.path("beam-runs", load.run_id, "counts")))


