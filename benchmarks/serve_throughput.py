"""`serve` against DynamoDB Local: GetItem, PutItem and Query throughput and latency, same
machine, same client, one run.

One run starts its own Bigtable emulator and DynamoDB Local (127.0.0.1, stopped by PID),
loads AWS's Movies export (4,609 items) into both (the loader into the emulator, a batch
writer into DynamoDB Local), then for each side, interleaved per operation so the shared
machine's noise hits all of them: `--threads` threads, each with its own boto3 client,
call the operation for `--seconds` (after one untimed second): GetItem of a random
movie, PutItem of a new item into a year of its own, Query of year 2013 with Limit 10,
forward and backward (`ScanIndexForward: false`: the last ten titles).
Sides: DynamoDB Local, and `serve` with each `--workers` count. Reports operations per
second, p50 and p99 latency, serve / DynamoDB Local (the issue's goal: at least 0.5
with `--workers 2`), and each worker count's rate over one worker's (issue 54: at least
1.6 with `--workers 2` and 8 threads on a two-core machine; the threads share this
process's GIL, which caps them near 500 calls a second here: serve_workers.py measures the
scaling with a process per client). Run:

    uv run python benchmarks/serve_throughput.py [--seconds 5] [--threads 8] [--workers 1,2] [--rounds 1]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "0")  # before gRPC's import: the loader forks (load/encoder.py)

import boto3  # noqa: E402
from botocore.config import Config  # noqa: E402

from ddb2bigtable.bigtable import emulator  # noqa: E402
from ddb2bigtable.exports.manifests import open_export  # noqa: E402
from ddb2bigtable.load.local_stage import up  # noqa: E402
from ddb2bigtable.load.run import all_items  # noqa: E402
from ddb2bigtable.serve.wire import item_to_wire  # noqa: E402
from tests.conftest import write_project  # noqa: E402
from tests.replicate import dynamodb_local  # noqa: E402

STAGE = "bench"
Operation = Callable[[object, random.Random, int], None]


def client(endpoint: str):
    return boto3.client("dynamodb", endpoint_url=endpoint, region_name="us-west-2", aws_access_key_id="local",
                        aws_secret_access_key="local",
                        config=Config(retries={"max_attempts": 1}, max_pool_connections=4, read_timeout=30))


def operations(keys: list[dict]) -> dict[str, Operation]:
    def get(c, rng, _n):
        c.get_item(TableName="Movies", Key=rng.choice(keys))

    def put(c, rng, n):
        c.put_item(TableName="Movies", Item={"year": {"N": "3000"}, "title": {"S": f"t{n}-{rng.random()}"},
                                             "info": {"M": {"rating": {"N": "5"}, "plot": {"S": "x" * 200}}}})

    def query(c, _rng, _n, forward=True):
        c.query(TableName="Movies", KeyConditionExpression="#y = :y", ExpressionAttributeNames={"#y": "year"},
                ExpressionAttributeValues={":y": {"N": "2013"}}, Limit=10, ScanIndexForward=forward)

    def backward(c, rng, n):
        query(c, rng, n, forward=False)

    return {"GetItem": get, "PutItem": put, "Query": query, "Query backward": backward}


def drive(endpoint: str, operation: Operation, threads: int, seconds: float) -> tuple[float, list[float]]:
    """Operations per second and every call's latency, `threads` clients for `seconds`."""
    latencies: list[list[float]] = [[] for _ in range(threads)]
    start = threading.Barrier(threads + 1)
    stop_at = [0.0]

    def work(i: int) -> None:
        c, rng = client(endpoint), random.Random(i)
        operation(c, rng, -1)  # connection and botocore's first call, untimed
        start.wait()
        n = 0
        while time.monotonic() < stop_at[0]:
            began = time.perf_counter()
            operation(c, rng, i * 1_000_000 + n)
            latencies[i].append(time.perf_counter() - began)
            n += 1

    workers = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    for w in workers:
        w.start()
    stop_at[0] = time.monotonic() + 1 + seconds
    start.wait()
    time.sleep(1)  # warm-up second, counted out below
    for lane in latencies:
        lane.clear()
    began = time.monotonic()
    for w in workers:
        w.join()
    elapsed = time.monotonic() - began
    flat = [x for lane in latencies for x in lane]
    return len(flat) / elapsed, flat


BASELINE = "DynamoDB Local"


def ratio_line(figures: dict[str, float], what: str = "", form: str = "{:.2f}") -> str:
    """`serve --workers 1 / DynamoDB Local: 0.52, ...`: each side's figure over the baseline's
    of the same run (`what` names the figure, `form` formats the ratio)."""
    base = figures[BASELINE]
    return ", ".join(f"{side}{what} / {BASELINE}: {form.format(figure / base)}"
                     for side, figure in figures.items() if side != BASELINE)


def workers_line(rates: dict[str, float]) -> str:
    """`; --workers 2 / --workers 1: 1.62`: how serve scales with its workers (issue 54), when
    the run measured one worker and more."""
    one = rates.get("serve --workers 1")
    return "".join(f"; --workers {side.rsplit(' ', 1)[1]} / --workers 1: {rate / one:.2f}"
                   for side, rate in rates.items() if one and side.startswith("serve") and side != "serve --workers 1")


def start_serve(root: Path, workers: int, tree: Path = ROOT) -> tuple[subprocess.Popen, str]:
    """serve on `root`'s stage, run from the checkout `tree` (another checkout: its code, the same venv)."""
    port = emulator.free_port()
    log = open(root / f"serve-{workers}-{tree.name}.log", "ab")  # noqa: SIM115 - kept open while serve runs
    process = subprocess.Popen([sys.executable, "-m", "ddb2bigtable", "serve", "--stage", STAGE, "--root", str(root),
                                "--port", str(port), "--workers", str(workers)], stdout=log, stderr=log,
                               cwd=tree, env={**os.environ, "PYTHONPATH": str(tree)})
    emulator.wait_for_port("127.0.0.1", port, 60)
    endpoint = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:  # every worker up: each answers once its catalog and client are ready
        try:
            client(endpoint).list_tables()
            break
        except Exception:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)
    return process, endpoint


def movies_stage(root: Path) -> None:
    """A project under `root` whose stage STAGE (the emulator) holds Movies, loaded from AWS's export."""
    write_project(root, {"movies": (ROOT / "specs" / "movies.yaml").read_text()},
                  {"emulator": True, "regions": "home", "deletion_protection": False, "autoscaling": False,
                   "load": {"runner": "local", "export": str(ROOT / "exports")}}, stage_name=STAGE)
    assert up(root, STAGE).ok


def fill_dynamodb_local(endpoint: str, items: list[dict]) -> None:
    c = client(endpoint)
    c.create_table(TableName="Movies", BillingMode="PAY_PER_REQUEST",
                   KeySchema=[{"AttributeName": "year", "KeyType": "HASH"},
                              {"AttributeName": "title", "KeyType": "RANGE"}],
                   AttributeDefinitions=[{"AttributeName": "year", "AttributeType": "N"},
                                         {"AttributeName": "title", "AttributeType": "S"}])
    for i in range(0, len(items), 25):
        c.batch_write_item(RequestItems={"Movies": [{"PutRequest": {"Item": item_to_wire(it)}}
                                                    for it in items[i:i + 25]]})


@dataclass
class World:
    """One run's servers: the emulator's Movies stage under `root`, DynamoDB Local, and the
    serve processes `serve` starts on that stage."""

    root: Path
    local: Any
    served: list[subprocess.Popen] = field(default_factory=list)

    def serve(self, workers: int, tree: Path = ROOT) -> str:
        process, endpoint = start_serve(self.root, workers, tree)
        self.served.append(process)
        return endpoint


@contextmanager
def movies_world(items: list[dict]) -> Iterator[World]:
    """The emulator with Movies loaded from AWS's export and DynamoDB Local with Movies holding
    `items`, in a temporary project: every server the run starts (serve too, through
    World.serve) is stopped by PID when it ends, also when one of them fails to start."""
    bigtable = emulator.start()
    try:
        local = dynamodb_local.start()
        try:
            with tempfile.TemporaryDirectory() as tmp, emulator.pointed_at(bigtable.address):
                world = World(Path(tmp), local)
                try:
                    movies_stage(world.root)
                    fill_dynamodb_local(local.endpoint, items)
                    yield world
                finally:
                    for process in world.served:
                        emulator.stop_process(process)
        finally:
            local.stop()
    finally:
        bigtable.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--workers", default="1,2", help="serve worker counts to measure, comma separated")
    parser.add_argument("--rounds", type=int, default=1, help="measure every operation and side this many times")
    args = parser.parse_args()
    items = list(all_items(open_export(str(ROOT / "exports" / "movies"))))
    keys = [item_to_wire({"year": i["year"], "title": i["title"]}) for i in items]
    with movies_world(items) as world:
        sides = {BASELINE: world.local.endpoint}
        sides.update({f"serve --workers {n}": world.serve(n) for n in (int(w) for w in args.workers.split(","))})
        for round_ in range(1, args.rounds + 1):
            print(f"round {round_}: {args.threads} client threads, {args.seconds:g} s per operation and side, "
                  f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}", flush=True)
            for name, operation in operations(keys).items():
                rates = {}
                for side, endpoint in sides.items():
                    rate, latencies = drive(endpoint, operation, args.threads, args.seconds)
                    rates[side] = rate
                    q = statistics.quantiles(latencies, n=100)
                    print(f"{name:14} {side:17} {rate:7.0f}/s  p50 {q[49] * 1000:6.1f} ms  "
                          f"p99 {q[98] * 1000:6.1f} ms", flush=True)
                print(" " * 15 + ratio_line(rates) + workers_line(rates), flush=True)


if __name__ == "__main__":
    main()
