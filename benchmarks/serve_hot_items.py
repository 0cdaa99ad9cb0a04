"""Hot and wide items: `serve` against DynamoDB Local on the same machine, one run (issue 43).

Hot item: `--threads` threads, each with its own boto3 client and boto3's default retries,
send `UpdateItem ADD n :1` to one item for `--seconds` (after one untimed second); `n` is
no counter of the mapping, so on serve each is a read-check-write of one row. Reports
acknowledged writes per second, p50 and p99 latency, the errors that reached the caller,
whether the final value equals the acknowledged writes, and serve / DynamoDB Local
(the issue's goal: at least 0.5).

Wide item: a PutItem of `--attributes` attributes (20,000 by default: "a0".."a19999",
short strings), then a GetItem of it, each timed `--repeat` times on both sides (the
issue's goal: the PutItem within 3x of DynamoDB Local's time).

One run starts its own Bigtable emulator and DynamoDB Local (127.0.0.1, stopped by PID)
and `serve` with each `--workers` count, on a stage with the Movies spec. Run:

    uv run python benchmarks/serve_hot_items.py [--seconds 10] [--threads 32] [--workers 1,2]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "0")  # before gRPC's import: the loader forks (load/encoder.py)

import boto3  # noqa: E402
from botocore.config import Config  # noqa: E402

from benchmarks.serve_throughput import fill_dynamodb_local, movies_stage, start_serve  # noqa: E402
from ddb2bigtable.bigtable import emulator  # noqa: E402
from tests.replicate import dynamodb_local  # noqa: E402

HOT = {"year": {"N": "4000"}, "title": {"S": "hot"}}
WIDE = {"year": {"N": "4001"}, "title": {"S": "wide"}}


def client(endpoint: str, threads: int = 1):
    """boto3 as an application runs it: default retries, a pool for every thread."""
    return boto3.client("dynamodb", endpoint_url=endpoint, region_name="us-west-2", aws_access_key_id="local",
                        aws_secret_access_key="local", config=Config(max_pool_connections=threads, read_timeout=60))


def hot(endpoint: str, threads: int, seconds: float) -> dict[str, float]:
    """`threads` writers of one item for `seconds`: rate, p50, p99, errors, lost updates."""
    setup = client(endpoint)
    setup.put_item(TableName="Movies", Item={**HOT, "n": {"N": "0"}})
    latencies: list[list[float]] = [[] for _ in range(threads)]
    acknowledged, errors = [0] * threads, [0] * threads
    start = threading.Barrier(threads + 1)
    stop_at, counting = [0.0], [False]

    def work(i: int) -> None:
        c = client(endpoint)
        c.describe_table(TableName="Movies")  # connection and botocore's first call, untimed
        start.wait()
        while time.monotonic() < stop_at[0]:
            began = time.perf_counter()
            try:
                c.update_item(TableName="Movies", Key=HOT, UpdateExpression="ADD n :one",
                              ExpressionAttributeValues={":one": {"N": "1"}})
            except c.exceptions.ClientError:
                errors[i] += 1
                continue
            acknowledged[i] += 1
            if counting[0]:
                latencies[i].append(time.perf_counter() - began)

    workers = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    for w in workers:
        w.start()
    stop_at[0] = time.monotonic() + 1 + seconds
    start.wait()
    time.sleep(1)  # warm-up second, its writes counted in the final value only
    counting[0] = True
    began = time.monotonic()
    for w in workers:
        w.join()
    elapsed = time.monotonic() - began
    flat = [x for lane in latencies for x in lane]
    final = int(setup.get_item(TableName="Movies", Key=HOT, ConsistentRead=True)["Item"]["n"]["N"])
    q = statistics.quantiles(flat, n=100)
    return {"rate": len(flat) / elapsed, "p50": q[49], "p99": q[98], "errors": sum(errors),
            "lost": sum(acknowledged) - final}


def wide(endpoint: str, attributes: int, repeat: int) -> tuple[float, float]:
    """The median seconds of a PutItem of `attributes` attributes, and of a GetItem of it."""
    c = client(endpoint)
    item = {**WIDE, **{f"a{n}": {"S": f"v{n}"} for n in range(attributes)}}
    puts, gets = [], []
    for _ in range(repeat):
        began = time.perf_counter()
        c.put_item(TableName="Movies", Item=item)
        puts.append(time.perf_counter() - began)
        began = time.perf_counter()
        assert len(c.get_item(TableName="Movies", Key=WIDE)["Item"]) == attributes + 2
        gets.append(time.perf_counter() - began)
    return statistics.median(puts), statistics.median(gets)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--threads", type=int, default=32)
    parser.add_argument("--workers", default="1,2", help="serve worker counts to measure, comma separated")
    parser.add_argument("--attributes", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    bigtable, local, served = emulator.start(), dynamodb_local.start(), []
    try:
        with tempfile.TemporaryDirectory() as tmp, emulator.pointed_at(bigtable.address):
            root = Path(tmp)
            movies_stage(root)
            fill_dynamodb_local(local.endpoint, [])
            sides = {"DynamoDB Local": local.endpoint}
            for n in (int(w) for w in args.workers.split(",")):
                process, endpoint = start_serve(root, n)
                served.append(process)
                sides[f"serve --workers {n}"] = endpoint
            print(f"{args.threads} writers of one item, {args.seconds:g} s per side, {os.cpu_count()} cores",
                  flush=True)
            rates = {}
            for side, endpoint in sides.items():
                r = hot(endpoint, args.threads, args.seconds)
                rates[side] = r["rate"]
                print(f"hot item  {side:17} {r['rate']:7.0f} writes/s  p50 {r['p50'] * 1000:6.1f} ms  "
                      f"p99 {r['p99'] * 1000:6.1f} ms  errors {r['errors']:.0f}  lost {r['lost']:.0f}", flush=True)
            base = rates["DynamoDB Local"]
            print(" " * 10 + ", ".join(f"{s} / DynamoDB Local: {r / base:.2f}" for s, r in rates.items()
                                       if s != "DynamoDB Local"), flush=True)
            times = {}
            for side, endpoint in sides.items():
                times[side] = wide(endpoint, args.attributes, args.repeat)
                print(f"wide item {side:17} PutItem of {args.attributes:,} attributes {times[side][0]:6.3f} s  "
                      f"GetItem {times[side][1]:6.3f} s", flush=True)
            base_put = times["DynamoDB Local"][0]
            print(" " * 10 + ", ".join(f"{s} PutItem / DynamoDB Local: {t[0] / base_put:.1f}x"
                                       for s, t in times.items() if s != "DynamoDB Local"), flush=True)
    finally:
        for process in served:
            emulator.stop_process(process)
        local.stop()
        bigtable.stop()


if __name__ == "__main__":
    main()
