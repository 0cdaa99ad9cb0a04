"""What the plan creates for DynamoDB features, on the example specs and stages.

These read the real `specs/` and `stacks/` of the repository, the way a user runs
`ddb2bigtable plan --stage S`, and check what a reviewer would look for.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from ddb2bigtable.plan.planner import plan_files
from ddb2bigtable.render.json_format import to_json
from ddb2bigtable.spec.errors import InputError
from ddb2bigtable.spec.ids import LABEL_KEY, LABEL_VALUE, id_problem

from ..conftest import ROOT, shipped_project, write_project


@pytest.fixture(scope="module")
def plans(tmp_path_factory) -> dict[str, dict]:
    root = shipped_project(tmp_path_factory.mktemp("shipped"))
    return {stage: to_json(plan_files(root, stage)) for stage in ("local", "dev", "staging", "prod")}


def instance(plan: dict, prefix: str) -> dict:
    (found,) = [i for i in plan["instances"] if i["id"].startswith(prefix)]
    return found


def table(inst: dict, table_id: str) -> dict:
    (found,) = [t for t in inst["tables"] if t["id"] == table_id]
    return found


def test_every_stage_plans_every_example_spec_with_valid_ids(plans):
    for stage, plan in plans.items():
        assert len(plan["instances"]) == 5, stage
        for inst in plan["instances"]:
            assert id_problem("instance", inst["id"]) is None
            assert all(id_problem("cluster", c["id"]) is None for c in inst["clusters"])
            assert all(id_problem("app_profile", p["id"]) is None for p in inst["app_profiles"])
            assert all(id_problem("table", t["id"]) is None for t in inst["tables"])
            assert all(id_problem("family", f["name"]) is None for t in inst["tables"] for f in t["families"])
            assert all(LABEL_KEY.match(k) and LABEL_VALUE.match(v) for k, v in inst["labels"].items())


def test_prod_keeps_the_global_table_in_three_regions_with_failover_headroom(plans):
    shop = instance(plans["prod"], "shop-global")
    assert [c["zone"].rsplit("-", 1)[0] for c in shop["clusters"]] == ["us-east4", "us-west1", "europe-west1"]
    assert {c["cpu_target"] for c in shop["clusters"]} == {46}
    assert all(c["autoscaling"] for c in shop["clusters"])  # orders autoscales, carts is on-demand


def test_dev_keeps_only_home_regions_without_headroom_and_with_its_suffix(plans):
    shop = instance(plans["dev"], "shop-global")
    assert shop["id"] == "shop-global-dev"
    (cluster,) = shop["clusters"]
    assert cluster["zone"].startswith("us-east4-") and cluster["cpu_target"] == 70
    assert cluster["autoscaling"]["max_nodes"] <= 10  # the stage's cap
    assert not shop["deletion_protection"] and not any(t["deletion_protection"] for t in shop["tables"])


def test_prod_protects_instances_and_tables(plans):
    for inst in plans["prod"]["instances"]:
        assert inst["deletion_protection"]
        assert all(t["deletion_protection"] for t in inst["tables"])


def test_a_stage_that_does_not_mention_deletion_protection_protects_everything(tmp_path):
    """Production-safe by default: a stage that forgets the setting protects the instance
    and every table, even when DynamoDB's table had deletion protection off."""
    spec = (ROOT / "specs" / "movies.yaml").read_text()  # Movies: DynamoDB deletion protection off
    root = write_project(tmp_path, {"movies": spec})
    (movies,) = to_json(plan_files(root, "test"))["instances"]
    assert movies["deletion_protection"] and all(t["deletion_protection"] for t in movies["tables"])
    assert "protected against deletion: the stage does not say otherwise" in movies["tables"][0]["why"]
    root = write_project(tmp_path, {"movies": spec}, {"deletion_protection": False})
    (movies,) = to_json(plan_files(root, "test"))["instances"]
    assert not movies["deletion_protection"] and not any(t["deletion_protection"] for t in movies["tables"])


def test_app_profiles_route_serving_transactions_and_the_load(plans):
    shop = instance(plans["prod"], "shop-global")
    profiles = {p["id"]: p for p in shop["app_profiles"]}
    cluster_ids = [c["id"] for c in shop["clusters"]]
    serving = profiles["serving"]
    assert serving["routing"] == "multi" and serving["cluster_ids"] == cluster_ids and serving["row_affinity"]
    txn = [p for p in shop["app_profiles"] if p["allow_transactional_writes"]]
    assert sorted(p["cluster_ids"][0] for p in txn) == sorted(cluster_ids)  # orders uses conditional writes
    assert all(p["routing"] == "single" and len(p["cluster_ids"]) == 1 for p in txn)
    load = profiles["migration-load"]
    assert load["routing"] == "single" and load["priority"] == "LOW"
    assert load["cluster_ids"] == [shop["clusters"][0]["id"]]  # the home region's cluster
    movies = instance(plans["prod"], "movies")
    assert not any(p["allow_transactional_writes"] for p in movies["app_profiles"])


def test_ttl_uses_one_second_expiration_and_other_tables_keep_one_version(plans):
    shop = instance(plans["prod"], "shop-global")
    carts_cf = table(shop, "carts")["families"][0]
    assert carts_cf["gc"] == {"max_age_seconds": 1, "max_versions": 1, "mode": "union"}
    assert "one-second expiration" in carts_cf["why"]
    # with a stream too, serve's TTL sweep deletes an expired item with its REMOVE: no max_age to beat it to it
    orders_cf, orders_txn, _ = table(shop, "orders")["families"]
    assert orders_cf["gc"] == {"max_age_seconds": None, "max_versions": 1, "mode": "union"}
    assert "REMOVE record" in orders_cf["why"]
    customers_cf, _ = table(shop, "customers")["families"]
    assert customers_cf["gc"] == {"max_age_seconds": None, "max_versions": 1, "mode": "union"}
    # serve's transaction locks: never aged out, even beside a TTL family (docs/transactions.md)
    assert orders_txn["name"] == "_ddb2bigtable_txn"
    assert orders_txn["gc"] == {"max_age_seconds": None, "max_versions": 1, "mode": "union"}


def test_explicit_gc_from_the_mapping_keeps_the_newest_comments(plans):
    video = instance(plans["prod"], "video")
    families = {f["name"]: f["gc"] for t in video["tables"] for f in t["families"]}
    assert families["UserComments"]["max_versions"] == 500


def test_streams_backups_and_gsis_become_change_streams_backups_and_views(plans):
    orders = table(instance(plans["prod"], "shop-global"), "orders")
    assert orders["change_stream_retention_hours"] == 24
    # serve's records of the stream, in the items' rows (docs/streams.md): 24 hours, DynamoDB's retention
    records = {f["name"]: f for f in orders["families"]}["_ddb2bigtable_stream"]
    assert records["gc"] == {"max_age_seconds": 86400, "max_versions": None, "mode": "union"}
    customers = table(instance(plans["prod"], "shop-global"), "customers")
    assert "_ddb2bigtable_stream" not in {f["name"] for f in customers["families"]}  # no stream, no family
    assert orders["backup"]["retention_days"] == 35 and orders["backup"]["frequency_hours"] == 24
    assert "not to any second" in orders["backup"]["why"]
    views = {v["gsi"]: v for v in orders["materialized_views"]}
    assert set(views) == {"by-status", "by-merchant"}
    query = views["by-status"]["query"]
    assert query.endswith("ORDER BY status, createdAt_number, source_key") and "_key AS source_key" in query
    # createdAt is N: its cell is decimal text, so the view also holds and orders it as FLOAT64
    assert "CAST(CAST(cf['createdAt'] AS STRING) AS FLOAT64) AS createdAt_number" in query
    assert "cf['createdAt'] AS createdAt," in query and "status_number" not in query
    carts = table(instance(plans["prod"], "shop-global"), "carts")
    assert carts["change_stream_retention_hours"] is None and carts["backup"] is None


def test_tags_become_sanitised_labels(plans):
    labels = instance(plans["prod"], "shop-global")["labels"]
    assert labels["cost_center"] == "cc-4711" and labels["team"] == "commerce"
    assert labels["managed-by"] == "ddb2bigtable" and labels["stage"] == "prod"


def test_warnings_name_what_changes_for_the_application(plans):
    codes = {(w["code"], w["table"]) for w in plans["prod"]["warnings"]}
    assert ("made-multi-region", "carts") in codes
    assert ("strong-reads", "customers") in codes
    assert ("infrequent-access", "events") in codes
    assert ("hot-key", "orders") in codes  # GSI keyed by status


def test_cost_is_side_by_side_and_estimates_are_labelled(plans):
    shop = instance(plans["prod"], "shop-global")
    cost = shop["cost"]
    assert cost["bigtable_monthly_usd"] > 0 and cost["dynamodb_monthly_usd"] > 0
    assert cost["bigtable_monthly_usd"] == pytest.approx(sum(x["monthly_usd"] for x in cost["bigtable"]), abs=0.05)
    nodes = sum(c["nodes"] for c in shop["clusters"])
    node_lines = [x for x in cost["bigtable"] if x["unit"] == "node-hour"]
    assert sum(x["quantity"] for x in node_lines) == nodes * 730
    for line in cost["bigtable"] + cost["dynamodb"]:
        assert line["source"].startswith("https://") and line["as_of"]
        if line["estimate"]:
            assert line["note"]  # says why: which reference region was used, or what is unconfirmed
    assert cost["estimate"] == any(x["estimate"] for x in cost["bigtable"] + cost["dynamodb"])
    # dev runs a tenth of the capacity in one region: both sides shrink
    dev = instance(plans["dev"], "shop-global")["cost"]
    assert dev["dynamodb_monthly_usd"] < cost["dynamodb_monthly_usd"] / 3
    assert dev["bigtable_monthly_usd"] < cost["bigtable_monthly_usd"] / 3


SMALL = """version: 1
instance:
  id: {instance_id}
{instance_extra}tables:
  - id: things
    source:
      table: Things
      region: us-east-1
      key: {{partition: {{name: id, type: S}}}}
      reads: 100
      writes: 100
      replicas: [{{region: eu-west-2}}]
"""


def small(instance_id="things-store", instance_extra=""):
    return SMALL.format(instance_id=instance_id, instance_extra=instance_extra)


def test_a_suffix_that_makes_the_instance_id_too_long_is_located_bad_input(project):
    root = project({"s": small("a-very-long-instance-id-of-thirty")}, stage={"instance_suffix": "-pr-12345"})
    with pytest.raises(InputError) as error:
        plan_files(root, "test")
    (problem,) = error.value.problems
    assert problem.file.endswith("s.yaml") and problem.line == 3 and "suffix '-pr-12345'" in problem.message


def test_cmek_must_cover_every_cluster(project):
    key = "projects/p/locations/us-east4/keyRings/r/cryptoKeys/k"
    root = project({"s": small(instance_extra=f"  kms_keys: {{us-east-1: {key}}}\n")})
    with pytest.raises(InputError, match="CMEK must cover every cluster"):
        plan_files(root, "test")
    root = project({"s": small(instance_extra=f"  kms_keys: {{us-east-1: {key}}}\n")}, stage={"regions": "home"})
    (cluster,) = to_json(plan_files(root, "test"))["instances"][0]["clusters"]
    assert cluster["kms_key_name"] == key


def test_hdd_serving_reads_is_warned_about(project):
    root = project({"s": small(instance_extra="  storage: hdd\n")})
    codes = [w["code"] for w in to_json(plan_files(root, "test"))["warnings"]]
    assert "hdd-reads" in codes


def test_lsis_get_advice_instead_of_silence(project):
    spec = small().replace("key: {partition: {name: id, type: S}}",
                           "key: {partition: {name: id, type: S}, sort: {name: at, type: N}}") + \
        "      lsis: [{name: by-price, sort: {name: price, type: N}}]\n"
    root = project({"s": spec})
    (lsi,) = [w for w in to_json(plan_files(root, "test"))["warnings"] if w["code"] == "lsi"]
    assert "by-price" in lsi["message"] and "no Bigtable equivalent" in lsi["message"]


def test_plan_with_a_missing_stage_exits_2_and_lists_the_stages():
    out = subprocess.run([sys.executable, "-m", "ddb2bigtable", "plan", "--stage", "qa"], cwd=ROOT,
                         capture_output=True, text=True)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "dev" in out.stderr and "prod" in out.stderr


def test_table_format_prints_for_a_person():
    out = subprocess.run([sys.executable, "-m", "ddb2bigtable", "plan", "--stage", "prod", "specs/movies.yaml"],
                         cwd=ROOT, capture_output=True, text=True, env={"COLUMNS": "100", "PATH": ""})
    assert out.returncode == 0, out.stderr
    assert "movies-sample-us-west1-a" in out.stdout and "Monthly cost" in out.stdout
    assert max(len(line) for line in out.stdout.splitlines()) <= 100


def test_json_format_is_parseable_by_pipelines():
    out = subprocess.run([sys.executable, "-m", "ddb2bigtable", "plan", "--stage", "dev", "--format", "json"],
                         cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["stage"] == "dev"
