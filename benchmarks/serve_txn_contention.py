"""Transactions under contention (issue 50): two writers and four readers on three items, on
`serve` over the Bigtable emulator and on DynamoDB Local, in one run.

Each writer repeats one TransactWriteItems adding 1 to all three items; each reader repeats
one TransactGetItems of the three. Clients are boto3's defaults (botocore's standard retries,
a ClientRequestToken on every TransactWriteItems); a cancelled transaction (TransactionConflict)
is counted and the thread goes straight on with the next. The sides take turns `--rounds`
times, `--seconds` each after one untimed second (and `--warmup` seconds of each side before
the first round), so the shared machine's noise hits both.
Reports committed write transactions/s, cancelled/s, the committed calls' p50 and p99
latency, the readers' the same, and serve over DynamoDB Local (the issue asks at least 0.5 of
its committed transactions/s and at most 3x its p99).

One run starts its own Bigtable emulator and DynamoDB Local (127.0.0.1, stopped by PID) and
`serve --workers N` on a stage holding Movies (serve_throughput.movies_world); the items'
table is made through each side's CreateTable. `--before DIR` (a `git worktree add DIR REV` of
an older commit, run with this venv, as serve_before_after.py does) adds that serve as a third
side on the same emulator and table, so a change is measured against its baseline in one run.

    uv run python benchmarks/serve_txn_contention.py [--seconds 10] [--rounds 2] [--workers 1] [--warmup 3]
                                                     [--writers 2] [--readers 4] [--before DIR]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "0")  # before gRPC's import: the loader forks (load/encoder.py)

import boto3  # noqa: E402
from botocore.config import Config  # noqa: E402
from botocore.exceptions import BotoCoreError, ClientError  # noqa: E402

from benchmarks.serve_throughput import BASELINE, movies_world, ratio_line  # noqa: E402

TABLE, ITEMS = "Contended", ("x", "y", "z")


def _write(c) -> None:
    c.transact_write_items(TransactItems=[{"Update": {
        "TableName": TABLE, "Key": {"id": {"S": k}}, "UpdateExpression": "ADD v :one",
        "ExpressionAttributeValues": {":one": {"N": "1"}}}} for k in ITEMS])


def _read(c) -> None:
    c.transact_get_items(TransactItems=[{"Get": {"TableName": TABLE, "Key": {"id": {"S": k}}}} for k in ITEMS])


@dataclass
class Tally:
    """One side's round: each kind's committed calls' latencies and its other outcomes by code."""

    latencies: dict[str, list[float]] = field(default_factory=lambda: {"write": [], "read": []})
    failed: Counter[str] = field(default_factory=Counter)
    attempts: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0
    since: float = float("inf")  # the timed window, on time.monotonic()
    until: float = float("inf")
    lock: threading.Lock = field(default_factory=threading.Lock)

    def timed(self) -> bool:
        return self.since <= time.monotonic() <= self.until

    def note(self, response=None, caught_exception=None, operation=None, **_) -> None:
        answer = (type(caught_exception).__name__ if response is None
                  else response[1].get("Error", {}).get("Code") or str(response[0].status_code))
        if self.timed():
            with self.lock:
                self.attempts[f"{operation.name} {answer}"] += 1


def _client(endpoint: str, tally: Tally | None = None):
    """boto3's defaults, but for the address and fake credentials; every HTTP attempt (botocore
    retries some, after a pause of its own) counted in `tally` by its answer."""
    made = boto3.session.Session().client("dynamodb", endpoint_url=endpoint, region_name="us-west-2",
                                          aws_access_key_id="local", aws_secret_access_key="local",
                                          config=Config(max_pool_connections=2))
    if tally is not None:
        made.meta.events.register("needs-retry.dynamodb", tally.note)
    return made


def contend(endpoint: str, seconds: float, writers: int = 2, readers: int = 4) -> Tally:
    tally = Tally(seconds=seconds)

    def clock() -> None:  # once every thread is ready: one untimed second, then `seconds` timed
        tally.since = time.monotonic() + 1
        tally.until = tally.since + seconds

    start = threading.Barrier(writers + readers, action=clock)

    def work(kind: str) -> None:
        c = _client(endpoint, tally)
        op = _write if kind == "write" else _read
        _read(c)  # the connection and botocore's first call
        start.wait()
        while time.monotonic() < tally.until:
            began = time.perf_counter()
            try:
                op(c)
                outcome = ""
            except ClientError as error:
                outcome = error.response["Error"]["Code"]
            except BotoCoreError as error:
                outcome = type(error).__name__
            took = time.perf_counter() - began
            if tally.timed():
                with tally.lock:
                    if outcome:
                        tally.failed[f"{kind} {outcome}"] += 1
                    else:
                        tally.latencies[kind].append(took)

    threads = [threading.Thread(target=work, args=("write",)) for _ in range(writers)]
    threads += [threading.Thread(target=work, args=("read",)) for _ in range(readers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return tally


def _quantile(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[q - 1] * 1000 if len(values) > 1 else float("nan")


def _line(side: str, t: Tally) -> str:
    w, r = t.latencies["write"], t.latencies["read"]
    failed = ", ".join(f"{k} {n}" for k, n in sorted(t.failed.items())) or "none"
    attempts = ", ".join(f"{k} {n}" for k, n in sorted(t.attempts.items()))
    return (f"{side:>15}: writes {len(w) / t.seconds:6.1f}/s p50 {_quantile(w, 50):6.1f} ms p99 "
            f"{_quantile(w, 99):7.1f} ms | reads {len(r) / t.seconds:6.1f}/s p50 {_quantile(r, 50):6.1f} ms "
            f"p99 {_quantile(r, 99):7.1f} ms | not committed: {failed}\n{'':>24}HTTP attempts: {attempts}")


def _setup(endpoint: str) -> None:
    c = _client(endpoint)
    try:
        c.create_table(TableName=TABLE, KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
                       AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
                       BillingMode="PAY_PER_REQUEST")
    except c.exceptions.ResourceInUseException:  # the other serve of the same stage made it
        pass
    for k in ITEMS:
        c.put_item(TableName=TABLE, Item={"id": {"S": k}, "v": {"N": "0"}})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--workers", type=int, default=1, help="serve's --workers")
    parser.add_argument("--writers", type=int, default=2)
    parser.add_argument("--readers", type=int, default=4, help="(other counts: where the time goes)")
    parser.add_argument("--warmup", type=float, default=3.0, help="seconds of the same workload on each side first, "
                                                                   "untimed (DynamoDB Local's JIT, serve's caches)")
    parser.add_argument("--before", type=Path, help="a checkout of an older commit (git worktree): its serve too")
    args = parser.parse_args()
    if args.before is not None and not (args.before / "ddb2bigtable" / "serve").is_dir():
        parser.error(f"--before {args.before}: no ddb2bigtable/serve there; expected a checkout (git worktree add)")
    with movies_world([]) as world:
        sides = {BASELINE: world.local.endpoint}
        if args.before is not None:
            sides["serve before"] = world.serve(args.workers, args.before.resolve())
        sides[f"serve --workers {args.workers}"] = world.serve(args.workers)
        for endpoint in sides.values():
            _setup(endpoint)
            contend(endpoint, args.warmup, args.writers, args.readers)
        print(f"{args.writers} writers, {args.readers} readers on {len(ITEMS)} items, {args.seconds:g} s per side "
              f"and round, {os.cpu_count()} cores", flush=True)
        rates: dict[str, list[float]] = {side: [] for side in sides}
        p99s: dict[str, list[float]] = {side: [] for side in sides}
        for r in range(args.rounds):
            for side, endpoint in sides.items():
                tally = contend(endpoint, args.seconds, args.writers, args.readers)
                rates[side].append(len(tally.latencies["write"]) / tally.seconds)
                p99s[side].append(_quantile(tally.latencies["write"], 99))
                print(f"round {r + 1} {_line(side, tally)}", flush=True)
        medians = {side: statistics.median(v) for side, v in rates.items()}
        print(f"median committed writes/s: {ratio_line(medians)} (at least 0.5 asked)")
        print(f"median write p99: {ratio_line({s: statistics.median(v) for s, v in p99s.items()})} (at most 3 asked)")


if __name__ == "__main__":
    main()
