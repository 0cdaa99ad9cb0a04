"""The terminal plan at 80 and 120 columns: whole ids, nothing cut, the reviewed snapshot,
and a why per cluster whose numbers are the JSON's."""

from __future__ import annotations

import io
import math
import os
import re
from pathlib import Path

import pytest
from rich.console import Console

from ddb2bigtable.plan.planner import plan_files
from ddb2bigtable.render.json_format import to_json
from ddb2bigtable.render.terminal import print_plan

from ..conftest import ROOT, shipped_project

SNAPSHOTS = ROOT / "tests" / "snapshots"


def _render(root: Path, stage: str, width: int) -> str:
    """As `plan` prints it when run from the project folder (spec paths relative)."""
    out = io.StringIO()
    cwd = os.getcwd()
    os.chdir(root)
    try:
        plan = plan_files(Path("."), stage)
    finally:
        os.chdir(cwd)
    print_plan(plan, Console(file=out, width=width, color_system=None))
    return "\n".join(line.rstrip() for line in out.getvalue().splitlines()) + "\n"


@pytest.mark.parametrize("width", [80, 120])
def test_the_prod_plan_fits_the_terminal_and_matches_the_reviewed_snapshot(width, tmp_path):
    root = shipped_project(tmp_path)
    text = _render(root, "prod", width)
    assert max(len(line) for line in text.splitlines()) <= width
    assert "…" not in text  # nothing cut short
    plan = plan_files(root, "prod")
    for instance in plan.instances:
        for cluster in instance.clusters:  # every id whole on one line, in the table and its note
            assert re.search(rf"(^|\s){re.escape(cluster.id)}(\s|$)", text, re.M), cluster.id
    snapshot = SNAPSHOTS / f"plan-prod-{width}.txt"
    if os.environ.get("UPDATE_SNAPSHOTS"):
        snapshot.write_text(text)
    assert text == snapshot.read_text()


@pytest.mark.parametrize("stage", ["dev", "staging", "prod"])
def test_each_cluster_s_why_is_the_json_s_arithmetic(stage):
    for instance in to_json(plan_files(ROOT, stage))["instances"]:
        for c in instance["clusters"]:
            levels, why, target = c["load_by_level"], c["why"], c["cpu_target"]
            assert levels["sized"] == pytest.approx(sum(s["nodes"] for s in c["load"]), abs=1e-5)
            assert f"total {levels['sized']:.2f} nodes at 100 % CPU" in why
            for share in c["load"]:
                assert f"{share['table']} " in why and f"= {share['nodes']:.2f}" in why
            auto = c["autoscaling"]
            if auto is None:
                assert f"Buy {c['nodes']} node" in why
                assert c["nodes"] >= max(1, math.ceil(levels["sized"] * 100 / target - 1e-9))
                continue
            expected = max(1, math.ceil(levels["expected"] * 100 / target - 1e-9))
            assert f"Buy autoscaling {auto['min_nodes']}-{auto['max_nodes']}; expected {c['nodes']} at" in why
            assert f"{levels['expected']:.2f} ÷ {target} % = {levels['expected'] * 100 / target:.2f} → {expected}" in why
            assert c["nodes"] == min(auto["max_nodes"], max(auto["min_nodes"], expected))
            for level in ("min", "max"):
                assert f"{levels[level]:.2f} ÷ {target} % = {levels[level] * 100 / target:.2f}" in auto["why"]
