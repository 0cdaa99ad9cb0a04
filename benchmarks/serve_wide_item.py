"""A wide item: `serve` against DynamoDB Local, the sides taking turns, one run (issue 43).

A PutItem of `--attributes` attributes (20,000 by default: "a0".."a19999", short strings)
and a GetItem of it, `--repeat` rounds; in each round every side makes its PutItem and
then its GetItem, so a load that changes during the run (this machine is shared) weighs on
each side alike (serve_hot_items.py measures the wide item side after side). Each figure is
the median of a side's rounds but the first (the first PutItem of a new attribute also
records its type); serve / DynamoDB Local is the issue's figure (goal: the PutItem within
3x). Sides:

- DynamoDB Local;
- `serve --workers 1` from this checkout, and from each `--before DIR` given (another
  checkout, e.g. `git worktree add DIR COMMIT`: its code, this venv, the same run);
- emulator alone: the CheckAndMutateRow serve sends for the PutItem (no lock, then the
  item's families deleted and its cells set in column order), made once and sent by the
  raw async data client, and the row read back and decoded: what the PutItem and the
  GetItem cost at the Bigtable emulator itself, whatever serve does around them;
- emulator alone, columns kept: the same cells without the delete, to a row that already
  has them (not a write serve may send: an attribute the new image lacks would survive);
  the emulator sorts a row's column names again for every column a mutation adds, so this
  is the part of the emulator-alone side's time that is not adding 20,000 columns.

One run starts its own Bigtable emulator and DynamoDB Local (127.0.0.1, stopped by PID)
and serve on a stage with the Movies spec. Run:

    uv run python benchmarks/serve_wide_item.py [--attributes 20000] [--repeat 6] [--before DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "0")  # before gRPC's import: the loader forks (load/encoder.py)

from benchmarks.serve_hot_items import WIDE, client  # noqa: E402
from benchmarks.serve_throughput import STAGE, movies_world  # noqa: E402
from ddb2bigtable.cli.serve_cmd import _tables  # noqa: E402
from ddb2bigtable.serve.catalog import catalog  # noqa: E402
from ddb2bigtable.serve.store import client_mutations, live_cells, now_micros  # noqa: E402
from ddb2bigtable.serve.transactions.cells import holds_any_lock  # noqa: E402
from ddb2bigtable.serve.wire import item_to_codec  # noqa: E402
from ddb2bigtable.spec.families import family_names  # noqa: E402

Calls = tuple[Callable[[], Any], Callable[[], int]]  # a side's PutItem, and its GetItem (the attributes read)
ALONE, KEPT = "emulator alone", "emulator alone, columns kept"


def through(endpoint: str, item: dict[str, Any]) -> Calls:
    c = client(endpoint)
    return (lambda: c.put_item(TableName="Movies", Item=item),
            lambda: len(c.get_item(TableName="Movies", Key=WIDE)["Item"]))


class Alone:
    """The wide item's write as serve sends it, straight to the emulator (see the module doc)."""

    def __init__(self, root: Path, item: dict[str, Any]):
        from google.cloud.bigtable.data import BigtableDataClientAsync

        project, types, _ = _tables(root, STAGE)
        self.served = catalog(root, STAGE, types, project).get("Movies")
        self.loop = asyncio.new_event_loop()

        async def opened() -> tuple[Any, Any]:  # the client and its table belong to the loop they are made in
            made = BigtableDataClientAsync(project=project)
            return made, made.get_table(self.served.instance_id, self.served.spec.id)

        self.client, self.table = self.loop.run_until_complete(opened())
        self.item = item

    def calls(self, title: str, *, kept: bool = False) -> Calls:
        """The write and the read of the item as row `title` (its own row), `kept`: without the delete."""
        run, codec = self.loop.run_until_complete, self.served.codec
        now = now_micros()
        written = codec.encode(item_to_codec({**self.item, "title": {"S": title}}), write_time_micros=now,
                               now_micros=now, replace=not kept)
        key, mutations = written.key, client_mutations(written, tuple(family_names(self.served.spec)))

        def get() -> int:
            (item,) = codec.decode(key, live_cells(run(self.table.read_row(key)), codec.ttl_families, now_micros()))
            return len(item)
        return lambda: run(self.table.check_and_mutate_row(key, holds_any_lock(), false_case_mutations=mutations)), get

    def close(self) -> None:
        self.loop.run_until_complete(self.client.close())
        self.loop.close()


def rounds(sides: dict[str, Calls], repeat: int, attributes: int) -> dict[str, tuple[float, float]]:
    """Each side's median seconds of the PutItem and of the GetItem over the rounds but the first."""
    took: dict[str, tuple[list[float], list[float]]] = {side: ([], []) for side in sides}
    for _ in range(repeat):
        for side, (put, get) in sides.items():
            began = time.perf_counter()
            put()
            took[side][0].append(time.perf_counter() - began)
            began = time.perf_counter()
            read = get()
            took[side][1].append(time.perf_counter() - began)
            assert read == attributes + 2, (side, read)
    return {side: (statistics.median(puts[1:]), statistics.median(gets[1:])) for side, (puts, gets) in took.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--attributes", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=6, help="rounds; the first is left out of the medians")
    parser.add_argument("--before", action="append", default=[], type=Path,
                        help="another checkout whose serve runs beside this one's (repeatable)")
    args = parser.parse_args()
    item = {**WIDE, **{f"a{n}": {"S": f"v{n}"} for n in range(args.attributes)}}
    with movies_world([]) as world:
        sides = {"DynamoDB Local": through(world.local.endpoint, item)}
        for tree in (*args.before, ROOT):
            sides["serve" if tree == ROOT else f"serve of {tree}"] = through(world.serve(1, tree.resolve()), item)
        alone = Alone(world.root, item)
        try:
            sides[ALONE] = alone.calls("wide, alone")
            sides[KEPT] = alone.calls("wide, alone, columns kept", kept=True)
            load = " ".join(f"{x:.1f}" for x in os.getloadavg())
            times = rounds(sides, args.repeat, args.attributes)
            print(f"{args.attributes:,} attributes, {args.repeat} rounds (the first left out), {os.cpu_count()} cores, "
                  f"load average {load} at the start, {' '.join(f'{x:.1f}' for x in os.getloadavg())} at the end")
            base = times["DynamoDB Local"][0]
            for side, (put, get) in times.items():
                ratio = "" if side == "DynamoDB Local" else f"  PutItem / DynamoDB Local {put / base:4.1f}x"
                print(f"{side:40} PutItem {put:6.3f} s  GetItem {get:6.3f} s{ratio}", flush=True)
        finally:
            alone.close()


if __name__ == "__main__":
    main()
