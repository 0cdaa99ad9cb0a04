"""`diff`: plan every stage at the base ref and at the head (a ref or the working tree).

Problems in a side's specs are reported with that side's names (`origin/main:specs/x.yaml`
for a ref), so a reviewer knows which commit is broken.
"""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path

from ..plan.model import StagePlan
from ..plan.planner import plan_files
from ..plan.price_lock import lock_for
from ..spec.errors import InputError
from ..spec.stage import stage_names
from .diff import StageDiff, diff_stage
from .git_tree import materialize
from .price_changes import with_price_changes


def _plans(root: Path, stages: list[str], label: str | None, prices: Path | None) -> dict[str, StagePlan]:
    plans = {}
    known = set(stage_names(root))
    problems = []
    try:  # this side's own prices.lock.json, unless --prices names one lock for both
        lock = lock_for(root, prices)
    except InputError as error:
        problems, lock = error.problems, None
    for stage in stages if not problems else []:
        if stage not in known:
            continue
        try:
            plans[stage] = plan_files(root, stage, lock=lock)
        except InputError as error:
            problems += error.problems
    if problems:
        if label is not None:
            problems = [replace(p, file=f"{label}:{Path(p.file).relative_to(root)}")
                        if Path(p.file).is_relative_to(root) else p for p in problems]
        raise InputError(list(dict.fromkeys(problems)))
    return plans


def run_diff(root: Path, base: str, head: str | None = None, stages: list[str] | None = None,
             prices: Path | None = None) -> list[StageDiff]:
    """Every stage's diff; each side is priced with its own lock, or both with `prices`."""
    root = root.resolve()
    prices = prices.resolve() if prices is not None else None
    with tempfile.TemporaryDirectory(prefix="ddb2bigtable-diff-") as tmp:
        base_root = materialize(root, base, Path(tmp) / "base")
        head_root = materialize(root, head, Path(tmp) / "head") if head else root
        names = stages or sorted(set(stage_names(base_root)) | set(stage_names(head_root)))
        missing = [s for s in names if s not in stage_names(base_root) and s not in stage_names(head_root)]
        if missing:
            from ..spec.stage import load_stage  # reports the stages that do exist

            load_stage(missing[0], head_root)
        after = _plans(head_root, names, head, prices)
        before = _plans(base_root, names, base, prices)
        return [with_price_changes(diff_stage(s, before.get(s), after.get(s)), before.get(s), after.get(s))
                for s in names]
