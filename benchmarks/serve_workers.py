"""How serve scales with its workers: `--workers 2` against `--workers 1`, 8 clients, one run.

serve_throughput.py drives its 8 client threads from one Python process, whose GIL caps
the calls a second it can make (about 500 boto3 GetItems on this 2-core machine): both
worker counts then measure the client. Here each client is a process of its own (spawned,
one boto3 client and one thread each, `--clients` of them), so the client side scales too.

One run starts a Bigtable emulator (127.0.0.1, stopped by PID), loads AWS's Movies export,
starts `serve --workers 1` and `serve --workers 2` on it, then in each of `--rounds` rounds
and for each operation (serve_throughput's GetItem of a random movie and PutItem of a new
item) the clients call one side for `--seconds`, then the other, starting together after
their untimed first call. It reports each side's calls a second, p50 / p99, the CPU serve's
processes used meanwhile (cores, and milliseconds a call: what sizing needs), and
`--workers 2 / --workers 1` (issue 54: at least 1.6 with 8 clients). The machine's two
cores also run the clients and the emulator: read the ratio as what this machine gives,
and docs/serve.md for what it means for sizing. Run:

    uv run python benchmarks/serve_workers.py [--seconds 5] [--clients 8] [--rounds 3]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "0")  # before gRPC's import: the loader forks (load/encoder.py)

from serve_throughput import client, movies_stage, operations, start_serve  # noqa: E402

OPERATIONS = ("GetItem", "PutItem")
WORKERS = (1, 2)
_keys: list[dict[str, Any]] = []  # each client process's copy, from the pool's initializer
_clients: dict[str, Any] = {}  # each client process's boto3 client per endpoint


def _ready(keys: list[dict[str, Any]]) -> None:
    _keys[:] = keys


def _calls(endpoint: str, name: str, start_at: float, seconds: float, seed: int) -> list[float]:
    """One client process's latencies for `seconds` from `start_at` (after its first call, untimed)."""
    c = _clients.get(endpoint) or _clients.setdefault(endpoint, client(endpoint))
    operation, rng = operations(_keys)[name], random.Random(seed)
    operation(c, rng, -seed)
    time.sleep(max(0.0, start_at - time.time()))
    took, n, stop = [], 0, start_at + seconds
    while time.time() < stop:
        began = time.perf_counter()
        operation(c, rng, seed * 1_000_000 + n)
        took.append(time.perf_counter() - began)
        n += 1
    return took


def tree_cpu(pid: int) -> float:
    """CPU seconds (user and system) of a process and every descendant alive now (/proc)."""
    stats = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue  # gone meanwhile
            stats[int(entry.name)] = (int(fields[1]), (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK"))
    tree, added = {pid}, True
    while added:
        grown = tree | {child for child, (parent, _) in stats.items() if parent in tree}
        added, tree = grown != tree, grown
    return sum(stats[p][1] for p in tree if p in stats)


def main() -> None:
    from ddb2bigtable.bigtable import emulator
    from ddb2bigtable.exports.manifests import open_export
    from ddb2bigtable.load.run import all_items
    from ddb2bigtable.serve.wire import item_to_wire

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    keys = [item_to_wire({"year": i["year"], "title": i["title"]})
            for i in all_items(open_export(str(ROOT / "exports" / "movies")))]
    bigtable, processes = emulator.start(), []
    try:
        with tempfile.TemporaryDirectory() as tmp, emulator.pointed_at(bigtable.address), \
                multiprocessing.get_context("spawn").Pool(args.clients, _ready, (keys,)) as pool:
            root = Path(tmp)
            movies_stage(root)
            sides = {}
            for workers in WORKERS:
                process, sides[workers] = start_serve(root, workers)
                processes.append(process)
            for round_ in range(1, args.rounds + 1):
                print(f"round {round_}: {args.clients} client processes, {args.seconds:g} s per operation and side, "
                      f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}", flush=True)
                for name in OPERATIONS:
                    rates = {}
                    for (workers, endpoint), process in zip(sides.items(), processes, strict=True):
                        # every client process past its first call (in the first round, its boto3 client made)
                        start_at = time.time() + (3 if round_ > 1 else 15)
                        running = pool.starmap_async(_calls, [(endpoint, name, start_at, args.seconds,
                                                               round_ * 100 + i) for i in range(args.clients)])
                        time.sleep(max(0.0, start_at - time.time()))
                        cpu = tree_cpu(process.pid)
                        time.sleep(args.seconds)
                        cpu = tree_cpu(process.pid) - cpu
                        took = [x for lane in running.get() for x in lane]
                        rates[workers] = len(took) / args.seconds
                        q = statistics.quantiles(took, n=100)
                        print(f"{name:8} serve --workers {workers}  {rates[workers]:7.0f}/s  "
                              f"p50 {q[49] * 1000:6.1f} ms  p99 {q[98] * 1000:6.1f} ms  serve's CPU "
                              f"{cpu / args.seconds:.2f} cores, {cpu / len(took) * 1000:.2f} ms a call", flush=True)
                    print(f"{'':9}--workers 2 / --workers 1: {rates[2] / rates[1]:.2f}", flush=True)
    finally:
        for process in processes:
            emulator.stop_process(process)
        bigtable.stop()


if __name__ == "__main__":
    main()
