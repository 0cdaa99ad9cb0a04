"""`advise --sample 10000` on a 100,000-item export vs a 1,000,000-item one, one run.

Reading stops at the sample (the first items of each data file in turn), so the time to
advise must not grow with the export: the figure of merit is the 1M time divided by the
100k time (1.0 = independent of the export's size; 10 would be reading it all). Run:

    uv run python benchmarks/advise_sample.py [--repeat 3] [--small 100000] [--large 1000000]

Both exports are written in the run as real DynamoDB exports (`exports/writer.py`,
10,000 items per data file, so 10 and 100 files; ~250-byte items: a user id, a sequence
number, five attributes), then `advise.run.advise` (manifests, sample, type inference,
every check, the codec on each sampled item) is timed on each, interleaved, best of N.
One more run of each under `tracemalloc` (untimed) gives the peak of what Python
allocated: it too must not grow with the export.

A second ratio weighs the checks against the reading they rest on: the whole `advise` on
the large export over `take_sample` alone (manifest and sample, no check) on the same
export, both best of N in the same run. Items carry a person-name attribute (`last_name`,
in a cell) and a string sort position, so the privacy, number-order, column and family
checks all do their work on every sampled item.
"""

from __future__ import annotations

import argparse
import tempfile
import time
import tracemalloc
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import yaml

from ddb2bigtable.advise.run import advise
from ddb2bigtable.advise.sample import take_sample
from ddb2bigtable.exports.manifests import open_export
from ddb2bigtable.exports.writer import item_from_plain, write_export
from ddb2bigtable.spec.reading import read_spec

ARN = "arn:aws:dynamodb:us-east-1:123456789012:table/Events"
SPEC = {"version": 1, "instance": {"id": "bench-advise"}, "tables": [{"id": "events", "source": {
    "table": "Events", "region": "us-east-1", "reads": 100, "writes": 100,
    "key": {"partition": {"name": "user", "type": "S"}, "sort": {"name": "seq", "type": "N"}}}}]}


def items(n: int) -> Iterator[dict]:
    for i in range(n):
        yield item_from_plain({"user": f"user-{i * 7919 % 50_000:05d}", "seq": i, "kind": "click",
                               "page": f"/catalog/item/{i % 977}", "agent": "Mozilla/5.0 (X11; Linux x86_64)",
                               "ms": i % 3000, "country": ("DE", "US", "JP", "BR")[i % 4],
                               "last_name": ("Smith", "García", "Tanaka", "Okafor")[i % 4]})


def time_advise(spec: Path, export: Path) -> tuple[float, int]:
    start = time.perf_counter()
    report = advise([read_spec(spec)], export=str(export), sample="10000")
    return time.perf_counter() - start, report.sampled[0].items


def time_sample(export: Path) -> float:
    start = time.perf_counter()
    take_sample(open_export(str(export)), 10_000)
    return time.perf_counter() - start


def peak_mib(spec: Path, export: Path) -> float:
    tracemalloc.start()
    advise([read_spec(spec)], export=str(export), sample="10000")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--small", type=int, default=100_000)
    parser.add_argument("--large", type=int, default=1_000_000)
    args = parser.parse_args()
    sizes = (args.small, args.large)
    with tempfile.TemporaryDirectory() as tmp:
        spec = Path(tmp) / "events.yaml"
        spec.write_text(yaml.safe_dump(SPEC))
        exports = {}
        for n in sizes:
            start = time.perf_counter()
            exports[n] = write_export(Path(tmp) / str(n), ARN, items(n), export_time=datetime(2026, 11, 1, tzinfo=UTC),
                                      items_per_file=10_000)
            print(f"built {n:>9,}-item export in {time.perf_counter() - start:6.1f} s")
        time_advise(spec, exports[sizes[0]])  # warm imports before measuring
        best = {n: float("inf") for n in sizes}
        reading = float("inf")
        sampled = {}
        for _ in range(args.repeat):
            for n in sizes:
                seconds, sampled[n] = time_advise(spec, exports[n])
                best[n] = min(best[n], seconds)
            reading = min(reading, time_sample(exports[sizes[1]]))
        peaks = {n: peak_mib(spec, exports[n]) for n in sizes}
    for n in sizes:
        print(f"advise --sample 10000, {n:>9,} items: {best[n]:6.2f} s ({sampled[n]:,} items sampled, "
              f"peak {peaks[n]:.1f} MiB allocated)")
    print(f"time, {sizes[1]:,} vs {sizes[0]:,} items: {best[sizes[1]] / best[sizes[0]]:.2f} "
          f"(1.0 = independent of the export's size; {sizes[1] / sizes[0]:.0f} = reading it all)")
    print(f"advise vs reading the sample alone, {sizes[1]:,} items: {best[sizes[1]] / reading:.2f} "
          f"({best[sizes[1]]:.2f} s vs {reading:.2f} s: what every check adds on top of the read)")


if __name__ == "__main__":
    main()
