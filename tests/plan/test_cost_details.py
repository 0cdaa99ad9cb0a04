"""Details a reviewer checks by hand: where replication traffic starts, index item sizes,
on-demand GSIs without capacity, and quantities that read as they are."""

from __future__ import annotations

import pytest

from ddb2bigtable.plan import capacity
from ddb2bigtable.plan.cost import amount
from ddb2bigtable.plan.planner import plan_files
from ddb2bigtable.spec.model import Gsi, KeyAttribute, KeySchema, Source

from ..conftest import ROOT, write_project

GIB_PER_MONTH = 730 * 3600 / (1024 * 1024)  # KB/s over a month, in GiB


def _lines(stage: str = "prod"):
    (shop,) = [i for i in plan_files(ROOT, stage, ["specs/shop-global.yaml"]).instances]
    return shop.cost.bigtable


def test_replication_is_charged_from_the_clusters_a_table_s_writes_start_at():
    lines = [line for line in _lines() if "replication" in line.item]
    by_table: dict[str, list] = {}
    for line in lines:
        by_table.setdefault(line.item.split(":")[0], []).append(line)
    # carts, customers and events write only in us-east-1: their copies leave us-east4 only
    for table in ("carts", "customers", "events"):
        assert sorted(line.item.split(": ")[1] for line in by_table[table]) == [
            "replication us-east4 → europe-west1", "replication us-east4 → us-west1"], table
    # carts by hand: 800 WRU/s average ÷ 4 (4 KB items) = 200 writes/s x 4 KB, to each other cluster
    assert [line.quantity for line in by_table["carts"]] == pytest.approx([200 * 4 * GIB_PER_MONTH] * 2, abs=1e-3)
    # orders is written in all three regions: a third of its writes start at each cluster
    origins = {line.item.split("replication ")[1].split(" →")[0] for line in by_table["orders"]}
    assert origins == {"us-east4", "us-west1", "europe-west1"} and len(by_table["orders"]) == 6
    orders_gib = 4000 / 3 * 2.5 * GIB_PER_MONTH  # 4,000 WCU ÷ 3 (2.5 KB) writes/s x 2.5 KB
    assert [line.quantity for line in by_table["orders"]] == pytest.approx([orders_gib / 3] * 6, abs=1e-3)


def _source(**kw) -> Source:
    key = KeySchema(partition=KeyAttribute("pk", "S"), sort=KeyAttribute("sk", "S"))
    return Source(table="T", region="us-east-1", key=key, billing="on_demand", item_size_kb=4.0, **kw)


@pytest.mark.parametrize("projection,size", [
    ("all", 4.0),                                # the table's item
    ("keys_only", 0.4),                          # pk, sk, gk: 3 x 0.1 + 0.1
    (("a", "b", "gk"), 0.6),                     # the index key is not counted twice
    (tuple(f"a{i}" for i in range(60)), 4.0),   # never above the table's item
])
def test_an_index_item_is_its_projection(projection, size):
    gsi = Gsi(name="g", key=KeySchema(partition=KeyAttribute("gk", "S")), projection=projection)
    found, why = capacity.gsi_item_kb(_source(), gsi)
    assert found == pytest.approx(size)
    assert ("estimated" in why) == (projection != "all")


ON_DEMAND_GSI = """\
    version: 1
    instance: {id: shop-orders}
    tables:
      - id: orders
        source:
          table: Orders
          region: us-east-1
          key: {partition: {name: id, type: S}}
          billing: on_demand
          peak: {reads_per_second: 1000, writes_per_second: 2000}
          item_size_kb: 1
          gsis:
            - name: by-customer
              key: {partition: {name: customerId, type: S}}
              projection: keys_only
    """


def test_an_on_demand_gsi_without_capacity_counts_the_table_s_writes_and_warns_about_reads(tmp_path):
    root = write_project(tmp_path, {"shop": ON_DEMAND_GSI})
    plan = plan_files(root, "test")
    (cluster,) = plan.instances[0].clusters
    view = next(s for s in cluster.load if s.table == "orders/by-customer")
    assert view.writes_per_second == 2000 and view.reads_per_second == 0
    assert "every table write counted" in cluster.why
    (warning,) = [w for w in plan.warnings if w.code == "gsi-reads-uncounted"]
    assert "by-customer" in warning.message and "reads" in warning.message
    write_lines = [line for line in plan.instances[0].cost.dynamodb if "WRU" in line.item]
    assert write_lines[0].item == "orders us-east-1: 4,000 WRU/s average"  # table + index writes, billed


@pytest.mark.parametrize("value,text", [(0.1, "0.1"), (0.0036, "0.0036"), (1.5, "1.5"), (12.25, "12.25"),
                                        (10776.9012, "10,777"), (730.0, "730"), (1.0, "1")])
def test_quantities_read_as_they_are(value, text):
    assert amount(value) == text


def test_a_cluster_at_bigtables_one_node_minimum_says_so_on_its_cost_line():
    """Movies (4,609 items) plans one node, most of its Bigtable cost, for a load of a fraction of a
    node: the node line says it is the minimum and why, in every format; shop-global's do not."""
    import json

    from ddb2bigtable.render.json_format import to_json
    from ddb2bigtable.render.markdown import to_markdown

    plan = plan_files(ROOT, "prod")
    movies = next(i for i in plan.instances if i.id == "movies-sample")
    (node,) = [line for line in movies.cost.bigtable if line.unit == "node-hour"]
    assert node.item.endswith("1 node x 730 h, the minimum")
    assert node.monthly_usd > 0.9 * movies.cost.bigtable_monthly_usd  # the node is the cost
    assert "at Bigtable's minimum of 1 node a cluster (cloud.google.com/bigtable/docs/instances-clusters-nodes" \
           in node.why and "ask for 0.0027 of a node" in node.why
    shop = next(i for i in plan.instances if i.id == "shop-global")
    assert not [line for line in shop.cost.bigtable if line.why or "minimum" in line.item]
    lines = [line for i in json.loads(json.dumps(to_json(plan)))["instances"] for line in i["cost"]["bigtable"]]
    assert [line["why"] for line in lines if line["why"]] == [
        line.why for i in plan.instances for line in i.cost.bigtable if line.why]
    assert node.why in to_markdown(plan)
