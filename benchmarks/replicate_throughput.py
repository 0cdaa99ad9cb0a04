"""Replication's apply rate against the loader's, on the same items in the same run, and
its lag behind a steady writer.

One run starts its own Bigtable emulator and DynamoDB Local (127.0.0.1, stopped by PID).
AWS's Movies export (4,609 items) is written into a DynamoDB Local table with a
NEW_AND_OLD_IMAGES stream, so its stream holds one INSERT per item. Per round, the sides
interleaved (their order reverses every round) so the shared machine's noise hits both:

- loader: `load.run_load` of the Movies export into a fresh table (items/s, wall time);
- replicate: the same export loaded into a fresh table first (untimed: it records the
  types, as in a migration), then `replicate.run_replicate` from before the first write
  until caught up: every record read from DynamoDB Local's stream, decoded, encoded and
  written (records/s, wall time: reading the stream, the codec, Bigtable writes);
- stream read: the same records read with `replicate.stream.StreamReader` and nothing
  else (records/s): the ceiling reading alone puts on replicate;
- reverse: `replicate --reverse` (reverse.run.reverse_table) of serve's own stream, as after
  the write switch: the same items written through serve (its own process, emulator stage,
  untimed) into a table of serve's with a NEW_AND_OLD_IMAGES stream, read back through
  serve's Streams API and written into a fresh DynamoDB Local table (records/s: serve's
  GetRecords over the emulator, the BatchWriteItem calls). The mirror of forward, which
  reads DynamoDB Local's stream and writes the emulator (serve's write path must store
  its records: docs/streams.md). The issue's goal: reverse at least 0.8 of replicate's rate
  in one run;
- DynamoDB write: the same items written with BatchWriteItem, 25 a call, IN_FLIGHT calls
  at once, and nothing else (items/s): the ceiling DynamoDB Local's writes put on reverse.

Each side runs once untimed first (imports, channels, the encoder's first fork,
botocore's data files). The figure of merit is replicate / loader (the issue's goal: at
least 0.5). The lag, measured first while DynamoDB Local is fresh: a writer puts
`--writer-rate` items a second (in batches) for `--writer-seconds` while
`replicate --follow` runs; each record's lag is the time from its put until Bigtable
acknowledged it (tests/replicate/steady_writer.py: DynamoDB Local's stream times are
rounded to the minute), reported as p50/p99 with the writer's achieved rate. Run:

    uv run python benchmarks/replicate_throughput.py [--repeat 5] [--writer-rate 200] [--writer-seconds 20] [--no-lag]
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import itertools
import os
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "0")  # before gRPC's import: the loader forks (load/encoder.py)
os.environ.setdefault("AWS_ACCESS_KEY_ID", "local")
os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "local")

import boto3  # noqa: E402
from botocore.config import Config  # noqa: E402

from ddb2bigtable.bigtable import emulator  # noqa: E402
from ddb2bigtable.bigtable.table_admin import ensure_tables  # noqa: E402
from ddb2bigtable.exports.manifests import open_export  # noqa: E402
from ddb2bigtable.exports.reader import read_records  # noqa: E402
from ddb2bigtable.load.run import LoadOptions, run_load  # noqa: E402
from ddb2bigtable.plan.planner import plan_stage  # noqa: E402
from ddb2bigtable.replicate.opening import now_micros  # noqa: E402
from ddb2bigtable.replicate.reverse.run import reverse_table  # noqa: E402
from ddb2bigtable.replicate.reverse.writes import BATCH, IN_FLIGHT  # noqa: E402
from ddb2bigtable.replicate.run import ReplicateOptions, run_replicate  # noqa: E402
from ddb2bigtable.replicate.stream import StreamReader  # noqa: E402
from ddb2bigtable.spec.reading import read_spec  # noqa: E402
from ddb2bigtable.spec.stage import load_stage  # noqa: E402
from tests.replicate import dynamodb_local  # noqa: E402
from tests.replicate.steady_writer import SteadyWriter, TimedReader, summary  # noqa: E402

warnings.filterwarnings("ignore", message="Connecting to Bigtable emulator", category=RuntimeWarning)

PROJECT = "bench-project"
APP_PROFILE = "migration-load"
MOVIES = ROOT / "exports" / "movies"
_names = itertools.count()


def _create_movies_table(db: Any, name: str) -> None:
    """Movies' key schema with a stream of both images, on DynamoDB Local or on serve alike."""
    db.create_table(TableName=name, BillingMode="PAY_PER_REQUEST",
                    AttributeDefinitions=[{"AttributeName": "year", "AttributeType": "N"},
                                          {"AttributeName": "title", "AttributeType": "S"}],
                    KeySchema=[{"AttributeName": "year", "KeyType": "HASH"},
                               {"AttributeName": "title", "KeyType": "RANGE"}],
                    StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"})


class Bench:
    def __init__(self, dynamodb: dynamodb_local.DynamoDBLocal, work: Path):
        self.dynamodb, self.work = dynamodb, work
        spec = read_spec(ROOT / "specs" / "movies.yaml")
        self.table = spec.tables[0]
        (self.instance,) = plan_stage(load_stage("local", ROOT), [spec]).instances
        manifest = open_export(str(MOVIES))
        self.items = [r.item for f in manifest.files for r in read_records(manifest, f) if r.item is not None]

    def dynamo_table(self) -> tuple[str, int]:
        """A fresh DynamoDB Local table with a stream, holding every Movies item (written
        after the returned start point)."""
        name = f"Movies-bench-{next(_names)}"
        db = self.dynamodb.client()
        _create_movies_table(db, name)
        since = now_micros()
        for i in range(0, len(self.items), 25):
            db.batch_write_item(RequestItems={name: [{"PutRequest": {"Item": item}}
                                                     for item in self.items[i:i + 25]]})
        return name, since

    def fresh_instance(self) -> str:
        instance_id = f"r{next(_names)}-{self.instance.id}"[:33]
        ensure_tables(PROJECT, replace(self.instance, id=instance_id), [self.table.id])
        return instance_id

    def load(self, instance_id: str, work_dir: Path) -> float:
        began = time.perf_counter()
        report = run_load(self.table, str(MOVIES), LoadOptions(project=PROJECT, instance_id=instance_id,
                                                                app_profile_id=APP_PROFILE, work_dir=work_dir))
        seconds = time.perf_counter() - began
        assert report.complete, report.error
        return report.total("loaded") / seconds

    def loader(self) -> float:
        return self.load(self.fresh_instance(), self.work / f"load-{next(_names)}")

    def replicate(self, name: str, since: int, workers: int = 4) -> float:
        instance_id, work_dir = self.fresh_instance(), self.work / f"rep-{next(_names)}"
        self.load(instance_id, work_dir)  # untimed: the types, as a migration loads before replicating
        table = replace(self.table, source=replace(self.table.source, table=name))
        options = ReplicateOptions(project=PROJECT, instance_id=instance_id, app_profile_id=APP_PROFILE,
                                   work_dir=work_dir, since_micros=since, endpoint_url=self.dynamodb.endpoint,
                                   workers=workers)
        began = time.perf_counter()
        report = run_replicate(table, options)
        seconds = time.perf_counter() - began
        assert report.applied == len(self.items) and report.dead_letters == 0, report.as_json()
        return report.applied / seconds

    def target_table(self) -> str:
        """A fresh DynamoDB Local table without a stream: where reverse replication writes."""
        target = f"Movies-back-{next(_names)}"
        self.dynamodb.client().create_table(
            TableName=target, BillingMode="PAY_PER_REQUEST",
            AttributeDefinitions=[{"AttributeName": "year", "AttributeType": "N"},
                                  {"AttributeName": "title", "AttributeType": "S"}],
            KeySchema=[{"AttributeName": "year", "KeyType": "HASH"}, {"AttributeName": "title", "KeyType": "RANGE"}])
        return target

    def dynamodb_write(self) -> float:
        target = self.target_table()
        writer = StreamReader(target, "us-west-2", self.dynamodb.endpoint, connections=IN_FLIGHT + 2)
        batches = [self.items[i:i + BATCH] for i in range(0, len(self.items), BATCH)]

        def put(batch: list) -> None:
            waiting = [{"PutRequest": {"Item": item}} for item in batch]
            while waiting:
                answer = writer.call("batch_write_item", "UnprocessedItems", RequestItems={target: waiting})
                waiting = answer["UnprocessedItems"].get(target, [])
        began = time.perf_counter()
        with ThreadPoolExecutor(max_workers=IN_FLIGHT) as pool:
            list(pool.map(put, batches))
        seconds = time.perf_counter() - began
        self.dynamodb.client().delete_table(TableName=target)
        return len(self.items) / seconds

    def served_table(self, serve: str) -> tuple[str, int]:
        """A fresh table of serve's with a stream, every Movies item written into it through
        serve's BatchWriteItem after the returned start point."""
        name = f"Movies-served-{next(_names)}"
        db = client(serve)
        _create_movies_table(db, name)
        since = now_micros()
        for i in range(0, len(self.items), 25):
            waiting = [{"PutRequest": {"Item": item}} for item in self.items[i:i + 25]]
            while waiting:
                waiting = db.batch_write_item(RequestItems={name: waiting})["UnprocessedItems"].get(name, [])
        return name, since

    def reverse(self, serve: str, name: str, since: int, workers: int = 4) -> float:
        """serve's stream of `name` written into a fresh DynamoDB Local table."""
        target, db = self.target_table(), self.dynamodb.client()
        table = replace(self.table, source=replace(self.table.source, table=target))
        options = ReplicateOptions(project=PROJECT, instance_id=self.instance.id, app_profile_id=None,
                                   work_dir=self.work / f"rev-{next(_names)}", since_micros=since,
                                   endpoint_url=self.dynamodb.endpoint, stream_endpoint_url=serve, workers=workers)
        stream = StreamReader(name, "us-west-2", serve, connections=workers + 2)
        began = time.perf_counter()
        report = asyncio.run(reverse_table(table, options, stream=stream))
        seconds = time.perf_counter() - began
        assert report.applied == len(self.items) and report.dead_letters == 0, report.as_json()
        db.delete_table(TableName=target)
        return report.applied / seconds

    def stream_read(self, name: str) -> float:
        reader = StreamReader(name, "us-west-2", self.dynamodb.endpoint)
        began = time.perf_counter()
        arn = reader.stream().arn
        count = sum(len(page.records) for shard in reader.shards(arn) for page in reader.read(arn, shard, None))
        seconds = time.perf_counter() - began
        assert count == len(self.items), count
        return count / seconds

    def lag(self, rate: float, seconds: float) -> tuple[dict[str, float], float, float]:
        """Lag percentiles, the writer's achieved rate and replicate's rate under a steady writer."""
        name, since = self.dynamo_table()
        instance_id, work_dir = self.fresh_instance(), self.work / f"lag-{next(_names)}"
        self.load(instance_id, work_dir)
        table = replace(self.table, source=replace(self.table.source, table=name))
        base = ReplicateOptions(project=PROJECT, instance_id=instance_id, app_profile_id=APP_PROFILE,
                                work_dir=work_dir, since_micros=since, endpoint_url=self.dynamodb.endpoint)
        run_replicate(table, base)  # caught up with the Movies items first
        reader = TimedReader(name, "us-west-2", self.dynamodb.endpoint)
        writer = SteadyWriter(self.dynamodb.client(), name, rate, seconds, applied=lambda: len(reader.lags))
        writer.start()
        report = run_replicate(table, replace(base, since_micros=None, follow=True, stop=writer.done),
                               reader.applied, reader=reader)
        assert not writer.errors and report.dead_letters == 0, writer.errors
        assert len(reader.lags) == writer.written, (len(reader.lags), writer.written)
        return summary(reader.lags), writer.achieved_rate, report.applied / report.seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--writer-rate", type=float, default=200.0)
    parser.add_argument("--writer-seconds", type=float, default=20.0)
    parser.add_argument("--no-lag", action="store_true", help="skip the steady writer's lag (a short run)")
    args = parser.parse_args()
    dynamodb = dynamodb_local.start()
    try:
        with tempfile.TemporaryDirectory() as tmp, emulator.start() as emu:
            os.environ[emulator.EMULATOR_ENV] = emu.address
            serving, serve = start_serve(Path(tmp))
            try:
                bench = Bench(dynamodb, Path(tmp))
                print(f"emulator {emu.address}, DynamoDB Local {dynamodb.endpoint}; {len(bench.items):,} items",
                      flush=True)
                # The lag first, while DynamoDB Local is fresh: after the rounds below the
                # writer reached 33 of 200 items/s there, though each round's table is deleted.
                if not args.no_lag:
                    lags, written, applied = bench.lag(args.writer_rate, args.writer_seconds)
                    print(f"steady writer {written:,.0f} items/s for {args.writer_seconds:g} s: lag p50 "
                          f"{lags['p50']:.2f} s, p99 {lags['p99']:.2f} s, max {lags['max']:.2f} s (replicate applied "
                          f"{applied:,.0f} records/s over the run, polls included)", flush=True)
                bench.loader()  # warm-ups, one each: imports, channels, the encoder's first fork,
                warm_up = bench.dynamo_table()
                bench.replicate(*warm_up)  # botocore's data files (parsed once per process)
                bench.reverse(serve, *bench.served_table(serve))
                dynamodb.client().delete_table(TableName=warm_up[0])
                rates: dict[str, list[float]] = {"loader": [], "replicate": [], "stream read": [], "reverse": [],
                                                 "DynamoDB write": []}
                for round_no in range(args.repeat):
                    name, since = bench.dynamo_table()
                    served = bench.served_table(serve)
                    sides = [("loader", bench.loader),
                             ("replicate", functools.partial(bench.replicate, name, since)),
                             ("stream read", functools.partial(bench.stream_read, name)),
                             ("reverse", functools.partial(bench.reverse, serve, *served)),
                             ("DynamoDB write", bench.dynamodb_write)]
                    for side, measure in sides if round_no % 2 == 0 else sides[::-1]:
                        rates[side].append(measure())
                        print(f"  round {round_no + 1} {side:12} {rates[side][-1]:8,.0f} items/s", flush=True)
                    dynamodb.client().delete_table(TableName=name)  # DynamoDB Local slows as its tables pile up
                print()
                print(f"{'items/s, best (median)':28}" + "".join(f"{side:>22}" for side in rates))
                print(f"{'Movies (4,609)':28}" + "".join(f"{max(r):>12,.0f} ({statistics.median(r):,.0f})"
                                                         for r in rates.values()))
                ratio = [rep / load for rep, load in zip(rates["replicate"], rates["loader"], strict=True)]
                print(f"replicate / loader, per round: best {max(ratio):.2f}, median {statistics.median(ratio):.2f} "
                      f"(best rates: {max(rates['replicate']) / max(rates['loader']):.2f})")
                print(f"replicate / stream read alone, median: "
                      f"{statistics.median(rates['replicate']) / statistics.median(rates['stream read']):.2f}")
                back = [rev / rep for rev, rep in zip(rates["reverse"], rates["replicate"], strict=True)]
                print(f"reverse / replicate (forward), per round: best {max(back):.2f}, median "
                      f"{statistics.median(back):.2f}, each {', '.join(f'{r:.2f}' for r in back)} (goal: 0.8)")
                print(f"reverse / DynamoDB write alone, median: "
                      f"{statistics.median(rates['reverse']) / statistics.median(rates['DynamoDB write']):.2f}")
            finally:
                emulator.stop_process(serving)
    finally:
        dynamodb.stop()


def client(endpoint: str) -> Any:
    return boto3.client("dynamodb", endpoint_url=endpoint, region_name="us-west-2", aws_access_key_id="local",
                        aws_secret_access_key="local", config=Config(retries={"max_attempts": 5}, read_timeout=60))


def start_serve(tmp: Path) -> tuple[subprocess.Popen, str]:
    """serve over the Movies spec on the local stage (the emulator), its log in `tmp`."""
    port = emulator.free_port()
    with open(tmp / "serve.log", "ab") as log:
        process = subprocess.Popen([sys.executable, "-m", "ddb2bigtable", "serve", str(ROOT / "specs" / "movies.yaml"),
                                    "--stage", "local", "--root", str(ROOT), "--port", str(port)],
                                   stdout=log, stderr=log)
    emulator.wait_for_port("127.0.0.1", port, 60.0)
    return process, f"http://127.0.0.1:{port}"


if __name__ == "__main__":
    main()
