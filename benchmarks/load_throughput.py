"""Load throughput against a fresh Bigtable emulator: the local loader vs the raw write path.

One run, one emulator (started here on 127.0.0.1), two data sets: AWS's Movies export
(4,609 items) and N generated ~1 KB items (partition S + sort N + a few attributes,
written as a real DynamoDB export). For each, best of --repeat rounds (Movies: of
--movies-repeat, since a quarter-second run is hit whole by any burst of the shared
machine's noise, where a 100,000-item run averages over it), the sides interleaved
(their order reverses every round) so the noise hits both; the median is printed too:

- baselines: the same rows, encoded and turned into entries *before* the timer, pushed
  with the async data client and the same batcher settings as `writer.Writer` (client
  open, append every entry, flush, close). No reading, parsing or encoding: the cost of
  the write path itself, with this machine's emulator on the other end. Three forms:
  "client", the client's own RowMutationEntry of SetCell objects, as the client ships
  (the issue's raw baseline); "protobuf", the loader's entries (protobuf messages built
  once, which spares the client's proto-plus conversions of every mutation); and "write
  path", those entries with the answers read as raw protobuf too
  (`writer.read_responses_raw`): exactly what the loader's writer does, so loader /
  write path is the cost of reading and encoding alone.
- loader: `load.run_load` end to end (manifests, md5 of every file, the type-inference
  pass, the encoder process reading and encoding, the writer sending, report), into a
  fresh table.
- Beam: `load.beam.direct.run_beam_load` (DirectRunner) end to end on Movies.
- CPU per row of each process in the write path (writer, emulator) and the loader
  (writer, encoder processes, emulator), medians over the rounds: on a machine other
  jobs share, the rows/s ratio moves with their load; CPU per row much less, and the
  ratio of the two sums is what the loader / write path ratio tends to when the cores
  are busy.
- memory: peak RSS (VmHWM) of a child process running `run_load` on a smaller and a
  larger generated export (8 times as many items), minus its RSS after imports, and the
  largest peak of its helper processes (the encoders): flat means streaming.

Every measurement writes into a fresh instance whose tables are deleted afterwards, so the
emulator (in-memory) does not grow from one round to the next. Run:

    uv run python benchmarks/load_throughput.py [--repeat 3] [--movies-repeat 9] [--items 100000] \
        [--memory-sizes 100000,800000]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import itertools
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "0")  # before gRPC's import: the loader forks (load/encoder.py)

from ddb2bigtable.bigtable import emulator  # noqa: E402
from ddb2bigtable.bigtable.table_admin import ensure_tables  # noqa: E402
from ddb2bigtable.codec.codec import Codec, Expired  # noqa: E402
from ddb2bigtable.codec.mutations import DeleteRow, SetCell  # noqa: E402
from ddb2bigtable.codec.type_inference import infer_types  # noqa: E402
from ddb2bigtable.exports.manifests import open_export  # noqa: E402
from ddb2bigtable.exports.reader import read_records  # noqa: E402
from ddb2bigtable.exports.writer import write_export  # noqa: E402
from ddb2bigtable.load.run import LoadOptions, run_load  # noqa: E402
from ddb2bigtable.load.writer import (  # noqa: E402
    BigtableDataClientAsync,
    Source,
    WriteSettings,
    mutations,
    read_responses_raw,
    row_entry,
)
from ddb2bigtable.plan.planner import plan_stage  # noqa: E402
from ddb2bigtable.spec.reading import read_spec  # noqa: E402
from ddb2bigtable.spec.stage import load_stage  # noqa: E402

RowMutationEntry = mutations.RowMutationEntry

warnings.filterwarnings("ignore", message="Connecting to Bigtable emulator", category=RuntimeWarning)

PROJECT = "bench-project"
APP_PROFILE = "migration-load"
EXPORT_TIME = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
_instances = itertools.count()

GENERATED_SPEC = """\
version: 1
instance:
  id: bench-load
tables:
  - id: events
    source:
      table: Events
      region: us-east-1
      key:
        partition: {name: user, type: S}
        sort: {name: seq, type: N}
      billing: provisioned
      reads: 100
      writes: 100
      item_size_kb: 1
      storage_gb: 1
    mapping:
      attributes:
        - {name: name, type: S}
        - {name: score, type: N}
        - {name: body, type: S}
"""
WORDS = ("bigtable dynamodb export item row key family qualifier cell value timestamp batch mutation "
         "emulator loader stream gzip manifest partition sort attribute region cluster node").split()


# --- data sets ---------------------------------------------------------------------------

def generated_items(n: int, seed: int = 7):
    """~1 KB DynamoDB items (as the export writer takes them): S partition, N sort, 5 attributes."""
    rng = random.Random(seed)
    for i in range(n):
        body = " ".join(rng.choice(WORDS) for _ in range(115))[:860]
        yield {
            "user": {"S": f"user-{i % 5000:05d}"},
            "seq": {"N": str(i)},
            "name": {"S": f"name {rng.randrange(10**6):06d}"},
            "score": {"N": f"{rng.randrange(10**6) / 100:.2f}"},
            "active": {"BOOL": rng.random() < 0.5},
            "tags": {"SS": sorted({rng.choice(WORDS) for _ in range(3)})},
            "body": {"S": body},
        }


def generate_export(folder: Path, n: int) -> str:
    return str(write_export(folder, "arn:aws:dynamodb:us-east-1:123456789012:table/Events", generated_items(n),
                            export_time=EXPORT_TIME, items_per_file=10_000))


class DataSet:
    def __init__(self, name: str, spec_path: Path, table_id: str, export: str):
        self.name, self.export = name, export
        self.spec = read_spec(spec_path)
        self.table = next(t for t in self.spec.tables if t.id == table_id)
        (self.instance,) = plan_stage(load_stage("local", ROOT), [self.spec]).instances
        self.items = open_export(export).item_count

    def fresh_instance(self) -> str:
        instance_id = f"b{next(_instances)}-{self.instance.id}"[:33]
        ensure_tables(PROJECT, replace(self.instance, id=instance_id), [self.table.id])
        return instance_id

    def drop(self, instance_id: str) -> None:
        from google.cloud.bigtable import Client

        Client(project=PROJECT, admin=True).instance(instance_id).table(self.table.id).delete()

    def entries(self, form: str) -> list[RowMutationEntry]:
        """The loader's very rows, built before any timer starts: as the client's own
        `RowMutationEntry` of client mutations (form "client"), or as the loader's entries
        (form "protobuf": messages built once, see writer.py)."""
        manifest = open_export(self.export)
        records = [r for f in manifest.files for r in read_records(manifest, f)]
        codec = Codec(self.table, infer_types((r.item for r in records if r.item is not None), self.table))
        out = []
        for r in records:
            row = codec.encode(r.item, write_time_micros=manifest.export_time_micros, now_micros=time.time_ns() // 1000)
            if isinstance(row, Expired):
                continue
            if form == "protobuf":
                out.append(row_entry(row, Source(r.file, r.line)))
            else:
                out.append(RowMutationEntry(row.key, [_client_mutation(m) for m in row.mutations]))
        return out


def _client_mutation(m: SetCell | DeleteRow) -> mutations.Mutation:
    if isinstance(m, SetCell):
        return mutations.SetCell(m.family, m.qualifier, m.value, m.timestamp_micros)
    return mutations.DeleteAllFromRow()


# --- the measured runs -------------------------------------------------------------------

async def _push(instance_id: str, table_id: str, entries: list[RowMutationEntry], s: WriteSettings,
                raw_responses: bool) -> None:
    async with BigtableDataClientAsync(project=PROJECT) as client:
        if raw_responses:
            read_responses_raw(client)
        table = client.get_table(instance_id, table_id, app_profile_id=APP_PROFILE)
        async with table.mutations_batcher(flush_limit_mutation_count=s.flush_limit_mutation_count,
                                           flow_control_max_mutation_count=s.flow_control_max_mutation_count,
                                           batch_operation_timeout=s.operation_timeout_seconds) as batcher:
            for entry in entries:
                await batcher.append(entry)


BASELINES = ("client", "protobuf", "write path")
# CPU seconds per row of each measured run, by (data set, side): this process (the writer),
# its children (the load's encoder processes, counted once they are joined), the emulator.
# On a machine other jobs share, rows/s ratios move with their load; CPU per row much less.
CPU: dict[tuple[str, str], list[tuple[float, float, float]]] = {}
_emulator_pid: list[int] = []  # the emulator this run started, whose CPU is counted


def _cpu() -> tuple[float, float, float]:
    times = os.times()
    emulator_cpu = 0.0
    for pid in _emulator_pid:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        emulator_cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime
    return times.user + times.system, times.children_user + times.children_system, emulator_cpu


def _keep_cpu(name: str, side: str, before: tuple[float, float, float], rows: int) -> None:
    (writer, children, emulator_cpu) = (b - a for a, b in zip(before, _cpu(), strict=True))
    CPU.setdefault((name, side), []).append((writer / rows, children / rows, emulator_cpu / rows))


def run_baseline(data: DataSet, side: str) -> float:
    entries = data.entries("client" if side == "client" else "protobuf")
    instance_id = data.fresh_instance()
    gc.collect()
    start, cpu = time.perf_counter(), _cpu()
    asyncio.run(_push(instance_id, data.table.id, entries, WriteSettings(), side == "write path"))
    seconds = time.perf_counter() - start
    rows = len(entries)
    _keep_cpu(data.name, side, cpu, rows)
    del entries
    data.drop(instance_id)
    gc.collect()
    return rows / seconds


def _timed_load(data: DataSet, work: Path, label: str, load: Callable[..., Any]) -> float:
    """Rows/s of one end-to-end load into a fresh instance, dropped afterwards."""
    instance_id = data.fresh_instance()
    options = LoadOptions(project=PROJECT, instance_id=instance_id, app_profile_id=APP_PROFILE,
                          work_dir=work / f"{label}-{instance_id}")
    gc.collect()
    start, cpu = time.perf_counter(), _cpu()
    report = load(data.table, data.export, options)
    seconds = time.perf_counter() - start
    assert report.complete, report.error
    _keep_cpu(data.name, "loader" if label == "load" else label, cpu, report.total("loaded"))
    data.drop(instance_id)
    return report.total("loaded") / seconds


def run_loader(data: DataSet, work: Path) -> float:
    return _timed_load(data, work, "load", run_load)


def run_beam(data: DataSet, work: Path) -> float:
    from ddb2bigtable.load.beam.direct import run_beam_load

    return _timed_load(data, work, "beam", run_beam_load)


def _status_kib(field: str, pid: int | str = "self") -> int | None:
    """A memory figure from /proc/PID/status (KiB); None when the process is gone or not Linux."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1])
    except FileNotFoundError:
        pass
    return None


def _peak_rss_kib() -> int:
    """This process's peak RSS. VmHWM, not ru_maxrss: getrusage keeps the parent's peak
    across fork + exec, so a child would report the benchmark's own peak."""
    peak = _status_kib("VmHWM")
    return peak if peak is not None else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # not Linux


def child_memory(spec: str, table_id: str, export: str, instance_id: str, work: str) -> None:
    """In a child process: run_load, then print peak RSS after imports and at the end (KiB),
    and the largest peak RSS of the load's own helper processes (the encoders)."""
    after_imports = _peak_rss_kib()
    table = next(t for t in read_spec(spec).tables if t.id == table_id)
    options = LoadOptions(project=PROJECT, instance_id=instance_id, app_profile_id=APP_PROFILE, work_dir=Path(work))
    report = run_load(table, export, options)
    peak = _peak_rss_kib()
    helpers = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # KiB on Linux; fork, so no parent's peak
    print(json.dumps({"complete": report.complete, "loaded": report.total("loaded"),
                      "after_imports_kib": after_imports, "peak_kib": peak, "helpers_peak_kib": helpers}))


def measure_memory(data: DataSet, spec_path: Path, work: Path) -> dict:
    """The child's peaks, and its RSS sampled every 0.25 s: the highest sample in the first
    and in the second half of the load. A loader that kept something per item would be
    higher in the second half; a streaming one stays in the same band."""
    instance_id = data.fresh_instance()
    child = subprocess.Popen([sys.executable, __file__, "--child-memory", str(spec_path), data.table.id,
                              data.export, instance_id, str(work / f"mem-{instance_id}")],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    samples = []
    while child.poll() is None:
        if (rss := _status_kib("VmRSS", child.pid)) is not None:
            samples.append(rss // 1024)
        time.sleep(0.25)
    out = child.stdout.read() if child.stdout else ""
    data.drop(instance_id)
    result = json.loads(out.strip().splitlines()[-1])
    assert child.returncode == 0 and result["complete"], result
    loading = samples[len(samples) // 4:]  # after the imports and the start of the load
    half = len(loading) // 2
    result["band"] = (max(loading[:half], default=0), max(loading[half:], default=0))
    return result


# --- main --------------------------------------------------------------------------------

def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--movies-repeat", type=int, default=9)
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--memory-sizes", default="100000,800000")
    parser.add_argument("--no-beam", action="store_true")
    parser.add_argument("--child-memory", nargs=5, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child_memory:
        child_memory(*args.child_memory)
        return

    sizes = [int(s) for s in args.memory_sizes.split(",")]
    with tempfile.TemporaryDirectory() as tmp, emulator.start() as emu:
        os.environ[emulator.EMULATOR_ENV] = emu.address
        _emulator_pid.extend([emu.process.pid] if emu.process is not None else [])
        work = Path(tmp)
        spec_path = work / "events.yaml"
        spec_path.write_text(GENERATED_SPEC)
        print(f"emulator {emu.address}; generating {args.items:,} items ...", flush=True)
        generated = DataSet(f"generated {args.items // 1000}k x ~1 KB", spec_path, "events",
                            generate_export(work / "gen", args.items))
        movies = DataSet("Movies (4,609)", ROOT / "specs" / "movies.yaml", "movies", str(ROOT / "exports" / "movies"))
        datasets = [movies, generated]
        rates = _rates(args, movies, datasets, work)
        print("memory (child process per size) ...", flush=True)
        memory = {}
        for n in sizes:
            data = generated if n == args.items else DataSet(
                f"generated {n}", spec_path, "events", generate_export(work / f"gen-{n}", n))
            memory[n] = measure_memory(data, spec_path, work)
    _print_rates(rates, movies, datasets, beam=not args.no_beam)
    _print_memory(memory)


def _rates(args: argparse.Namespace, movies: DataSet, datasets: list[DataSet],
           work: Path) -> dict[tuple[str, str], list[float]]:
    """Rows/s per (data set, side), the sides of a round in alternating order so drift in
    the shared machine's load does not favour one side."""
    rates: dict[tuple[str, str], list[float]] = {}

    def keep(name: str, side: str, rate: float) -> None:
        rates.setdefault((name, side), []).append(rate)
        print(f"  {name:28} {side:9} {rate:10,.0f} rows/s", flush=True)

    run_loader(movies, work)  # warm-up: imports, channels, the emulator's JIT-free first table
    CPU.clear()
    for round_no in range(max(args.repeat, args.movies_repeat)):
        print(f"round {round_no + 1}", flush=True)
        for data in datasets:
            if round_no >= (args.movies_repeat if data is movies else args.repeat):
                continue
            sides = [*BASELINES, "loader"]
            for side in sides if round_no % 2 == 0 else reversed(sides):
                rate = run_loader(data, work) if side == "loader" else run_baseline(data, side)
                keep(data.name, side, rate)
        if not args.no_beam and round_no < args.repeat:
            keep(movies.name, "beam", run_beam(movies, work))
    return rates


def _print_rates(rates: dict[tuple[str, str], list[float]], movies: DataSet, datasets: list[DataSet],
                 beam: bool) -> None:
    best = {key: max(values) for key, values in rates.items()}
    median = {key: statistics.median(values) for key, values in rates.items()}
    print()
    print("rows/s, best of each (median in brackets). Baselines, pre-built: 'client' = the client's own")
    print("RowMutationEntry objects, as it ships (the issue's raw baseline); 'protobuf' = the loader's entries;")
    print("'write path' = the loader's entries and raw-protobuf answers (the loader's writer without reading)")
    sides = (*BASELINES, "loader")
    print(f"{'data set':26} " + " ".join(f"{side:>17}" for side in sides)
          + f" {'loader/client':>14} {'loader/write path':>18}")
    for data in datasets:
        cells = " ".join(f"{best[data.name, side]:7,.0f} ({median[data.name, side]:6,.0f})" for side in sides)
        c, _, wp, lo = (best[data.name, side] for side in sides)
        mc, _, mwp, mlo = (median[data.name, side] for side in sides)
        print(f"{data.name:26} {cells} {lo / c:6.2f} ({mlo / mc:4.2f}) {lo / wp:10.2f} ({mlo / mwp:4.2f})")
    if beam:
        beam = best[movies.name, "beam"]
        print(f"{'Beam DirectRunner, Movies':26} {'':53} {beam:7,.0f} {'':8} "
              f"  ({beam / best[movies.name, 'loader']:.2f} of the loader)")
    _print_cpu(datasets)


def _print_cpu(datasets: list[DataSet]) -> None:
    """CPU per row by process, medians over the rounds (the warm-up load not among them)."""
    print()
    print("CPU us per row (median): write path = writer + emulator; loader = writer + encoders + emulator")
    print(f"{'data set':26} {'write path':>22} {'loader':>30} {'CPU ratio':>10}")
    for data in datasets:
        if (data.name, "write path") not in CPU or (data.name, "loader") not in CPU:
            continue
        wp = [statistics.median(x[i] for x in CPU[data.name, "write path"]) * 1e6 for i in range(3)]
        lo = [statistics.median(x[i] for x in CPU[data.name, "loader"]) * 1e6 for i in range(3)]
        print(f"{data.name:26} {wp[0]:9.1f} + {wp[2]:4.1f} = {wp[0] + wp[2]:5.1f} "
              f"{lo[0]:7.1f} + {lo[1]:5.1f} + {lo[2]:4.1f} = {sum(lo):5.1f} {(wp[0] + wp[2]) / sum(lo):10.2f}")


def _print_memory(memory: dict[int, dict]) -> None:
    print()
    print(f"{'loader peak memory':26} {'items':>10} {'peak RSS MiB':>14} {'above imports MiB':>18} "
          f"{'largest helper MiB':>19} {'RSS band, 1st / 2nd half':>25}")
    for n, m in memory.items():
        first, second = m["band"]
        print(f"{'':26} {n:10,} {m['peak_kib'] / 1024:14.1f} {(m['peak_kib'] - m['after_imports_kib']) / 1024:18.1f} "
              f"{m['helpers_peak_kib'] / 1024:19.1f} {first:>14} / {second:<8}")


if __name__ == "__main__":
    main()
