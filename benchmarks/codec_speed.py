"""Codec speed per item: this tree's encode and decode against a baseline commit's, one run.

Per item, on AWS's Movies export (4,609 items, nested `info` maps) and on N generated
~1 KB flat items (`load_throughput.generated_items`, written as a real DynamoDB export):

- encode: one export line to its row mutation, the loader's per-item work: parsed
  (`json_lines.json_line`), then checked and encoded in one walk by `Codec.encode_parsed`
  (as `buckets.route` does with `read_records(check=False)`), the checked path
  (`json_lines.json_full`, then `Codec.encode(checked=True)`) where it declines and on a
  baseline that has no `encode_parsed`;
- decode: one row's cells back to the item (`Codec.decode`), what `verify`, `serve` and
  `replicate` pay per row read.

The baseline is the package as it was at `--baseline` (a commit: the code before the
speed work, issue #33), extracted with `git archive` into a temporary folder and imported
under another name, so both run in this process on the same lines and cells. Both sides'
results are compared first (same rows, same items), then timed in interleaved rounds (the
order flips every round, so the shared machine's noise hits both); the report gives the
median rate of each and the median of the per-round ratios. Run:

    uv run python benchmarks/codec_speed.py [--baseline fd4fa23] [--rounds 15] [--items 20000]
"""

from __future__ import annotations

import argparse
import gc
import gzip
import importlib.util
import io
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from load_throughput import GENERATED_SPEC, generate_export  # noqa: E402

BASELINE = "fd4fa23"  # main before issue #33's speed work


def baseline_package(commit: str, folder: Path) -> str:
    """The package at `commit`, importable as `ddb2bigtable_at_<commit>` (its imports are
    relative, so they stay inside the copy)."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", commit, "ddb2bigtable"],
                             check=True, capture_output=True).stdout
    target = folder / commit
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(target, filter="data")
    name = f"ddb2bigtable_at_{commit}"
    spec = importlib.util.spec_from_file_location(name, target / "ddb2bigtable" / "__init__.py",
                                                  submodule_search_locations=[str(target / "ddb2bigtable")])
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return name


def submodule(package: str, name: str) -> ModuleType:
    return importlib.import_module(f"{package}.{name}")


class Side:
    """One version of the package: its reader, spec reader, type inference and codec."""

    def __init__(self, package: str, spec_path: Path, table_id: str, lines: list[bytes]):
        json_lines = submodule(package, "exports.json_lines")
        self.json_full, self.json_line = json_lines.json_full, json_lines.json_line
        table = next(t for t in submodule(package, "spec.reading").read_spec(spec_path).tables if t.id == table_id)
        items = [self.json_full(line)[0] for line in lines]
        types = submodule(package, "codec.type_inference").infer_types(items, table)
        self.codec = submodule(package, "codec.codec").Codec(table, types)
        self.parsed = getattr(self.codec, "encode_parsed", None)  # the loader's fused path, where there is one
        self.cell = submodule(package, "codec.mutations").Cell
        self.lines = lines

    def encode_all(self) -> list[Any]:
        return [self._encode(line) for line in self.lines]

    def encode_each(self) -> None:
        """What the loader does: each row encoded, then let go (kept, they would make the
        garbage collector's passes longer and longer, which no load sees)."""
        for line in self.lines:
            self._encode(line)

    def _encode(self, line: bytes) -> Any:
        if self.parsed is not None:  # as buckets.route does with read_records(check=False)
            row = self.parsed(self.json_line(line).get("Item"), write_time_micros=1_000, now_micros=1_000)
            if row is not None:
                return row
        return self.codec.encode(self.json_full(line)[0], write_time_micros=1_000, now_micros=1_000, checked=True)

    def rows(self) -> list[tuple[bytes, list[Any]]]:
        return [(row.key, [self.cell(m.family, m.qualifier, m.value, m.timestamp_micros) for m in row.mutations])
                for row in self.encode_all()]

    def decoder(self, rows: list[tuple[bytes, list[Any]]]) -> Callable[[], None]:
        decode = self.codec.decode

        def decode_each() -> None:
            for key, cells in rows:
                decode(key, cells)
        return decode_each


def export_lines(export: Path) -> list[bytes]:
    return [line for f in sorted(export.rglob("data/*.json.gz")) for line in gzip.open(f).read().splitlines()]


def _plain_rows(rows: list[tuple[bytes, list[Any]]]) -> list[Any]:
    return [(key, [(c.family, c.qualifier, c.value, c.timestamp_micros) for c in cells]) for key, cells in rows]


def timed(run: Callable[[], Any], n: int) -> float:
    gc.collect()  # the other side's garbage is not this side's cost
    start = time.process_time()  # CPU time: the rate per core, whatever else the machine runs
    run()
    return n / (time.process_time() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline", default=BASELINE)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--items", type=int, default=20_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        old = baseline_package(args.baseline, work)
        spec_path = work / "events.yaml"
        spec_path.write_text(GENERATED_SPEC)
        datasets = [("Movies", ROOT / "specs" / "movies.yaml", "movies", export_lines(ROOT / "exports" / "movies")),
                    (f"flat {args.items // 1000}k", spec_path, "events",
                     export_lines(Path(generate_export(work / "flat", args.items))))]
        cases: list[tuple[str, Callable[[], Any], Callable[[], Any], int]] = []
        for name, path, table_id, lines in datasets:
            new, base = Side("ddb2bigtable", path, table_id, lines), Side(old, path, table_id, lines)
            new_rows, base_rows = new.rows(), base.rows()
            assert _plain_rows(new_rows) == _plain_rows(base_rows), f"{name}: the rows differ"
            new_decode, base_decode = new.decoder(new_rows), base.decoder(base_rows)
            assert [new.codec.decode(k, c) for k, c in new_rows] == [base.codec.decode(k, c) for k, c in base_rows], \
                f"{name}: the decoded items differ"
            cases += [(f"{name} encode", new.encode_each, base.encode_each, len(lines)),
                      (f"{name} decode", new_decode, base_decode, len(lines))]
        rates: dict[str, tuple[list[float], list[float]]] = {case[0]: ([], []) for case in cases}
        for round_no in range(args.rounds):
            for label, new_run, base_run, n in cases:
                ours, theirs = rates[label]
                if round_no % 2:
                    theirs.append(timed(base_run, n))
                    ours.append(timed(new_run, n))
                else:
                    ours.append(timed(new_run, n))
                    theirs.append(timed(base_run, n))
    print(f"items per second, median of {args.rounds} interleaved rounds; baseline {args.baseline}")
    for label, (ours, theirs) in rates.items():
        ratio = statistics.median(a / b for a, b in zip(ours, theirs, strict=True))
        print(f"{label:22s} now {statistics.median(ours):9,.0f}  baseline {statistics.median(theirs):9,.0f}  "
              f"x{ratio:.2f}")


if __name__ == "__main__":
    main()
