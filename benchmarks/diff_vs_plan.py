"""`diff` against `plan` over the example specs, every stage, in one run (best of N each).

`diff` plans every stage twice (base and head) and reads the base from git objects, so
about 2x `plan` is expected; the target is under 3x. Run:

    uv run python benchmarks/diff_vs_plan.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from ddb2bigtable.plan.planner import plan_files
from ddb2bigtable.review.diff_run import run_diff
from ddb2bigtable.spec.stage import stage_names

ROOT = Path(__file__).resolve().parent.parent


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), "-c", "user.email=b@example.com", "-c", "user.name=b", *args],
                   check=True, capture_output=True)


def make_repo(tmp: Path) -> Path:
    """The example specs and stacks in a repository, then a capacity change in the working tree."""
    shutil.copytree(ROOT / "specs", tmp / "specs")
    shutil.copytree(ROOT / "stacks", tmp / "stacks")
    git(tmp, "init", "-q")
    git(tmp, "add", ".")
    git(tmp, "commit", "-q", "-m", "base")
    spec = tmp / "specs" / "shop-global.yaml"
    spec.write_text(spec.read_text().replace("      reads: 12000 ", "      reads: 18000 ", 1))
    return tmp


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        repo = make_repo(Path(tmp))
        stages = stage_names(repo)

        def plan_all() -> None:
            for stage in stages:
                plan_files(repo, stage)

        def diff_all() -> None:
            run_diff(repo, "HEAD")

        plan_all(), diff_all()  # warm imports and caches
        plan_time, diff_time = best(plan_all, args.repeat), best(diff_all, args.repeat)
    print(f"plan, {len(stages)} stages: {plan_time * 1000:7.1f} ms")
    print(f"diff, {len(stages)} stages: {diff_time * 1000:7.1f} ms")
    print(f"diff / plan: {diff_time / plan_time:.2f} (target < 3)")


if __name__ == "__main__":
    main()
