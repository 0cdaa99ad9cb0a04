"""`serve` before and after a change: GetItem, PutItem and Query throughput of two checkouts
of the project, on the same emulator and tables, against DynamoDB Local, in one run.

A change to serve's hot path (cross-row transactions added a lock check to every write) must
keep plain operations' speed; timing the two versions in separate runs on a shared 2-core
machine measures the machine's noise as much as the change. So this starts one emulator and
one DynamoDB Local, loads Movies once with this checkout's `up` (the newer schema: an older
serve reads tables with families it does not know), starts serve from `--before` (a
`git worktree add DIR REV` of the older commit, run with this venv) and from this checkout,
and drives the operations of serve_throughput.py on all three sides interleaved per
operation. It prints each side's rate and p99, each serve's ratio to DynamoDB Local, and
after / before (the goal for #44: at least 0.9). Run:

    git worktree add /tmp/before REV
    uv run python benchmarks/serve_before_after.py --before /tmp/before [--seconds 5] [--threads 8] [--workers 2]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "0")  # before gRPC's import: the loader forks (load/encoder.py)

from benchmarks.serve_throughput import drive, movies_world, operations  # noqa: E402
from ddb2bigtable.exports.manifests import open_export  # noqa: E402
from ddb2bigtable.load.run import all_items  # noqa: E402
from ddb2bigtable.serve.wire import item_to_wire  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, required=True, help="a checkout of the older commit (git worktree)")
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=2, help="times each operation is driven on every side")
    args = parser.parse_args()
    if not (args.before / "ddb2bigtable" / "serve").is_dir():
        parser.error(f"--before {args.before}: no ddb2bigtable/serve there; expected a checkout (git worktree add)")
    items = list(all_items(open_export(str(ROOT / "exports" / "movies"))))
    keys = [item_to_wire({"year": i["year"], "title": i["title"]}) for i in items]
    with movies_world(items) as world:
        sides = {"DynamoDB Local": world.local.endpoint, "before": world.serve(args.workers, args.before.resolve()),
                 "after": world.serve(args.workers)}
        print(f"{args.threads} client threads, {args.seconds:g} s per operation, side and round, "
              f"serve --workers {args.workers}, before = {args.before}", flush=True)
        for name, operation in operations(keys).items():
            rates: dict[str, list[float]] = {side: [] for side in sides}
            for _ in range(args.rounds):
                for side, endpoint in sides.items():
                    rate, latencies = drive(endpoint, operation, args.threads, args.seconds)
                    rates[side].append(rate)
                    p99 = statistics.quantiles(latencies, n=100)[98] * 1000
                    print(f"{name:14} {side:15} {rate:7.0f}/s  p99 {p99:6.1f} ms", flush=True)
            best = {side: max(r) for side, r in rates.items()}
            base = best["DynamoDB Local"]
            print(f"{name:14} best: before / DynamoDB Local {best['before'] / base:.2f}, after / DynamoDB Local "
                  f"{best['after'] / base:.2f}, after / before {best['after'] / best['before']:.2f}", flush=True)


if __name__ == "__main__":
    main()
