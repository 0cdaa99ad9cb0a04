"""`plan --format json` against the design's sizing model, recomputed by hand.

Each case writes a spec, plans it through the CLI's JSON, and compares with arithmetic
spelled out in the test: units -> ops (RCU x k_r / ceil(s/4), WCU x k_w / ceil(s)),
per-node capacity R(s) = 17,000 x min(1, 1/s), W(s) = 14,000 x min(1, 1/s),
nodes = max(1, ceil(load / target), ceil(storage / 2,560 GiB)).
"""

from __future__ import annotations

import json
import math
import subprocess
import sys

from ddb2bigtable.plan.planner import plan_files
from ddb2bigtable.render.json_format import to_json


def table(id_: str, source: str, mapping: str = "") -> str:
    return f"""
  - id: {id_}
    source:
{source}
""" + mapping


def spec(instance: str, *tables: str, extra: str = "") -> str:
    return f"""version: 1
instance:
  id: {instance}
{extra}tables:{''.join(tables)}
"""


def plan_json(root, stage="test"):
    return to_json(plan_files(root, stage))


def clusters(plan):
    (instance,) = plan["instances"]
    return {c["region"]: c for c in instance["clusters"]}


def only_cluster(plan):
    (c,) = clusters(plan).values()
    return c


ORDERS_EVENTUAL = """      table: Orders
      region: us-east-1
      key: {partition: {name: customerId, type: S}, sort: {name: orderId, type: S}}
      billing: provisioned
      reads: 12000
      writes: 1
      read_consistency: %s
      item_size_kb: 2.5
      storage_gb: 10"""


def test_eventual_reads_at_2_5_kb_match_the_design_example(project):
    # The design's own example: 12,000 RCU eventual at 2.5 KB = 24,000 reads/s -> 6 nodes.
    root = project({"shop": spec("shop-one", table("orders", ORDERS_EVENTUAL % "eventual"))})
    reads = 12000 * 2 / math.ceil(2.5 / 4)          # 24,000 reads/s
    writes = 1 * 1 / math.ceil(2.5)                  # 0.33 writes/s
    load = reads / (17000 / 2.5) + writes / (14000 / 2.5)
    assert reads == 24000
    expected = math.ceil(load / 0.70)                # 3.53 / 0.7 = 5.04 -> 6
    assert expected == 6
    c = only_cluster(plan_json(root))
    assert c["nodes"] == expected and c["autoscaling"] is None and c["cpu_target"] == 70
    assert "24,000 reads/s" in c["why"] and "6 nodes" in c["why"]


def test_strong_reads_need_half_the_eventual_throughput(project):
    root = project({"shop": spec("shop-one", table("orders", ORDERS_EVENTUAL % "strong"))})
    load = 12000 * 1 / 1 / 6800 + (1 / 3) / 5600     # 1.76 nodes of load
    assert only_cluster(plan_json(root))["nodes"] == math.ceil(load / 0.70) == 3


def test_items_above_4_kb_cost_two_read_units_and_six_write_units(project):
    source = """      table: Customers
      region: eu-west-2
      key: {partition: {name: id, type: S}}
      reads: 10000
      writes: 2000
      read_consistency: strong
      item_size_kb: 6"""
    root = project({"crm": spec("crm-one", table("customers", source))})
    reads = 10000 / math.ceil(6 / 4)                 # 5,000 reads/s (6 KB = two 4 KB units)
    writes = 2000 / math.ceil(6 / 1)                 # 333 writes/s (six 1 KB units)
    load = reads / (17000 / 6) + writes / (14000 / 6)  # 1.76 + 0.14 = 1.91
    c = only_cluster(plan_json(root))
    assert c["nodes"] == math.ceil(load / 0.70) == 3
    assert c["zone"].startswith("europe-west2-")


def test_a_storage_bound_table_gets_its_storage_floor(project):
    source = """      table: Events
      region: us-east-1
      key: {partition: {name: deviceId, type: S}, sort: {name: at, type: N}}
      reads: 100
      writes: 100
      storage_gb: 9000"""
    root = project({"events": spec("events-one", table("events", source))})
    c = only_cluster(plan_json(root))
    assert c["nodes"] == math.ceil(9000 / 2560) == 4   # CPU alone would need 1
    assert "9,000 GiB" in c["why"]


def test_on_demand_autoscales_between_average_and_peak(project):
    source = """      table: Carts
      region: us-east-1
      key: {partition: {name: cartId, type: S}}
      billing: on_demand
      peak: {reads_per_second: 40000, writes_per_second: 10000}
      average: {reads_per_second: 8000, writes_per_second: 2000}"""
    root = project({"carts": spec("carts-one", table("carts", source))})
    peak = 40000 * 2 / 17000 + 10000 / 14000          # 5.42 nodes of load
    average = 8000 * 2 / 17000 + 2000 / 14000         # 1.08
    c = only_cluster(plan_json(root))
    assert c["autoscaling"]["max_nodes"] == math.ceil(peak / 0.70) == 8
    assert c["autoscaling"]["min_nodes"] == math.ceil(average / 0.70) == 2
    assert c["autoscaling"]["cpu_target"] == 70
    assert c["autoscaling"]["storage_target_gib"] == 2560
    assert c["nodes"] == 2  # expected at the average rate


def test_autoscaling_min_is_raised_to_a_tenth_of_max(project):
    source = """      table: Spiky
      region: us-east-1
      key: {partition: {name: id, type: S}}
      billing: on_demand
      peak: {reads_per_second: 200000, writes_per_second: 100}
      average: {reads_per_second: 100, writes_per_second: 10}"""
    root = project({"spiky": spec("spiky-one", table("spiky", source))})
    a = only_cluster(plan_json(root))["autoscaling"]
    peak = 200000 * 2 / 17000 + 100 / 14000            # 23.5 -> 34 nodes at 70 %
    assert a["max_nodes"] == math.ceil(peak / 0.70) == 34
    assert a["min_nodes"] == math.ceil(34 / 10) == 4    # average alone would give 1
    assert "10 x min" in a["why"]


def test_three_region_global_table_with_failover_headroom(project):
    source = """      table: Orders
      region: us-east-1
      key: {partition: {name: customerId, type: S}, sort: {name: orderId, type: S}}
      reads: 30000
      writes: 5000
      replicas:
        - {region: us-west-2, reads: 15000}
        - {region: eu-west-1}"""
    root = project({"orders": spec("orders-global", table("orders", source))})
    target = math.floor(70 * 2 / 3)                    # 46 %: two survivors absorb the third
    writes = 5000 / 14000                              # every cluster applies every write
    home = 30000 * 2 / 17000 + writes                  # 3.89 nodes of load
    west = 15000 * 2 / 17000 + writes                  # 2.12
    by_region = clusters(plan_json(root))
    assert len(by_region) == 3
    assert {c["cpu_target"] for c in by_region.values()} == {target}
    assert by_region["us-east4"]["nodes"] == math.ceil(home / (target / 100)) == 9
    assert by_region["us-west1"]["nodes"] == math.ceil(west / (target / 100)) == 5
    europe = [c for r, c in by_region.items() if r.startswith("europe-")]
    assert europe[0]["nodes"] == 9  # eu-west-1 has the home RCU by default


def test_two_x_node_scaling_rounds_every_count_up_to_even(project):
    root = project({"shop": spec("shop-twox", table("orders", ORDERS_EVENTUAL % "strong"),
                                 extra="  node_scaling_factor: 2\n")})
    c = only_cluster(plan_json(root))
    assert c["nodes"] == 4  # 3 nodes of CPU, rounded up to even


def test_capacity_scale_and_gsi_capacity_are_counted(project):
    source = """      table: Orders
      region: us-east-1
      key: {partition: {name: customerId, type: S}, sort: {name: orderId, type: S}}
      reads: 20000
      writes: 4000
      gsis:
        - name: by-status
          key: {partition: {name: status, type: S}, sort: {name: createdAt, type: N}}
          reads: 14000
          writes: 4000"""
    root = project({"orders": spec("orders-scale", table("orders", source))}, stage={"capacity_scale": 0.5})
    load = 0.5 * ((20000 + 14000) * 2 / 17000 + (4000 + 4000) / 14000)  # 2.0 + 0.29 = 2.29
    assert only_cluster(plan_json(root))["nodes"] == math.ceil(load / 0.70) == 4


def test_the_cli_prints_the_same_json(project):
    root = project({"shop": spec("shop-one", table("orders", ORDERS_EVENTUAL % "eventual"))})
    out = subprocess.run([sys.executable, "-m", "ddb2bigtable", "plan", "--stage", "test", "--format", "json",
                          "--root", str(root)], capture_output=True, text=True, cwd=root)
    assert out.returncode == 0, out.stderr
    document = json.loads(out.stdout)
    assert document["version"] == 1 and document["stage"] == "test"
    assert document == json.loads(json.dumps(plan_json(root)))


def test_the_multi_region_example_in_prod_recomputed_by_hand():
    """specs/shop-global.yaml on stacks/Pulumi.prod.yaml, the us-west1 cluster (serves us-west-2).

    Only orders is replicated there; the other tables send it their writes (replication).
    """
    from ..conftest import ROOT

    target = 0.46                                           # 70 % x 2/3, three clusters, rounded down
    r25, w25 = 17000 / 2.5, 14000 / 2.5                     # orders: 2.5 KB items
    carts_w = 14000 / 4                                     # carts: 4 KB
    customers_w = 14000 / 6                                 # customers: 6 KB
    # (read RCU, write WCU) of the orders table in the us-west-2 replica at each level: the
    # replica runs at its own 6,000 RCU and autoscales within the table's min/max
    orders = {"sized": (6000, 4000), "min": (4000, 1500), "max": (20000, 8000)}
    # Its GSIs keep their own capacity at every level, as views with index-item-sized rows:
    # by-status keys only (4 keys x 0.1 KB + 0.1 KB = 0.5 KB), by-merchant keys + 3 (0.8 KB);
    # under 1 KB both get the full per-node figures and 1 unit per operation.
    views = (1000 + 2500) * 2 / 17000 + (4000 + 4000) / 14000
    carts_wru = {"sized": 2500, "min": 800, "max": 2500, "expected": 800}  # on-demand: peak / average

    def load(level: str) -> float:
        rcu, wcu = orders["sized" if level == "expected" else level]
        return (rcu * 2 / r25 + wcu / 3 / w25                   # orders: eventual, ceil(2.5) = 3 WCU per write
                + views
                + carts_wru[level] / 4 / carts_w                 # carts: ceil(4) = 4 WRU per write, 3,500/node
                + 300 / 6 / customers_w                          # customers writes, 6 KB
                + 300 / 14000                                    # its by-email view (keys only, 0.3 KB)
                + 1500 / 14000)                                  # events writes, 1 KB

    floor = math.ceil((850 + 60 + 120 + 9000) / 2560)           # 10,030 GiB -> 4 nodes
    west = clusters(to_json(plan_files(ROOT, "prod", ["specs/shop-global.yaml"])))["us-west1"]
    assert west["cpu_target"] == 46
    assert west["autoscaling"]["min_nodes"] == max(floor, math.ceil(load("min") / target)) == 6
    assert west["autoscaling"]["max_nodes"] == math.ceil(load("max") / target) == 17
    assert west["nodes"] == math.ceil(load("expected") / target) == 7
