"""How `plan` scales with the number of tables: 10 vs 1,000 generated tables, one run.

Both sizes are measured in the same process, interleaved, best of N, so the machine's
noise hits both alike; the result is the ratio of time per table (1.0 = exactly linear,
below 1 = fixed costs amortised, above 1 = super-linear). Run:

    uv run python benchmarks/plan_scaling.py [--repeat 5]

It writes the specs to a temporary project and times load + validate + plan + JSON
rendering, i.e. what `ddb2bigtable plan --format json` does after start-up.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import yaml

from ddb2bigtable.plan.planner import plan_files
from ddb2bigtable.render.json_format import to_json

REGIONS = ["us-east-1", "us-west-2", "eu-west-1"]


def table(i: int) -> dict:
    source: dict = {
        "table": f"Table{i}", "region": REGIONS[i % 3],
        "key": {"partition": {"name": "pk", "type": "S"}, "sort": {"name": "sk", "type": "N"}},
        "item_size_kb": 1 + i % 7, "storage_gb": 10 + i % 500,
    }
    if i % 4 == 0:
        source.update(billing="on_demand", peak={"reads_per_second": 500 + i, "writes_per_second": 100 + i},
                      average={"reads_per_second": 100 + i, "writes_per_second": 20 + i})
    else:
        source.update(billing="provisioned", reads=1000 + i, writes=200 + i)
    if i % 5 == 0:
        source["replicas"] = [{"region": r} for r in REGIONS if r != source["region"]]
    if i % 3 == 0:
        source["ttl"] = {"attribute": "expiresAt"}
    if i % 6 == 0:
        source["gsis"] = [{"name": "by-owner", "key": {"partition": {"name": "owner", "type": "S"}},
                           "reads": 100, "writes": 100}]
    return {"id": f"table{i}", "source": source}


def write_project(root: Path, tables: int) -> None:
    (root / "specs").mkdir(parents=True)
    (root / "stacks").mkdir()
    spec = {"version": 1, "instance": {"id": "bench-instance"}, "tables": [table(i) for i in range(tables)]}
    (root / "specs" / "bench.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    stage = {"config": {"ddb2bigtable:stage": {"specs": ["specs/bench.yaml"], "regions": "all",
                                               "max_nodes_per_cluster": 1000}}}
    (root / "stacks" / "Pulumi.bench.yaml").write_text(yaml.safe_dump(stage))


def time_plan(root: Path) -> float:
    start = time.perf_counter()
    json.dumps(to_json(plan_files(root, "bench")))
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    sizes = (10, 1000)
    with tempfile.TemporaryDirectory() as tmp:
        roots = {}
        for n in sizes:
            roots[n] = Path(tmp) / str(n)
            write_project(roots[n], n)
        best = {n: float("inf") for n in sizes}
        time_plan(roots[10])  # warm imports and caches before measuring
        for _ in range(args.repeat):
            for n in sizes:
                best[n] = min(best[n], time_plan(roots[n]))
    per_table = {n: best[n] / n for n in sizes}
    ratio = per_table[1000] / per_table[10]
    print(f"plan 10 tables:    {best[10] * 1000:8.1f} ms  ({per_table[10] * 1000:.2f} ms/table)")
    print(f"plan 1,000 tables: {best[1000] * 1000:8.1f} ms  ({per_table[1000] * 1000:.2f} ms/table)")
    print(f"time per table, 1,000 vs 10: {ratio:.2f} (1.0 = linear, above = super-linear)")


if __name__ == "__main__":
    main()
