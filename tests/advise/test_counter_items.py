"""Counters kept as items of their own (#35): the seeds' video table keeps Likes and Views as
`VideoStatsLikes`/`VideoStatsViews` items holding `Count`, because DynamoDB's ADD works on an
item. advise says so and how they land: cells of an aggregate (int64 Sum) family."""

from __future__ import annotations

from decimal import Decimal

import yaml

from ddb2bigtable.plan.planner import plan_stage
from ddb2bigtable.spec.reading import read_spec
from ddb2bigtable.spec.stage import load_stage

from ..conftest import ROOT
from .helpers import codes, findings, spec_file
from .test_keys import _videos


def test_the_seeds_counter_items_are_named_with_a_mapping_that_makes_them_aggregate_cells(tmp_path):
    found = findings(tmp_path, _videos(20), ("VideoId", "S"), ("SK", "S"))
    (counters,) = [f for f in found if f.code == "counter-items"]
    assert counters.severity == "info" and counters.source.section == "Single table design pattern"
    assert counters.evidence == ("`VideoStatsLikes`, `VideoStatsViews` items (40 sampled) each hold one whole "
                                 "number besides their keys (Count): counters kept as items of their own, as "
                                 "DynamoDB's single-table design keeps them for ADD")
    assert "AddToCell through any app profile" in counters.suggestion
    mapping = yaml.safe_load(counters.snippet)
    assert mapping["attributes"] == [{"name": "Count", "type": "counter"}]
    assert [(r["sort_key_prefix"], r["family"], r["qualifier"], r["value"]) for r in mapping["rules"]] == [
        ("VideoStatsLikes", "Counters", "VideoStatsLikes", "Count"),
        ("VideoStatsViews", "Counters", "VideoStatsViews", "Count")]
    # the snippet is a valid mapping: the family is planned as an int64 Sum, and advise is satisfied
    (tmp_path / "again").mkdir()
    spec = read_spec(spec_file(tmp_path / "again", ("VideoId", "S"), ("SK", "S"), mapping))
    (instance,) = plan_stage(load_stage("local", ROOT), [spec]).instances
    assert {f.name: f.aggregate for f in instance.tables[0].families}["Counters"] == "int64_sum"
    again = findings(tmp_path / "again", _videos(20), ("VideoId", "S"), ("SK", "S"), mapping=mapping)
    assert "counter-items" not in codes(again)


def test_numbers_that_are_not_counters_stay_quiet(tmp_path):
    """Near misses: a price with cents, a type whose items hold more than the number, a type
    sampled fewer than five times, and numbered sort keys (`reading-7`: events, not a type)."""
    items = []
    for v in range(20):
        items += [{"pk": f"p{v:03d}", "sk": "Price", "Amount": Decimal(v) + Decimal("0.5")},
                  {"pk": f"p{v:03d}", "sk": "Stock", "Count": v, "Warehouse": "north"}]
    items += [{"pk": f"p{v:03d}", "sk": "Rare", "Count": v} for v in range(4)]
    items += [{"pk": f"p{v % 3:03d}", "sk": f"reading-{v}", "Value": v} for v in range(30)]
    assert "counter-items" not in codes(findings(tmp_path, items, ("pk", "S"), ("sk", "S")))
