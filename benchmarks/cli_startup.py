"""CPU a CLI process spends before and on a light command, this tree against a baseline
commit in the same run (issue #53: every process imported every command's engine).

    uv run python benchmarks/cli_startup.py [--base COMMIT] [--runs N]

Each command runs N times a side, the sides taking turns; the figure is the CPU time
(user + system) of the child process, lowest and median, and the ratio of this tree's
lowest to the baseline's. The baseline's ddb2bigtable/ is extracted with `git archive`
and put first on the import path (this tree's for the other side), so both sides use this
environment's libraries and run from the project root."""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COMMANDS = [["--help"], ["verify", "--help"], ["validate", "specs/movies.yaml"], ["plan", "--stage", "dev"]]


def _cpu(package_root: Path, args: list[str]) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = (f"import sys; sys.path.insert(0, {str(package_root)!r}); "  # that side's package, whatever the cwd
             "from ddb2bigtable.cli.app import main; main(prog_name='ddb2bigtable')")
    subprocess.run([sys.executable, "-c", start, *args], cwd=ROOT, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=False, timeout=300)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default="40ac610", help="the baseline commit (before the lazy imports)")
    parser.add_argument("--runs", type=int, default=7)
    options = parser.parse_args()
    archive = subprocess.run(["git", "archive", options.base, "ddb2bigtable"], cwd=ROOT, capture_output=True,
                             check=True).stdout
    with tempfile.TemporaryDirectory() as base:
        with tarfile.open(fileobj=BytesIO(archive)) as tar:
            tar.extractall(base, filter="data")
        subprocess.run([sys.executable, "-m", "compileall", "-q", base], check=True)  # as this tree's are: compiled
        print(f"load average {os.getloadavg()[0]:.1f}, {os.cpu_count()} cores; {options.runs} runs a side")
        for args in COMMANDS:
            times: dict[str, list[float]] = {"base": [], "tree": []}
            for _ in range(options.runs):
                times["base"].append(_cpu(Path(base), args))
                times["tree"].append(_cpu(ROOT, args))
            low = {side: min(t) for side, t in times.items()}
            print(f"ddb2bigtable {' '.join(args)}: baseline {low['base']:.3f} s (median "
                  f"{statistics.median(times['base']):.3f}), this tree {low['tree']:.3f} s (median "
                  f"{statistics.median(times['tree']):.3f}): {low['tree'] / low['base']:.2f}x")
        print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
