"""Day-2 monitoring under Pulumi's mocks: the plan's thresholds become alert policies,
one dashboard per instance, and a capacity change moves the thresholds."""

from __future__ import annotations

import json
from pathlib import Path

from ddb2bigtable.plan import metrics
from ddb2bigtable.plan.planner import plan_files

from ..conftest import ROOT
from ..pulumi_harness import run_program, stack_config
from .test_pulumi_program import plan_of

POLICY = "gcp:monitoring/alertPolicy:AlertPolicy"
DASHBOARD = "gcp:monitoring/dashboard:Dashboard"
SNAPSHOTS = Path(__file__).parents[1] / "snapshots"


def _policies(run) -> dict[str, dict]:
    return {r.inputs["displayName"].removeprefix("Bigtable "): r.inputs for r in run.of_type(POLICY)}


def _threshold(policy: dict) -> float:
    (condition,) = policy["conditions"]
    return condition["conditionThreshold"]["thresholdValue"]


def test_prod_alerts_follow_each_cluster_s_plan():
    run, plan = run_program("prod"), plan_of("prod")
    policies = _policies(run)
    for instance in plan.instances:
        for c in instance.clusters:
            cpu = policies[f"{c.id}-cpu"]
            assert _threshold(cpu) == c.cpu_target / 100  # one CPU policy per cluster at its target
            (condition,) = cpu["conditions"]
            assert f'resource.labels.cluster="{c.id}"' in condition["conditionThreshold"]["filter"]
            assert metrics.CPU in condition["conditionThreshold"]["filter"]
            assert _threshold(policies[f"{c.id}-storage"]) == 0.5  # SSD: 2,560 of 5,120 GiB per node
            assert (f"{c.id}-at-max" in policies) == (c.autoscaling is not None)
            if c.autoscaling:
                assert _threshold(policies[f"{c.id}-at-max"]) == c.autoscaling.max_nodes - 0.5
        assert (f"{instance.id}-replication" in policies) == (len(instance.clusters) > 1)
        errors = policies[f"{instance.id}-errors"]["conditions"][0]["conditionThreshold"]
        assert metrics.SERVER_REQUESTS in errors["denominatorFilter"] and errors["thresholdValue"] == 0.01
    assert len(run.of_type(POLICY)) == sum(len(i.operations.alerts) for i in plan.instances)
    dashboards = [json.loads(r.inputs["dashboardJson"]) for r in run.of_type(DASHBOARD)]
    assert len(dashboards) == len(plan.instances)
    shop = next(d for d in dashboards if "shop-global" in d["displayName"])
    assert len(shop["mosaicLayout"]["tiles"]) == 4 * 3  # a row of four charts per cluster
    snapshot = SNAPSHOTS / "dashboard-shop-global-prod.json"
    text = json.dumps(shop, indent=2, sort_keys=True) + "\n"
    if __import__("os").environ.get("UPDATE_SNAPSHOTS"):
        snapshot.write_text(text)
    assert text == snapshot.read_text()


def test_a_capacity_change_moves_the_thresholds():
    config = stack_config("prod")
    bigger = {**config, "ddb2bigtable:stage": {**config["ddb2bigtable:stage"], "capacity_scale": 2.0}}
    before, after = _policies(run_program("prod")), _policies(run_program("prod", bigger))
    moved = [name for name in before if name.endswith("-at-max") and _threshold(before[name]) != _threshold(after[name])]
    assert moved, "autoscaling maxima grew with the capacity, their alerts did not"


def test_pr_and_local_stages_get_no_monitoring_and_channels_reach_the_policies():
    assert not run_program("pr").of_type(POLICY)
    assert all(not i.operations.enabled for i in plan_of("pr").instances)
    assert all(not i.operations.enabled for i in plan_files(ROOT, "local").instances)  # no Pulumi there
    config = stack_config("prod")
    channel = "projects/my-project-prod/notificationChannels/123"
    with_channel = {**config, "ddb2bigtable:stage": {**config["ddb2bigtable:stage"], "alerts": {"channels": [channel]}}}
    policies = run_program("prod", with_channel).of_type(POLICY)
    assert policies and all(p.inputs["notificationChannels"] == [channel] for p in policies)
