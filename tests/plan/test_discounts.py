"""The stage's `discounts:`: committed use, reserved capacity and negotiated percentages, each
on what the provider applies it to, with the list price kept beside the price paid."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from ddb2bigtable.plan import pricing
from ddb2bigtable.plan.planner import plan_files

from ..conftest import write_project
from .test_price_lock import THREE_CONTINENTS

IA_TABLE = """
    version: 1
    instance: {id: archive-ia}
    tables:
      - id: archive
        source:
          table: Archive
          region: ca-central-1
          key: {partition: {name: id, type: S}}
          billing: provisioned
          reads: 100
          writes: 50
          item_size_kb: 1
          storage_gb: 10
          table_class: standard_infrequent_access
    """


def _lines(root, stage_name="test"):
    (instance,) = plan_files(root, stage_name).instances
    return instance, {line.item: line for line in (*instance.cost.bigtable, *instance.cost.dynamodb)}


def test_committed_use_discounts_node_compute_only_and_negotiated_applies_to_all(tmp_path):
    root = write_project(tmp_path, {"trips": THREE_CONTINENTS},
                         {"discounts": {"bigtable": {"committed_use": "3y", "negotiated_percent": 5}}})
    instance, lines = _lines(root)
    nodes = [line for line in lines.values() if line.unit == "node-hour"]
    assert nodes and all(line.unit_price == pytest.approx(line.list_unit_price * 0.60 * 0.95) for line in nodes)
    assert all(line.discount == "committed use 3y -40 %; negotiated -5 %" for line in nodes)
    storage = [line for line in instance.cost.bigtable if line.unit == "GiB-month"]
    assert storage and all(line.unit_price == pytest.approx(line.list_unit_price * 0.95) for line in storage)
    assert all(line.list_unit_price is None for line in instance.cost.dynamodb)  # no DynamoDB discount given
    assert instance.cost.bigtable_monthly_usd < instance.cost.bigtable_list_monthly_usd
    assert instance.cost.dynamodb_monthly_usd == instance.cost.dynamodb_list_monthly_usd


def test_reserved_capacity_prices_standard_rcu_and_wcu_not_replicated_writes(tmp_path):
    root = write_project(tmp_path, {"trips": THREE_CONTINENTS},
                         {"discounts": {"dynamodb": {"reserved_capacity": "1y", "negotiated_percent": 10}}})
    _, lines = _lines(root)
    rcu = lines["trips us-east-1: 400 RCU"]
    # us-east-1, 1 year, per 100 RCU: $30 upfront + $0.0025/hour (AWS Labs' recommender table)
    assert rcu.unit_price == pytest.approx((30 / 8760 + 0.0025) / 100 * 0.9)
    assert rcu.list_unit_price == pricing.dynamodb("us-east-1", "rcu_hour").value
    assert rcu.discount == "reserved 1y; negotiated -10 %"
    wcu = lines["trips us-east-1: 100 WCU"]
    assert wcu.unit_price == pytest.approx((150 / 8760 + 0.0128) / 100 * 0.9)
    replicated = lines["trips eu-west-1: 100 rWCU"]
    assert replicated.discount == "negotiated -10 %"  # AWS sells no reserved replicated WCU
    tokyo = lines["trips ap-northeast-1: 400 RCU"]
    assert tokyo.unit_price == pytest.approx((34.2 / 8760 + 0.0029) / 100 * 0.9)  # Tokyo's own rates
    assert lines["trips us-east-1: storage"].discount == "negotiated -10 %"


def test_a_region_without_three_year_rates_is_an_estimate_and_standard_ia_gets_no_reservation(tmp_path):
    root = write_project(tmp_path, {"archive": IA_TABLE}, {"discounts": {"dynamodb": {"reserved_capacity": "3y"}}})
    _, lines = _lines(root)
    rcu = lines["archive ca-central-1: 100 RCU"]
    assert rcu.list_unit_price is None and rcu.discount == ""  # Standard-IA: no reserved capacity
    standard = write_project(tmp_path / "std", {"archive": IA_TABLE.replace(
        "table_class: standard_infrequent_access", "table_class: standard")},
        {"discounts": {"dynamodb": {"reserved_capacity": "3y"}}})
    _, lines = _lines(standard)
    rcu = lines["archive ca-central-1: 100 RCU"]
    ratio = (36 / 26280 + 0.0016) / 100 / pricing.dynamodb("us-east-1", "rcu_hour").value
    assert rcu.estimate and rcu.discount == "reserved 3y (estimate)"
    assert rcu.unit_price == pytest.approx(rcu.list_unit_price * ratio)
    assert "no 3y reserved capacity rates for ca-central-1; us-east-1's ratio" in rcu.note


def test_plan_output_shows_list_and_discounted_prices(tmp_path):
    root = write_project(tmp_path, {"trips": THREE_CONTINENTS},
                         {"discounts": {"bigtable": {"committed_use": "1y"}}})
    run = [sys.executable, "-m", "ddb2bigtable", "plan", "--stage", "test", "--root", str(root)]
    markdown = subprocess.run([*run, "--format", "markdown"], capture_output=True, text=True, timeout=120)
    assert markdown.returncode == 0, markdown.stderr
    assert "(list $0.65)" in markdown.stdout and "| list price |" in markdown.stdout
    assert "discount: Bigtable committed use discount 1y: 20 % off node compute " \
           "(https://cloud.google.com/bigtable/docs/cuds" in markdown.stdout
    document = json.loads(subprocess.run([*run, "--format", "json"], capture_output=True, text=True,
                                         timeout=120).stdout)
    cost = document["instances"][0]["cost"]
    node = cost["bigtable"][0]
    assert (node["list_unit_price"], node["unit_price"], node["discount"]) == (0.65, 0.52, "committed use 1y -20 %")
    assert cost["bigtable_list_monthly_usd"] > cost["bigtable_monthly_usd"]


@pytest.mark.parametrize("discounts,path", [
    ({"bigtable": {"committed_use": "2y"}}, "discounts.bigtable.committed_use"),
    ({"dynamodb": {"negotiated_percent": 100}}, "discounts.dynamodb.negotiated_percent"),
    ({"dynamodb": {"reserved": "1y"}}, "discounts.dynamodb"),
])
def test_bad_discounts_exit_2_at_their_path(tmp_path, discounts, path):
    root = write_project(tmp_path, {"trips": THREE_CONTINENTS}, {"discounts": discounts})
    out = subprocess.run([sys.executable, "-m", "ddb2bigtable", "plan", "--stage", "test", "--root", str(root)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert f"config.ddb2bigtable:stage.{path}" in out.stderr.splitlines()[0]
