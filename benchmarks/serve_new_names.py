"""PutItems each bringing an attribute name the table has never held, on serve over the
Bigtable emulator: the first names against names after the table's record of types
(`_ddb2bigtable_types`, bigtable/table_types.py) already holds 20,000 (issue 50, finding 6:
after 20,000 names a PutItem with one new name took 24-32 s or answered 500).

One run: serve on the emulator's Movies stage; `--first` PutItems with new names timed;
then the record filled with `--names` more names (written straight into the record by
`record_types`, as serve records them, without serve's PutItems around them); then
`--first` more PutItems with new names timed. Prints each side's
mean and p50 and the ratio `after / first` (asked: at most 1.5).

    .venv/bin/python benchmarks/serve_new_names.py [--names 20000] [--first 200]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from serve_throughput import client, movies_world

from ddb2bigtable.bigtable.table_types import read_types, record_types
from ddb2bigtable.codec.cell_values import MIXED

PROJECT, INSTANCE, TABLE = "test-project", "movies-sample", "movies"  # the Movies stage's table on the emulator


def timed_puts(endpoint: str, start: int, count: int, prefix: str) -> list[float]:
    """Seconds of each of `count` PutItems, the n-th bringing the new attribute `{prefix}{n}`."""
    c = client(endpoint)
    seconds = []
    for n in range(start, start + count):
        began = time.perf_counter()
        c.put_item(TableName="Movies", Item={"year": {"N": "1800"}, "title": {"S": f"names {n}"},
                                             f"{prefix}{n:06d}": {"S": "x"}})
        seconds.append(time.perf_counter() - began)
    return seconds


async def fill_record(names: int) -> int:
    """The record of Movies' types holding `names` more attribute names as serve records
    them; how many names it then holds."""
    from google.cloud.bigtable.data import BigtableDataClientAsync

    async with BigtableDataClientAsync(project=PROJECT) as bigtable:
        await record_types(bigtable, PROJECT, INSTANCE, TABLE, {f"filled{n:06d}": MIXED for n in range(names)})
        return len(await read_types(bigtable, INSTANCE, TABLE))


def line(name: str, seconds: list[float]) -> str:
    return f"{name}: mean {statistics.mean(seconds) * 1000:.1f} ms, p50 {statistics.median(seconds) * 1000:.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--names", type=int, default=20000)
    parser.add_argument("--first", type=int, default=200)
    args = parser.parse_args()
    with movies_world([]) as world:
        endpoint = world.serve(1)
        timed_puts(endpoint, 0, 20, "warm")  # the worker's first requests: connections, caches
        first = timed_puts(endpoint, 0, args.first, "first")
        began = time.perf_counter()
        held = asyncio.run(fill_record(args.names))
        print(f"record filled with {args.names:,} names in {time.perf_counter() - began:.1f} s: it holds {held:,}",
              flush=True)
        after = timed_puts(endpoint, 0, args.first, "after")
    print(line(f"first {args.first} new names", first))
    print(line(f"{args.first} new names after {args.names:,}", after))
    print(f"after / first (mean): {statistics.mean(after) / statistics.mean(first):.2f} (asked: at most 1.5)")


if __name__ == "__main__":
    main()
