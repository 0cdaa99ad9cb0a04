"""Hot and wide items: `serve` against DynamoDB Local on the same machine, one run (issue 43).

Hot item: `--threads` clients (threads, each with its own boto3 client and boto3's default
retries) send `UpdateItem ADD n :1` for `--seconds` (after one untimed second), a
`--hot-share` of them to one item and the rest to one of `--cold-items` others at random
(by default every write goes to the hot item); `n` is no counter of the mapping, so on
serve each is a read-check-write of one row. Reports acknowledged writes per second, p50
and p99 latency (when writes are mixed, also the p99 of the hot item's writes and of the
others': the hot ones, a tenth of all, fill the slowest percent), the errors that
reached the caller (ProvisionedThroughputExceeded among them), whether the counters' final
values equal the acknowledged writes, and serve / DynamoDB Local (the issue's goal: at
least 0.5). The issue's two cases:

    --threads 32                                     32 writers of one item
    --threads 200 --seconds 20 --hot-share 0.1      200 clients, 10 % of writes on one item

Wide item: a PutItem of `--attributes` attributes (20,000 by default: "a0".."a19999",
short strings; 0 skips it), then a GetItem of it, each timed `--repeat` times on both
sides (the issue's goal: the PutItem within 3x of DynamoDB Local's time).

One run starts its own Bigtable emulator and DynamoDB Local (127.0.0.1, stopped by PID)
and `serve` with each `--workers` count, on a stage with the Movies spec. Run:

    uv run python benchmarks/serve_hot_items.py [--seconds 10] [--threads 32] [--workers 1,2]
"""

from __future__ import annotations

import argparse
import collections
import functools
import os
import random
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "0")  # before gRPC's import: the loader forks (load/encoder.py)

import boto3  # noqa: E402
from botocore.config import Config  # noqa: E402

from benchmarks.serve_throughput import BASELINE, movies_world, ratio_line  # noqa: E402

HOT = {"year": {"N": "4000"}, "title": {"S": "hot"}}
WIDE = {"year": {"N": "4001"}, "title": {"S": "wide"}}
COLD_YEAR = 4002  # the first side's cold items' partition (titles cold-0, cold-1, ...); each side has its own


def client(endpoint: str, threads: int = 1):
    """boto3 as an application runs it: default retries, a pool for every thread."""
    return boto3.client("dynamodb", endpoint_url=endpoint, region_name="us-west-2", aws_access_key_id="local",
                        aws_secret_access_key="local", config=Config(max_pool_connections=threads, read_timeout=60))


def hot(endpoint: str, threads: int, seconds: float, share: float = 1.0, cold_items: int = 0,
        cold_year: int = COLD_YEAR) -> dict[str, Any]:
    """`threads` writers for `seconds`, `share` of their writes on one item and the rest on
    `cold_items` others (partition `cold_year`, not written before): rate, p50, p99 (all
    writes; the hot item's), errors that reached the caller, answers the SDK retried, lost
    updates."""
    setup = client(endpoint)
    setup.put_item(TableName="Movies", Item={**HOT, "n": {"N": "0"}})
    latencies: list[list[tuple[float, bool]]] = [[] for _ in range(threads)]  # (seconds, on the hot item)
    acknowledged = [collections.Counter[str]() for _ in range(threads)]
    errors = [collections.Counter[tuple[str, bool]]() for _ in range(threads)]  # (code, on the hot item)
    stop_at, counting = [float("inf")], [False]
    # the clock starts once every thread has made its first, untimed call: on serve 32
    # DescribeTables at once took 16 s (each counts the table until one has: table_counts.py),
    # longer than a run, which then timed no write at all
    start = threading.Barrier(threads + 1, action=lambda: stop_at.__setitem__(0, time.monotonic() + 1 + seconds))
    clients = [client(endpoint) for _ in range(threads)]  # made here: boto3's default session is not thread-safe
    retried = [collections.Counter[str]() for _ in range(threads)]  # error answers boto3 saw (and retried)
    for i, c in enumerate(clients):
        c.meta.events.register("needs-retry.dynamodb.UpdateItem", functools.partial(_seen, retried[i]))

    def work(i: int) -> None:
        c, rng = clients[i], random.Random(i)
        c.describe_table(TableName="Movies")  # connection and botocore's first call, untimed
        start.wait()
        while time.monotonic() < stop_at[0]:
            on_hot = rng.random() < share
            key = HOT if on_hot else {"year": {"N": str(cold_year)},
                                      "title": {"S": f"cold-{rng.randrange(cold_items)}"}}
            began = time.perf_counter()
            try:
                c.update_item(TableName="Movies", Key=key, UpdateExpression="ADD n :one",
                              ExpressionAttributeValues={":one": {"N": "1"}})
            except c.exceptions.ClientError as error:
                errors[i][error.response["Error"]["Code"], on_hot] += 1
                continue
            acknowledged[i]["hot" if on_hot else "cold"] += 1
            if counting[0]:
                latencies[i].append((time.perf_counter() - began, on_hot))

    workers = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    for w in workers:
        w.start()
    start.wait()
    time.sleep(1)  # warm-up second, its writes counted in the final values only
    counting[0] = True
    began = time.monotonic()
    for w in workers:
        w.join()
    elapsed = time.monotonic() - began
    flat = [x for lane in latencies for x, _ in lane]
    p99 = {on_hot: _p99([x for lane in latencies for x, hot_one in lane if hot_one == on_hot])
           for on_hot in (True, False)}
    acked, refused = sum(acknowledged, collections.Counter[str]()), sum(errors, collections.Counter[tuple[str, bool]]())
    throttled = {on_hot: refused["ProvisionedThroughputExceededException", on_hot] for on_hot in (True, False)}
    final = int(setup.get_item(TableName="Movies", Key=HOT, ConsistentRead=True)["Item"]["n"]["N"])
    q = statistics.quantiles(flat, n=100)
    return {"rate": len(flat) / elapsed, "p50": q[49], "p99": q[98],
            "hot p99": p99[True], "cold p99": p99[False],
            "hot calls": acked["hot"] + sum(n for (_, on_hot), n in refused.items() if on_hot),
            "errors": sum(refused.values()), "throttled hot": throttled[True], "throttled cold": throttled[False],
            "retried as": sum(retried, collections.Counter[str]()),
            "lost": acked["hot"] - final + acked["cold"] - _cold_total(setup, cold_year)}


def _seen(counter: collections.Counter[str], response=None, caught_exception=None, **_) -> None:
    """botocore's needs-retry event: count an error answer or a failed connection by its name
    (returns nothing, so botocore's own retry handler decides)."""
    if caught_exception is not None:
        counter[type(caught_exception).__name__] += 1
    elif response is not None and "Error" in response[1]:
        counter[response[1]["Error"].get("Code", str(response[0].status_code))] += 1


def _p99(seconds: list[float]) -> float:
    return statistics.quantiles(seconds, n=100)[98] if len(seconds) > 1 else float("nan")


def _cold_total(c, year: int) -> int:
    """The sum of the cold items' counters (each starts absent: ADD makes it 1)."""
    total, page = 0, {}
    while True:
        answer = c.query(TableName="Movies", KeyConditionExpression="#y = :y", ConsistentRead=True,
                         ExpressionAttributeNames={"#y": "year"}, ExpressionAttributeValues={":y": {"N": str(year)}},
                         **page)
        total += sum(int(item["n"]["N"]) for item in answer["Items"])
        if "LastEvaluatedKey" not in answer:
            return total
        page = {"ExclusiveStartKey": answer["LastEvaluatedKey"]}


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
    parser.add_argument("--hot-share", type=float, default=1.0,
                        help="the share of writes on the hot item (the rest on --cold-items others)")
    parser.add_argument("--cold-items", type=int, default=10_000)
    parser.add_argument("--attributes", type=int, default=20_000, help="the wide item's attributes; 0 skips it")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with movies_world([]) as world:
        sides = {BASELINE: world.local.endpoint}
        sides.update({f"serve --workers {n}": world.serve(n) for n in (int(w) for w in args.workers.split(","))})
        print(f"{args.threads} writers, {args.hot_share:.0%} of writes on one item"
              + (f" (the rest on {args.cold_items:,} others)" if args.hot_share < 1 else "")
              + f", {args.seconds:g} s per side, {os.cpu_count()} cores, load average "
              + " ".join(f"{x:.1f}" for x in os.getloadavg()), flush=True)
        rates = {}
        for n, (side, endpoint) in enumerate(sides.items()):
            r = hot(endpoint, args.threads, args.seconds, args.hot_share, args.cold_items, COLD_YEAR + n)
            rates[side] = r["rate"]
            mixed = (f" (hot item {r['hot p99'] * 1000:.0f} ms, others {r['cold p99'] * 1000:.0f} ms)"
                     if args.hot_share < 1 else "")
            print(f"hot item  {side:17} {r['rate']:7.0f} writes/s  p50 {r['p50'] * 1000:6.1f} ms  "
                  f"p99 {r['p99'] * 1000:6.1f} ms{mixed}  errors {r['errors']:.0f} (throttled: "
                  f"{r['throttled hot']:.0f} of {r['hot calls']:.0f} hot calls, {r['throttled cold']:.0f} cold)  "
                  f"lost {r['lost']:.0f}", flush=True)
            if r["retried as"]:
                print(" " * 10 + f"retried by boto3: {r['retried as'].total()} answers ("
                      + ", ".join(f"{code} {n}" for code, n in r["retried as"].most_common()) + ")", flush=True)
        print(" " * 10 + ratio_line(rates), flush=True)
        times = {}
        for side, endpoint in sides.items() if args.attributes else ():
            times[side] = wide(endpoint, args.attributes, args.repeat)
            print(f"wide item {side:17} PutItem of {args.attributes:,} attributes {times[side][0]:6.3f} s  "
                  f"GetItem {times[side][1]:6.3f} s", flush=True)
        if times:
            print(" " * 10 + ratio_line({s: t[0] for s, t in times.items()}, " PutItem", "{:.1f}x"), flush=True)
        print(f"load average at the end {' '.join(f'{x:.1f}' for x in os.getloadavg())}", flush=True)


if __name__ == "__main__":
    main()
