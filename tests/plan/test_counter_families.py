"""Counters as aggregate families (#35): the plan makes a family holding `counter` attributes an
int64 Sum family, says what that means for the application, and `diff` flags a type change.

The video design (specs/video-single-table.yaml) keeps its Likes/Views counters in `Stats`.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from ddb2bigtable.plan.model import StagePlan
from ddb2bigtable.plan.planner import plan_files
from ddb2bigtable.render.json_format import to_json
from ddb2bigtable.review.diff import diff_stage

from ..conftest import ROOT, write_project


@pytest.fixture(scope="module")
def prod() -> StagePlan:
    return plan_files(ROOT, "prod")


def _videos(plan: StagePlan):
    (instance,) = [i for i in plan.instances if i.id.startswith("video")]
    (table,) = instance.tables
    return instance, table


def test_the_counter_family_is_an_int64_sum_aggregate_and_says_why(prod):
    _, videos = _videos(prod)
    kinds = {f.name: f.aggregate for f in videos.families}
    assert kinds == {"cf": None, "Video": None, "Stats": "int64_sum", "UserComments": None, "_ddb2bigtable_txn": None}
    (stats,) = [f for f in videos.families if f.name == "Stats"]
    assert "AddToCell through any app profile" in stats.why and "no txn- profile" in stats.why
    assert "counters (Count)" in stats.why


def test_plan_json_version_1_gains_the_family_aggregate_field(prod):
    document = to_json(prod)
    assert document["version"] == 1
    (video,) = [i for i in document["instances"] if i["id"].startswith("video")]
    families = {f["name"]: f for f in video["tables"][0]["families"]}
    assert families["Stats"]["aggregate"] == "int64_sum"
    assert families["Video"]["aggregate"] is None
    assert set(families["Stats"]) == {"name", "gc", "aggregate", "why"}


def _with_stats(plan: StagePlan, aggregate) -> StagePlan:
    """The same plan with Stats of another type (what an older spec planned)."""
    instance, table = _videos(plan)
    families = tuple(replace(f, aggregate=aggregate) if f.name == "Stats" else f for f in table.families)
    changed = replace(instance, tables=(replace(table, families=families),))
    return replace(plan, instances=tuple(changed if i is instance else i for i in plan.instances))


@pytest.mark.parametrize(("before", "after"), [(None, "int64_sum"), ("int64_sum", None)])
def test_diff_flags_a_family_type_change_as_destructive(prod, before, after):
    old, new = _with_stats(prod, before), _with_stats(prod, after)
    diff = diff_stage("prod", old, new)
    (change,) = [c for c in diff.changes if c.what == "family type"]
    assert change.scope.endswith("/table videos/family Stats")
    assert (change.before, change.after) == (before or "plain", after or "plain")
    assert change.flag == "DESTRUCTIVE" and "deletes every cell" in change.why
    assert diff.destructive >= 1


def test_an_unchanged_plan_has_no_family_type_change(prod):
    assert not [c for c in diff_stage("prod", prod, prod).changes if c.what == "family type"]


def test_a_counter_rule_with_write_time_still_plans_with_a_counter_time_warning(tmp_path):
    """The video example had `timestamp: write_time` on its counter rules before counter
    families: such a spec (a diff's base, say) still plans; the time is ignored, and said so."""
    text = (ROOT / "specs" / "video-single-table.yaml").read_text().replace(
        "          value: Count           # a counter: one cell at time 0 that every AddToCell adds to\n",
        "          value: Count\n          timestamp: write_time\n")
    root = write_project(tmp_path, {"videos": text})
    plan = plan_files(root, "test")
    (warning,) = [w for w in plan.warnings if w.code == "counter-time"]
    assert warning.table == "videos" and warning.message.startswith(
        "rules[1] stores the counter Count with timestamp write_time, which is ignored")
    _, videos = _videos(plan)
    assert {f.name: f.aggregate for f in videos.families}["Stats"] == "int64_sum"
