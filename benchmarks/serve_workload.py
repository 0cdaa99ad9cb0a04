"""The workload suite's long run (issue 50): every checker of tests/serve/workload/ for
`--seconds` on `serve` and on DynamoDB Local in one run, anomalies per checker side by side.

The checkers: write skew, fractured reads (TransactGetItems and ordered GetItems), plain ADD
mixed with transactions, a process killed (SIGKILL) or paused (SIGSTOP/SIGCONT) mid-commit,
and a token retried after a timeout and after a SIGKILL; each also counts any 5xx attempt and
any traceback in serve's log as an anomaly. Clients are boto3's defaults and reach each side
through a balancer in front of two processes (tests/serve/workload/fronts.py): two serve
processes over one emulator stage, its sweep off; two proxies to DynamoDB Local.

One run starts its own Bigtable emulator and DynamoDB Local (127.0.0.1, stopped by PID) with
serve_throughput.movies_world (a stage holding Movies; each checker makes its own table).

    uv run python benchmarks/serve_workload.py [--seconds 60] [--threads 6] [--only "write skew,..."]
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "0")  # before gRPC's import: the loader forks (load/encoder.py)

from benchmarks.serve_throughput import STAGE, movies_world  # noqa: E402
from tests.serve.workload.counters import mixed_counters  # noqa: E402
from tests.serve.workload.crashes import mid_commit  # noqa: E402
from tests.serve.workload.fractures import fractured_reads  # noqa: E402
from tests.serve.workload.fronts import Fronts, local_fronts, serve_fronts  # noqa: E402
from tests.serve.workload.harness import Report  # noqa: E402
from tests.serve.workload.retries import retried  # noqa: E402
from tests.serve.workload.skew import write_skew  # noqa: E402

CHECKERS: dict[str, Callable[[Fronts, float, int], Report]] = {
    "write skew": write_skew,
    "fractured reads": fractured_reads,
    "mixed counters": mixed_counters,
    "SIGKILL mid-commit": lambda f, s, t: mid_commit(f, s, "SIGKILL", max(t, 3)),
    "SIGSTOP mid-commit": lambda f, s, t: mid_commit(f, s, "SIGSTOP", max(t, 3)),
    "retry after timeout": lambda f, s, _t: retried(f, s, "timeout"),
    "retry after SIGKILL": lambda f, s, _t: retried(f, s, "SIGKILL"),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="per checker and side")
    parser.add_argument("--threads", type=int, default=6)
    parser.add_argument("--only", default=",".join(CHECKERS), help="checkers to run, by name, comma-separated")
    parser.add_argument("--examples", type=int, default=3, help="anomalies printed per checker and side")
    args = parser.parse_args()
    chosen = [name.strip() for name in args.only.split(",")]
    unknown = [name for name in chosen if name not in CHECKERS]
    if unknown:
        parser.error(f"no checker {', '.join(unknown)}; the checkers: {', '.join(CHECKERS)}")
    with movies_world([]) as world:
        sides: list[Fronts] = []
        try:
            sides.append(serve_fronts(world.root, STAGE, world.root))
            sides.append(local_fronts(world.local.endpoint, world.root))
            print(f"{args.seconds:g} s per checker and side, {args.threads} threads, {os.cpu_count()} cores",
                  flush=True)
            table = []
            for name in chosen:
                reports = [CHECKERS[name](fronts, args.seconds, args.threads) for fronts in sides]
                for report in reports:
                    print(report.summary(), flush=True)
                    for anomaly in report.anomalies[:args.examples]:
                        print(f"    {anomaly[:300]}", flush=True)
                table.append((name, *(len(r.anomalies) for r in reports)))
            print(f"\n{'checker':<22}{'serve':>8}{'DynamoDB Local':>16}   (anomalies)")
            for name, on_serve, on_local in table:
                print(f"{name:<22}{on_serve:>8}{on_local:>16}")
        finally:
            for fronts in sides:
                fronts.stop()


if __name__ == "__main__":
    main()
