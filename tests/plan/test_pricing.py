"""The dated price table: every figure sourced, every plan region priced, estimates flagged."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import date
from importlib import resources
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ddb2bigtable.plan import pricing
from ddb2bigtable.plan.pricing import (
    DYNAMODB_ITEMS,
    PRICE_TABLE_AS_OF,
    Price,
    bigtable_backup_storage,
    bigtable_node_hour,
    bigtable_replication_egress,
    bigtable_storage,
    dynamodb,
)
from ddb2bigtable.spec.regions import AWS_REGIONS, GCP_REGIONS

from ..conftest import nodes_with


def _raw() -> dict[str, Any]:
    text = resources.files("ddb2bigtable.plan").joinpath("data", "prices.json").read_text("utf-8")
    return json.loads(text)


def _figures(node: Any) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every dict in the JSON that holds a price (has a "value")."""
    return nodes_with("value", node)


def _check_price(p: Price) -> None:
    assert isinstance(p, Price)
    assert p.value >= 0
    assert p.unit
    assert p.source.startswith("https://")
    assert date.fromisoformat(p.as_of) <= date.fromisoformat(PRICE_TABLE_AS_OF)
    if p.estimate:
        assert p.note, "an estimate must say why"


# --- the JSON itself ------------------------------------------------------------------


def test_table_date_is_the_json_date() -> None:
    assert PRICE_TABLE_AS_OF == _raw()["as_of"]
    date.fromisoformat(PRICE_TABLE_AS_OF)


def test_every_figure_has_source_and_as_of() -> None:
    figures = list(_figures(_raw()))
    assert len(figures) > 10
    for path, fig in figures:
        assert isinstance(fig["value"], (int, float)), path
        assert fig.get("unit"), path
        assert str(fig.get("source", "")).startswith("https://"), path
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", str(fig.get("as_of", ""))), path
        date.fromisoformat(fig["as_of"])
        if fig.get("estimate"):
            assert fig.get("note") or "replication_egress" in path, path


def test_reference_regions_are_complete() -> None:
    raw = _raw()
    bt = raw["bigtable"]["regions"][raw["bigtable"]["reference_region"]]
    assert {"node_hour", "ssd_gib_month", "hdd_gib_month", "backup_gib_month"} <= set(bt)
    ddb = raw["dynamodb"]["regions"][raw["dynamodb"]["reference_region"]]
    assert set(DYNAMODB_ITEMS) <= set(ddb)


# --- Bigtable -------------------------------------------------------------------------


@pytest.mark.parametrize("region", GCP_REGIONS)
def test_every_planned_gcp_region_is_priced(region: str) -> None:
    for p in (
        bigtable_node_hour(region),
        bigtable_storage(region, "ssd"),
        bigtable_storage(region, "hdd"),
        bigtable_backup_storage(region),
    ):
        _check_price(p)
        assert p.value > 0


def test_reference_region_has_its_own_prices() -> None:
    node = bigtable_node_hour("us-central1")
    assert (node.value, node.unit, node.estimate) == (0.65, "node-hour", False)
    assert bigtable_storage("us-central1", "ssd").value == 0.17
    assert bigtable_storage("us-central1", "HDD").value == 0.026


def test_region_without_figures_is_an_estimate_naming_the_reference() -> None:
    p = bigtable_node_hour("asia-south2")
    assert p.estimate
    assert "asia-south2" in p.note and "us-central1" in p.note


def test_storage_type_is_checked() -> None:
    with pytest.raises(ValueError):
        bigtable_storage("us-central1", "nvme")


def test_replication_inside_a_region_is_free() -> None:
    p = bigtable_replication_egress("us-east4", "us-east4")
    assert p.value == 0 and not p.estimate


def test_replication_across_continents_costs_more_than_within() -> None:
    within = bigtable_replication_egress("us-east4", "us-west1")
    across = bigtable_replication_egress("us-east4", "europe-west1")
    assert 0 < within.value < across.value
    assert within.unit == across.unit == "GiB"


@given(st.sampled_from(GCP_REGIONS), st.sampled_from(GCP_REGIONS))
def test_replication_egress_for_any_pair(src: str, dst: str) -> None:
    p = bigtable_replication_egress(src, dst)
    _check_price(p)
    assert (p.value == 0) == (src == dst)
    assert p.value == bigtable_replication_egress(dst, src).value


# --- DynamoDB -------------------------------------------------------------------------


@pytest.mark.parametrize("region", AWS_REGIONS)
def test_every_aws_region_and_item_is_priced(region: str) -> None:
    for item in DYNAMODB_ITEMS:
        p = dynamodb(region, item)
        _check_price(p)
        assert p.value > 0


def test_unknown_region_is_flagged_estimate_with_a_note() -> None:
    p = dynamodb("xx-nowhere-9", "wcu_hour")
    assert p.estimate
    assert "xx-nowhere-9" in p.note and "us-east-1" in p.note


def test_item_is_checked() -> None:
    with pytest.raises(ValueError):
        dynamodb("us-east-1", "wcu_month")


def test_post_november_2024_prices_are_used() -> None:
    # On-demand throughput -50 %; replicated writes priced as single-region writes.
    assert dynamodb("us-east-1", "wru_million").value == 0.625
    assert dynamodb("us-east-1", "rru_million").value == 0.125
    assert dynamodb("us-east-1", "replicated_wru_million").value == dynamodb("us-east-1", "wru_million").value
    assert dynamodb("us-east-1", "replicated_wcu_hour").value == dynamodb("us-east-1", "wcu_hour").value
    assert not dynamodb("us-east-1", "replicated_wcu_hour").estimate


def test_replicated_writes_follow_the_region_s_own_write_price() -> None:
    own = dynamodb("eu-west-1", "wcu_hour")
    replicated = dynamodb("eu-west-1", "replicated_wcu_hour")
    assert not own.estimate and replicated.value == own.value
    assert not replicated.estimate and "2024-11-01" in replicated.note
    assert replicated.unit == "rWCU-hour"
    assert dynamodb("eu-central-1", "replicated_wru_million").estimate  # no own WRU figure


# Regions whose figures were read from AWS's price lists (prices.json says where): a
# European or Asian team's DynamoDB column is not a us-east-1 guess.
PROVISIONED = ["us-east-2", "us-west-1", "us-west-2", "ca-central-1", "sa-east-1", "eu-west-1", "eu-west-2",
               "eu-west-3", "eu-central-1", "eu-north-1", "ap-northeast-1", "ap-northeast-2", "ap-northeast-3",
               "ap-southeast-1", "ap-southeast-2", "ap-south-1", "ap-east-1", "af-south-1", "me-south-1"]
ON_DEMAND = ["eu-west-1", "ap-northeast-1", "ap-southeast-2", "ap-south-1"]


@pytest.mark.parametrize("region", PROVISIONED)
def test_provisioned_capacity_has_the_region_s_own_price(region: str) -> None:
    for item in ("rcu_hour", "wcu_hour", "replicated_wcu_hour"):
        price = dynamodb(region, item)
        assert not price.estimate, (region, item, price.note)
    assert dynamodb(region, "wcu_hour").value == pytest.approx(5 * dynamodb(region, "rcu_hour").value, rel=0.01)


@pytest.mark.parametrize("region", ON_DEMAND)
def test_on_demand_storage_and_pitr_have_the_region_s_own_price(region: str) -> None:
    for item in ("rru_million", "wru_million", "replicated_wru_million", "storage_gb_month", "pitr_gb_month"):
        assert not dynamodb(region, item).estimate, (region, item)
    # Outside us-east-1 every published figure is dearer, never the reference's by accident.
    for item in ("rru_million", "wru_million", "storage_gb_month", "pitr_gb_month"):
        assert dynamodb(region, item).value > dynamodb("us-east-1", item).value


def test_storage_classes_are_ordered() -> None:
    assert dynamodb("us-east-1", "storage_ia_gb_month").value < dynamodb("us-east-1", "storage_gb_month").value


def test_table_is_loaded_once() -> None:
    assert pricing._table() is pricing._table()
