"""The real Pulumi program under Pulumi's mocks, for every stack in stacks/.

What is asserted is what `pulumi up --stack <stage>` would create: the plan's clusters,
tables, GC policies, app profiles and protections, nothing more, nothing less.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ddb2bigtable.program import plan_for_stack
from ddb2bigtable.spec.ids import id_problem

from ..conftest import ROOT, SHIPPED_STAGES
from ..pulumi_harness import Run, run_program, stack_config

INSTANCE = "gcp:bigtable/instance:Instance"
TABLE = "gcp:bigtable/table:Table"
GC = "gcp:bigtable/gCPolicy:GCPolicy"
PROFILE = "gcp:bigtable/appProfile:AppProfile"
VIEW = "gcp:bigtable/materializedView:MaterializedView"
IAM = "gcp:bigtable/instanceIamMember:InstanceIamMember"
CLOUD_STACKS = [s for s in SHIPPED_STAGES if not stack_config(s)["ddb2bigtable:stage"].get("emulator")]
SNAPSHOTS = Path(__file__).parents[1] / "snapshots"


def seconds(duration: str) -> int:
    return int(duration[:-1]) * {"s": 1, "m": 60, "h": 3600}[duration[-1]]


def gc_limits(rules_json: str) -> tuple[int | None, int | None, str]:
    """(max_age seconds, max_versions, mode) from the provider's gc_rules JSON."""
    document = json.loads(rules_json)
    age = next((seconds(r["max_age"]) for r in document["rules"] if "max_age" in r), None)
    versions = next((r["max_version"] for r in document["rules"] if "max_version" in r), None)
    return age, versions, document.get("mode", "union")


def plan_of(stack: str, config: dict | None = None):
    return plan_for_stack(stack, ROOT, config or stack_config(stack))[2]


def assert_matches_plan(run: Run, plan) -> None:
    """Exactly the plan's instances, clusters, tables, families and app profiles."""
    _assert_instances(run, plan)
    _assert_tables(run, plan)
    _assert_app_profiles(run, plan)


def _assert_instances(run: Run, plan) -> None:
    instances = {r.inputs["name"]: r for r in run.of_type(INSTANCE)}
    assert set(instances) == {i.id for i in plan.instances}
    for i in plan.instances:
        resource = instances[i.id]
        assert "instanceType" not in resource.inputs
        clusters = {c["clusterId"]: c for c in resource.inputs["clusters"]}
        assert set(clusters) == {c.id for c in i.clusters}
        for c in i.clusters:
            got = clusters[c.id]
            assert got["zone"] == c.zone and got["storageType"] == c.storage_type.upper()
            assert not ("numNodes" in got and "autoscalingConfig" in got)
            if c.autoscaling is None:
                assert got["numNodes"] == c.nodes
            else:
                auto = got["autoscalingConfig"]
                assert (auto["minNodes"], auto["maxNodes"], auto["cpuTarget"]) == (
                    c.autoscaling.min_nodes, c.autoscaling.max_nodes, c.autoscaling.cpu_target)


def _assert_tables(run: Run, plan) -> None:
    tables = {(r.inputs["instanceName"], r.inputs["name"]): r for r in run.of_type(TABLE)}
    assert set(tables) == {(i.id, t.id) for i in plan.instances for t in (*i.tables, *i.metadata_tables)}
    policies: dict[tuple[str, str, str], list] = {}
    for r in run.of_type(GC):
        policies.setdefault((r.inputs["instanceName"], r.inputs["table"], r.inputs["columnFamily"]), []).append(r)
    expected_policies = set()
    for i in plan.instances:
        replicated = len(i.clusters) > 1
        for t in (*i.tables, *i.metadata_tables):  # the record of the tables' types too
            assert [f["family"] for f in tables[(i.id, t.id)].inputs["columnFamilies"]] == [f.name for f in t.families]
            assert [f.get("type") is not None for f in tables[(i.id, t.id)].inputs["columnFamilies"]] == [
                f.aggregate is not None for f in t.families]
            for f in t.families:
                if f.gc.max_age_seconds is None and f.gc.max_versions is None:
                    continue  # keep-all families have no GC rule
                expected_policies.add((i.id, t.id, f.name))
                (policy,) = policies[(i.id, t.id, f.name)]  # exactly one per family
                age, versions, mode = gc_limits(policy.inputs["gcRules"])
                assert (age, versions) == (f.gc.max_age_seconds, f.gc.max_versions)
                if age is not None and versions is not None:
                    assert mode == f.gc.mode
                assert policy.inputs["ignoreWarnings"] is True
                assert policy.inputs.get("deletionPolicy") == ("ABANDON" if replicated else None)
    assert set(policies) == expected_policies


def _assert_app_profiles(run: Run, plan) -> None:
    profiles = {(r.inputs["instance"], r.inputs["appProfileId"]): r.inputs for r in run.of_type(PROFILE)}
    assert set(profiles) == {(i.id, p.id) for i in plan.instances for p in i.app_profiles}
    for i in plan.instances:
        for p in i.app_profiles:
            got = profiles[(i.id, p.id)]
            assert got["ignoreWarnings"] is True
            assert got["standardIsolation"]["priority"] == f"PRIORITY_{p.priority}"
            if p.routing == "single":
                single = got["singleClusterRouting"]
                assert single["clusterId"] == p.cluster_ids[0]
                assert single.get("allowTransactionalWrites", False) == p.allow_transactional_writes
                assert "multiClusterRoutingUseAny" not in got
            else:
                assert got.get("multiClusterRoutingUseAny") is True  # the plan routes over all clusters
                assert bool(got.get("rowAffinity")) == p.row_affinity


@pytest.fixture(scope="module", params=CLOUD_STACKS)
def deployed(request):
    return request.param, run_program(request.param), plan_of(request.param)


def test_every_cloud_stack_registers_exactly_its_plan(deployed):
    _, run, plan = deployed
    assert_matches_plan(run, plan)


def test_the_plan_json_lists_every_table_the_program_registers_one_for_one(deployed):
    """What a reviewer reads (`plan --format json`: `tables` and `metadata_tables`) is what `pulumi up`
    makes: the same tables, each with the same families and GC rules, nothing the JSON leaves out
    (before, the program's `_ddb2bigtable_types` in every instance appeared in no plan output)."""
    from ddb2bigtable.render.json_format import to_json

    _, run, plan = deployed
    listed = {(i["id"], t["id"]): t for i in to_json(plan)["instances"]
              for t in (*i["tables"], *i["metadata_tables"])}
    registered = {(r.inputs["instanceName"], r.inputs["name"]): r for r in run.of_type(TABLE)}
    assert sorted(listed) == sorted(registered)
    assert {t == "_ddb2bigtable_types" for _, t in listed} == {True, False}
    assert {i for i, t in listed if t == "_ddb2bigtable_types"} == {i.id for i in plan.instances}
    policies = {(r.inputs["instanceName"], r.inputs["table"], r.inputs["columnFamily"]): gc_limits(r.inputs["gcRules"])
                for r in run.of_type(GC)}
    for (instance, table), planned in listed.items():
        families = [f["family"] for f in registered[(instance, table)].inputs["columnFamilies"]]
        assert families == [f["name"] for f in planned["families"]]
        for f in planned["families"]:
            gc = f["gc"]
            if gc["max_age_seconds"] is None and gc["max_versions"] is None:  # keep everything: no policy
                assert (instance, table, f["name"]) not in policies
                continue
            age, versions, _ = policies.pop((instance, table, f["name"]))
            assert (age, versions) == (gc["max_age_seconds"], gc["max_versions"])
            assert f["why"]
        assert planned["why"] and planned["deletion_protection"] == registered[(instance, table)].protect
    assert policies == {}  # no GC policy of a family the JSON does not list


def test_ids_satisfy_bigtable_rules(deployed):
    _, run, _ = deployed
    for r in run.of_type(INSTANCE):
        assert id_problem("instance", r.inputs["name"]) is None
        assert all(id_problem("cluster", c["clusterId"]) is None for c in r.inputs["clusters"])
    assert all(id_problem("table", r.inputs["name"]) is None for r in run.of_type(TABLE))
    assert all(id_problem("app_profile", r.inputs["appProfileId"]) is None for r in run.of_type(PROFILE))
    assert all(id_problem("view", r.inputs["materializedViewId"]) is None for r in run.of_type(VIEW))


def test_every_resource_is_a_child_of_a_component(deployed):
    _, run, _ = deployed
    components = {r.urn: r for r in run.resources if r.type.startswith("ddb2bigtable:bigtable:")}
    for r in run.resources:
        if r.type.startswith("gcp:"):
            assert r.parent in components, r.name
        else:
            assert r.type in ("ddb2bigtable:bigtable:Instance", "ddb2bigtable:bigtable:Table",
                              "ddb2bigtable:bigtable:Monitoring")


def test_protection_follows_the_stage(deployed):
    stack, run, plan = deployed
    protected = {i.id: i.deletion_protection for i in plan.instances}
    for r in run.of_type(INSTANCE):
        on = protected[r.inputs["name"]]
        assert r.protect == on and r.inputs["deletionProtection"] == on and r.inputs["forceDestroy"] == (not on)
    tables = {(i.id, t.id): t.deletion_protection for i in plan.instances for t in (*i.tables, *i.metadata_tables)}
    for r in run.of_type(TABLE):
        on = tables[(r.inputs["instanceName"], r.inputs["name"])]
        assert r.protect == on
        assert r.inputs["deletionProtection"] == ("PROTECTED" if on else "UNPROTECTED")
    if stack == "prod":
        assert all(protected.values())
    if stack in ("dev", "pr"):
        assert not any(protected.values())


def test_outputs_are_exported(deployed):
    stack, run, plan = deployed
    assert run.outputs["stage"] == stack
    for i in plan.instances:
        out = run.outputs["instances"][i.id]
        assert [c["zone"] for c in out["clusters"]] == [c.zone for c in i.clusters]
        for c, got in zip(i.clusters, out["clusters"], strict=True):
            if c.autoscaling:
                assert (got["min_nodes"], got["max_nodes"]) == (c.autoscaling.min_nodes, c.autoscaling.max_nodes)
            else:
                assert got["nodes"] == c.nodes
        assert out["tables"] == [t.id for t in i.tables]
        assert out["app_profiles"] == [p.id for p in i.app_profiles]
        assert out["monthly_estimate_usd"] == i.cost.bigtable_monthly_usd


def test_counter_families_are_int64_sum_aggregates(deployed):
    """The video design's Stats family (counters Likes, Views) gets pulumi-gcp's family type
    for an int64 Sum aggregate with big-endian inputs; every other family stays untyped."""
    _, run, _ = deployed
    (videos,) = [r for r in run.of_type(TABLE) if r.inputs["name"] == "videos"]
    types = {f["family"]: f.get("type") for f in videos.inputs["columnFamilies"]}
    assert json.loads(types.pop("Stats")) == {
        "aggregateType": {"sum": {}, "inputType": {"int64Type": {"encoding": {"bigEndianBytes": {}}}}}}
    assert set(types) == {"cf", "Video", "UserComments", "_ddb2bigtable_txn"} and set(types.values()) == {None}


def snapshot(run: Run) -> list[dict]:
    """The resource graph: type, name, parent's type and name, protect, inputs."""
    by_urn = {r.urn: r for r in run.resources}
    return [{"type": r.type, "name": r.name,
             "parent": f"{by_urn[r.parent].type}::{by_urn[r.parent].name}" if r.parent in by_urn else None,
             "protect": r.protect, "inputs": r.inputs}
            for r in sorted(run.resources, key=lambda r: (r.type, r.name))]


def test_resource_graph_matches_the_reviewed_snapshot(deployed):
    """Set UPDATE_SNAPSHOTS=1 to rewrite tests/snapshots/; review the diff like code."""
    stack, run, _ = deployed
    path = SNAPSHOTS / f"pulumi-{stack}.json"
    current = json.loads(json.dumps(snapshot(run), sort_keys=True))
    if os.environ.get("UPDATE_SNAPSHOTS"):
        SNAPSHOTS.mkdir(exist_ok=True)
        path.write_text(json.dumps(current, indent=1, sort_keys=True) + "\n")
    assert current == json.loads(path.read_text())


def test_the_local_stack_stops_and_points_to_up():
    import pulumi

    with pytest.raises(pulumi.RunError, match="ddb2bigtable up --stage local") as error:
        run_program("local")
    assert "emulator" in str(error.value)


def test_an_ephemeral_pr_stack_comes_from_its_template_with_its_own_suffix():
    config = {"gcp:project": "my-project-dev", "ddb2bigtable:stage": {"template": "pr"}}
    run = run_program("pr-123", config=config)
    names = [r.inputs["name"] for r in run.of_type(INSTANCE)]
    assert names and all(n.endswith("-pr-123") for n in names)
    assert not any(r.protect for r in run.resources)
    assert_matches_plan(run, plan_of("pr-123", config))


def test_a_bad_stage_config_stops_the_deploy_with_a_located_message():
    import pulumi

    config = stack_config("dev")
    config["ddb2bigtable:stage"] = {**config["ddb2bigtable:stage"], "capacity_scael": 2}
    with pytest.raises(pulumi.RunError, match="did you mean 'capacity_scale'"):
        run_program("dev", config=config)


def test_the_load_service_account_gets_bigtable_user_on_the_instance_only():
    config = stack_config("staging")
    config["ddb2bigtable:stage"] = {**config["ddb2bigtable:stage"],
                                    "load": {"runner": "dataflow", "export": "gs://exports/orders",
                                             "service_account": "loader@my-project.iam.gserviceaccount.com"}}
    run = run_program("staging", config=config)
    grants = run.of_type(IAM)
    assert len(grants) == len(run.of_type(INSTANCE))
    assert {g.inputs["role"] for g in grants} == {"roles/bigtable.user"}
    assert {g.inputs["member"] for g in grants} == {"serviceAccount:loader@my-project.iam.gserviceaccount.com"}
    assert {g.inputs["instance"] for g in grants} == {r.inputs["name"] for r in run.of_type(INSTANCE)}


LIVE_ORDERS = {  # describe-table as the provider answers getTable (wire names, camelCase)
    "billingMode": "PROVISIONED", "readCapacity": 15000, "writeCapacity": 4000,
    "replicas": [{"regionName": "us-west-2"}, {"regionName": "eu-west-1"}, {"regionName": "ap-northeast-1"}],
    "ttl": {"attributeName": "expiresAt", "enabled": True},
    "globalSecondaryIndexes": [{"name": "by-status"}],
    "streamEnabled": True, "streamViewType": "NEW_AND_OLD_IMAGES",
}


def test_source_drift_is_warned_about_from_the_live_table():
    config = stack_config("prod")
    config["ddb2bigtable:stage"] = {**config["ddb2bigtable:stage"], "source": {"live": True},
                                    "specs": ["specs/shop-global.yaml"]}
    run = run_program("prod", config=config, invoke_results={"aws:dynamodb/getTable:getTable": LIVE_ORDERS})
    names = [args["name"] for token, args in run.invokes if token == "aws:dynamodb/getTable:getTable"]
    assert sorted(names) == ["Carts", "Customers", "Events", "Orders"]  # invokes run concurrently
    drift = [w for w in run.warnings if w.startswith("source drift: orders")]
    assert any("15000 RCU / 4000 WCU in AWS, 12000 / 4000 in the spec" in w for w in drift)
    assert any("ap-northeast-1" in w and "source.replicas" in w for w in drift)
    assert any("GSIs are ['by-status'] in AWS" in w for w in drift)
    assert not any("TTL" in w or "stream is" in w for w in drift)  # those match
    assert run.outputs["source_drift"][0] == [w.removeprefix("source drift: ") for w in drift]


def test_without_source_live_no_aws_call_is_made():
    run = run_program("prod")
    assert not run.invokes and "source_drift" not in run.outputs


# --- property: generated specs register exactly what their plan lists ----------------------

REGIONS = ["us-east-1", "us-west-2", "eu-west-1", "eu-central-1", "ap-northeast-1"]


@st.composite
def generated_specs(draw) -> list[dict]:
    specs = []
    for n in range(draw(st.integers(1, 2))):
        tables = []
        for t in range(draw(st.integers(1, 3))):
            home = draw(st.sampled_from(REGIONS))
            source = {"table": f"Table{t}", "region": home, "key": {"partition": {"name": "pk", "type": "S"}},
                      "reads": draw(st.integers(1, 100_000)), "writes": draw(st.integers(1, 50_000)),
                      "storage_gb": draw(st.integers(0, 20_000))}
            replicas = draw(st.lists(st.sampled_from([r for r in REGIONS if r != home]), max_size=2, unique=True))
            if replicas:
                source["replicas"] = [{"region": r} for r in replicas]
            if draw(st.booleans()):
                source["ttl"] = {"attribute": "expiresAt"}
            if draw(st.booleans()):
                source["conditional_writes"] = True
            if draw(st.booleans()):
                source["stream"] = "new_image"
            mapping = {}
            if draw(st.booleans()):
                mapping["families"] = [{"name": "extra", "gc": {"max_versions": draw(st.integers(1, 50))}}]
            tables.append({"id": f"table{t}", "source": source, **({"mapping": mapping} if mapping else {})})
        specs.append({"version": 1, "instance": {"id": f"gen{n}-instance"}, "tables": tables})
    return specs


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(generated_specs(), st.sampled_from(["all", "home"]), st.booleans())
def test_generated_specs_register_exactly_the_planned_resources(tmp_path, specs, regions, protect):
    paths = []
    for n, spec in enumerate(specs):
        path = tmp_path / f"gen{n}.yaml"
        path.write_text(yaml.safe_dump(spec))
        paths.append(str(path))
    config = {"gcp:project": "p", "ddb2bigtable:stage": {"specs": paths, "regions": regions,
                                                         "deletion_protection": protect}}
    run = run_program("gen", config=config)
    plan = plan_of("gen", config)
    assert_matches_plan(run, plan)
    assert all(r.protect == protect for r in run.of_type(INSTANCE) + run.of_type(TABLE))
