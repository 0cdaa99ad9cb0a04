"""PutItems each bringing an attribute name the table has never held, on serve over the
Bigtable emulator: the first names against names after the table's record of types
(`_ddb2bigtable_types`, bigtable/table_types.py) already holds 20,000 (issue 50, finding 6:
after 20,000 names a PutItem with one new name took 24-32 s or answered 500).

One run: serve on the emulator's Movies stage; `--first` PutItems with new names timed;
then `--names` more PutItems through serve, each with a new name (`--threads` at once),
as a table whose items bring names made from data gets them; then `--first` more
PutItems with new names timed. Each timed PutItem is followed by a control, a PutItem of
the same shape with a name the table already held: on a machine shared with other work,
its ratio says how much of `after / first` is the machine's. Prints each side's mean and
p50, the ratio `after / first` (asked: at most 1.5), the controls' ratio, and what the
table's record holds then (serve records no names since it marks the record instead,
bigtable/table_types.py; before, a row each).

With `--loaded N`, the record first holds N names a load recorded (its head row's
columns, as a first export with N attribute names leaves it), and serve's first PutItem
of a new name, which marks the record and reads it whole once, is timed apart.

    .venv/bin/python benchmarks/serve_new_names.py [--names 20000] [--first 200] [--threads 8] [--loaded 0] [--settle 5]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from concurrent.futures import ThreadPoolExecutor

from serve_throughput import client, movies_world

from ddb2bigtable.bigtable.table_types import read_types, record_types

PROJECT, INSTANCE, TABLE = "test-project", "movies-sample", "movies"  # the Movies stage's table on the emulator


def timed_puts(endpoint: str, start: int, count: int, prefix: str | None) -> list[float]:
    """Seconds of each of `count` PutItems, the n-th bringing the new attribute `{prefix}{n}`
    (None: the key alone, no new name)."""
    return [seconds for seconds, _ in timed_pairs(endpoint, start, count, prefix, control=False)]


def timed_pairs(endpoint: str, start: int, count: int, prefix: str | None,
                control: bool = True) -> list[tuple[float, float]]:
    """`timed_puts`, each PutItem followed by one of the same shape whose attribute name the
    table already held (`control`): on a machine shared with other work, the control says
    how much of a side's time is the machine's at that moment. (new, control) seconds."""
    c = client(endpoint)
    pairs = []
    for n in range(start, start + count):
        times = []
        for name in [f"{prefix}{n:06d}" if prefix else None, *(["control"] if control else [])]:
            began = time.perf_counter()
            c.put_item(TableName="Movies", Item={"year": {"N": "1800" if name != "control" else "1799"},
                                                 "title": {"S": f"names {n}"},
                                                 **({name: {"S": "x"}} if name else {})})
            times.append(time.perf_counter() - began)
        pairs.append((times[0], times[-1]))
    return pairs


def fill(endpoint: str, names: int, threads: int) -> None:
    """`names` PutItems through serve, each bringing a new name, `threads` at once."""
    def part(n: int) -> None:
        c = client(endpoint)
        for i in range(n, names, threads):
            c.put_item(TableName="Movies", Item={"year": {"N": "1801"}, "title": {"S": f"fill {i % 500}"},
                                                 f"filled{i:06d}": {"N": str(i)}})
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(part, range(threads)))


async def record_loaded(names: int) -> None:
    """The record of Movies' types holding `names` more names, as a load records them."""
    from google.cloud.bigtable.data import BigtableDataClientAsync

    async with BigtableDataClientAsync(project=PROJECT) as bigtable:
        await record_types(bigtable, PROJECT, INSTANCE, TABLE, {f"loaded{n:06d}": "S" for n in range(names)})


def record_rows() -> tuple[int, int]:
    """Rows of Movies' record of types and the names they hold."""
    from google.cloud.bigtable import Client

    rows = [row for row in Client(project=PROJECT).instance(INSTANCE).table("_ddb2bigtable_types").read_rows()
            if row.row_key == TABLE.encode() or row.row_key.startswith(TABLE.encode() + b"\x00")]
    names = asyncio.run(_names())
    return len(rows), names


async def _names() -> int:
    from google.cloud.bigtable.data import BigtableDataClientAsync

    async with BigtableDataClientAsync(project=PROJECT) as bigtable:
        return len([name for name in await read_types(bigtable, INSTANCE, TABLE) if name])


def line(name: str, seconds: list[float]) -> str:
    return f"{name}: mean {statistics.mean(seconds) * 1000:.1f} ms, p50 {statistics.median(seconds) * 1000:.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--names", type=int, default=20000)
    parser.add_argument("--first", type=int, default=200)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--loaded", type=int, default=0)
    # The fill saturates serve and the emulator for a while: PutItems right after it took
    # 1.1-1.2x as long also when the fill brought no new name (one name 1,000 times,
    # 2026-12-07), so the after side is timed once they have settled.
    parser.add_argument("--settle", type=float, default=5.0, help="seconds between the fill and the after side")
    args = parser.parse_args()
    with movies_world([]) as world:
        if args.loaded:
            asyncio.run(record_loaded(args.loaded))
        endpoint = world.serve(1)
        timed_puts(endpoint, 1, 20, None)  # the worker's first requests (connections, caches), no new name
        marking = timed_puts(endpoint, 0, 1, "marking")  # the worker's first new name: it marks the record
        timed_puts(endpoint, 21, 20, "warm")
        timed_puts(endpoint, 21, 1, "control")  # the control's name, held from now on
        first = timed_pairs(endpoint, 100, args.first, "first")  # each timed PutItem makes an item of its own
        began = time.perf_counter()
        fill(endpoint, args.names, args.threads)
        rows, names = record_rows()
        print(f"{args.names:,} PutItems with new names in {time.perf_counter() - began:.1f} s: the record holds "
              f"{names:,} names in {rows} rows", flush=True)
        time.sleep(args.settle)
        after = timed_pairs(endpoint, 100 + args.first, args.first, "after")
    print(line(f"first new name (marks the record; {args.loaded:,} loaded names)", marking))
    for side, pairs in (("first", first), (f"after {args.names:,}", after)):
        print(line(f"{side}: {args.first} new names", [new for new, _ in pairs]))
        print(line(f"{side}: {args.first} controls", [old for _, old in pairs]))
    ratio = statistics.mean(n for n, _ in after) / statistics.mean(n for n, _ in first)
    control = statistics.mean(c for _, c in after) / statistics.mean(c for _, c in first)
    p50 = statistics.median(n for n, _ in after) / statistics.median(n for n, _ in first)
    print(f"after / first (mean): {ratio:.2f} (asked: at most 1.5); p50 {p50:.2f}; the controls' {control:.2f}; "
          f"new names relative to the controls: {ratio / control:.2f}")


if __name__ == "__main__":
    main()
