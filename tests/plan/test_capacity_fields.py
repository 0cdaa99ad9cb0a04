"""The capacity fields real tables use (#19 item 3), each against arithmetic done by hand.

Every case plans a small spec through `plan_files` (as `ddb2bigtable plan` does) and
checks the node counts, the why a reviewer reads, and the warnings. Figures: an SSD node
serves 17,000 reads/s and 14,000 writes/s at 1 KB (sizing.NODE_FIGURES); one cluster
runs at 70 % CPU; an eventual RCU is 2 reads/s of up to 4 KB, a WCU 1 write/s of 1 KB.
Each spec below is refused by the schema without its feature, so each test fails
without it.
"""

from __future__ import annotations

import math
import textwrap

import pytest

from ddb2bigtable.plan import pricing
from ddb2bigtable.plan.model import ClusterPlan, StagePlan
from ddb2bigtable.plan.planner import plan_files
from ddb2bigtable.spec.errors import InputError

ONE_REGION = {"failover_headroom": False}


def spec(source: str, instance: str = "shop-fields") -> str:
    """A one-table spec; `source` may join parts indented differently (each is dedented)."""
    parts = [textwrap.dedent(part).strip() for part in source.split("\n\n")]
    body = textwrap.indent("\n".join(parts), " " * 6)
    return (f"version: 1\ninstance:\n  id: {instance}\ntables:\n  - id: orders\n    source:\n"
            f"      table: Orders\n      key: {{partition: {{name: customerId, type: S}}}}\n{body}\n")


def plan(project, source: str, stage: dict | None = None) -> StagePlan:
    return plan_files(project({"shop": spec(source)}, {**ONE_REGION, **(stage or {})}), "test")


def cluster(p: StagePlan, gcp_region: str | None = None) -> ClusterPlan:
    (instance,) = p.instances
    found = [c for c in instance.clusters if gcp_region is None or c.gcp_region == gcp_region]
    assert len(found) == 1, [c.gcp_region for c in instance.clusters]
    return found[0]


def nodes(load: float, target: float = 0.70) -> int:
    return max(1, math.ceil(load / target - 1e-9))


def codes(p: StagePlan) -> list[str]:
    return [w.code for w in p.warnings]


# --- separate read and write autoscaling ------------------------------------------------

def test_fixed_reads_with_autoscaled_writes(project):
    p = plan(project, """
        region: us-east-1
        reads: 17000
        writes: 7000
        autoscaling: {min_writes: 1400, max_writes: 14000}""")
    reads = 17000 * 2 / 17000                      # 2 nodes of reads at every level
    c = cluster(p)
    assert c.autoscaling is not None
    assert c.autoscaling.min_nodes == nodes(reads + 1400 / 14000) == 3   # 2.1 / 0.7
    assert c.autoscaling.max_nodes == nodes(reads + 14000 / 14000) == 5  # 3.0 / 0.7 = 4.29
    assert c.nodes == nodes(reads + 7000 / 14000) == 4                   # 2.5 / 0.7 = 3.57
    assert "outside-autoscaling" not in codes(p)


def test_separate_targets_lower_the_cpu_target_by_the_lowest_scaling_dimension(project):
    p = plan(project, """
        region: us-east-1
        reads: 1000
        writes: 1000
        autoscaling: {min_reads: 100, max_reads: 2000, min_writes: 100, max_writes: 2000,
                      read_target_utilization: 40, write_target_utilization: 60}""")
    assert cluster(p).cpu_target == 40
    # a fixed dimension's target does not count: only writes scale here, at 50 %
    p = plan(project, """
        region: us-east-1
        reads: 1000
        writes: 1000
        autoscaling: {min_writes: 100, max_writes: 2000, write_target_utilization: 50}""")
    assert cluster(p).cpu_target == 50


def test_gsi_autoscaling_makes_the_cluster_autoscale_within_the_index_range(project):
    p = plan(project, """
        region: us-east-1
        reads: 1
        writes: 1
        gsis:
          - name: by-day
            key: {partition: {name: day, type: S}}
            reads: 1700
            writes: 1400
            autoscaling: {min_writes: 1400, max_writes: 28000}""")
    table = 1 * 2 / 17000 + 1 / 14000
    view_reads = 1700 * 2 / 17000                  # 0.2 nodes, fixed
    c = cluster(p)
    assert c.autoscaling is not None
    assert c.autoscaling.min_nodes == nodes(table + view_reads + 1400 / 14000) == 1
    assert c.autoscaling.max_nodes == nodes(table + view_reads + 28000 / 14000) == 4  # 2.2 / 0.7 = 3.14


# --- on-demand maximum throughput -------------------------------------------------------

ON_DEMAND = """
    region: us-east-1
    billing: on_demand
    peak: {{reads_per_second: {peak}, writes_per_second: 1400}}
    average: {{reads_per_second: 1700, writes_per_second: 140}}
"""


def test_max_throughput_caps_the_peak_and_says_so(project):
    capped = plan(project, ON_DEMAND.format(peak=34000) + "\n\nmax_throughput: {reads_per_second: 17000}")
    same = plan(project, ON_DEMAND.format(peak=17000))
    c, reference = cluster(capped), cluster(same)
    assert c.autoscaling is not None and reference.autoscaling is not None
    assert c.autoscaling.max_nodes == reference.autoscaling.max_nodes == nodes(17000 * 2 / 17000 + 1400 / 14000)
    assert c.nodes == reference.nodes
    assert "peak 34,000 capped at 17,000 RRU/s" in c.why
    (warning,) = [w for w in capped.warnings if w.code == "peak-above-max"]
    assert "34,000 RRU/s is above its on-demand max throughput 17,000" in warning.message


def test_gsi_max_throughput_caps_every_table_write_counted_for_the_index(project):
    p = plan(project, ON_DEMAND.format(peak=1700) + """

gsis:
  - name: by-day
    key: {partition: {name: day, type: S}}
    reads: 100
    max_throughput: {writes_per_second: 700}""")
    (view,) = [s for s in cluster(p).load if s.table == "orders/by-day"]
    assert view.write_units == 700
    assert "peak 1,400 capped at 700 WRU/s" in view.note


# --- warm throughput --------------------------------------------------------------------

def test_warm_throughput_is_a_floor_for_the_autoscaling_minimum(project):
    source = """
        region: us-east-1
        reads: 1700
        writes: 1400
        autoscaling: {min_reads: 170, max_reads: 17000, min_writes: 140, max_writes: 1400}"""
    cold = cluster(plan(project, source))
    warm = cluster(plan(project, source + "\n\nwarm_throughput: {reads_per_second: 8500}"))
    assert cold.autoscaling is not None and warm.autoscaling is not None
    assert cold.autoscaling.min_nodes == nodes(170 * 2 / 17000 + 140 / 14000) == 1
    assert warm.autoscaling.min_nodes == nodes(8500 * 2 / 17000 + 140 / 14000) == 2   # 1.01 / 0.7 = 1.44
    assert warm.autoscaling.max_nodes == cold.autoscaling.max_nodes
    assert "warm throughput raises the min reads to 8,500 units/s" in warm.autoscaling.why


# --- features Bigtable has no equivalent for ---------------------------------------------

def test_multi_region_strong_consistency_warns_loudly_and_the_witness_gets_no_cluster(project):
    p = plan(project, """
        region: us-east-1
        reads: 100
        writes: 100
        replicas: [{region: us-west-2}]
        multi_region_consistency: strong
        witness_region: us-east-2""")
    (instance,) = p.instances
    assert sorted(c.gcp_region for c in instance.clusters) == ["us-east4", "us-west1"]
    (warning,) = [w for w in p.warnings if w.code == "no-strong-multi-region"]
    assert "BIGTABLE HAS NO EQUIVALENT" in warning.message
    assert "single-cluster app profile" in warning.message and "us-east-1" in warning.message
    assert "witness region us-east-2 holds no data" in warning.message
    # the plan has no single-cluster serving profile here: the warning must not imply one exists
    assert "the plan creates no such profile" in warning.message and "`txn-us-east4` for us-east-1" in warning.message
    assert [a.id for a in instance.app_profiles] == ["serving", "migration-load"]
    with_txn = plan(project, """
        region: us-east-1
        reads: 100
        writes: 100
        conditional_writes: true
        replicas: [{region: us-west-2}]
        multi_region_consistency: strong
        witness_region: us-east-2""")
    (warning,) = [w for w in with_txn.warnings if w.code == "no-strong-multi-region"]
    assert "the plan's `txn-us-east4` profile is that single-cluster profile" in warning.message
    assert "txn-us-east4" in [a.id for a in with_txn.instances[0].app_profiles]


def test_contributor_insights_and_kinesis_say_what_to_use_instead(project):
    p = plan(project, """
        region: us-east-1
        reads: 100
        writes: 100
        contributor_insights: true
        kinesis_streams: [arn:aws:kinesis:us-east-1:123456789012:stream/orders]""")
    found = {w.code: w.message for w in p.warnings}
    assert "Key Visualizer" in found["contributor-insights"]
    assert "change stream" in found["kinesis-stream"] and "stream: new_and_old_images" in found["kinesis-stream"]


# --- per-replica settings ------------------------------------------------------------------

def test_a_replica_scales_its_reads_within_its_own_range(project):
    p = plan(project, """
        region: us-east-1
        reads: 1700
        writes: 14
        autoscaling: {min_reads: 1700, max_reads: 17000, min_writes: 14, max_writes: 14}
        replicas:
          - region: eu-west-1
            autoscaling: {min_reads: 8500, max_reads: 34000}""")
    home, europe = cluster(p, "us-east4"), cluster(p, "europe-west1")
    assert home.autoscaling is not None and europe.autoscaling is not None
    writes = 14 / 14000
    assert home.autoscaling.max_nodes == nodes(17000 * 2 / 17000 + writes) == 3
    assert europe.autoscaling.max_nodes == nodes(34000 * 2 / 17000 + writes) == 6
    assert europe.autoscaling.min_nodes == nodes(8500 * 2 / 17000 + writes) == 2


def test_a_replica_gives_a_gsi_its_own_reads(project):
    p = plan(project, """
        region: us-east-1
        reads: 1
        writes: 1
        gsis: [{name: by-day, key: {partition: {name: day, type: S}}, reads: 1, writes: 1}]
        replicas:
          - region: eu-west-1
            gsis: [{name: by-day, reads: 17000}]""")
    home, europe = cluster(p, "us-east4"), cluster(p, "europe-west1")
    (view,) = [s for s in europe.load if s.table == "orders/by-day"]
    assert view.read_units == 17000
    assert europe.nodes == nodes(17000 * 2 / 17000 + 2 * 1 / 17000 + 2 * 1 / 14000) == 3
    assert home.nodes == 1


def test_a_replica_table_class_prices_its_storage_and_warns(project):
    p = plan(project, """
        region: us-east-1
        reads: 10
        writes: 10
        storage_gb: 100
        replicas: [{region: eu-west-1, table_class: standard_infrequent_access}]""")
    (instance,) = p.instances
    lines = {line.item: line for line in instance.cost.dynamodb}
    assert lines["orders eu-west-1: storage"].unit_price == pricing.dynamodb("eu-west-1", "storage_ia_gb_month").value
    assert lines["orders us-east-1: storage"].unit_price == pricing.dynamodb("us-east-1", "storage_gb_month").value
    assert any(w.code == "infrequent-access" and "eu-west-1" in w.message for w in p.warnings)


def test_a_replica_with_pitr_gives_the_table_backups(project):
    p = plan(project, """
        region: us-east-1
        reads: 10
        writes: 10
        storage_gb: 10
        replicas: [{region: eu-west-1, point_in_time_recovery: {enabled: true, recovery_period_days: 7}}]""")
    (instance,) = p.instances
    (table,) = instance.tables
    assert table.backup is not None and table.backup.retention_days == 7
    assert "on in eu-west-1 7 days, off in us-east-1" in table.backup.why
    items = [line.item for line in instance.cost.dynamodb]
    assert "orders eu-west-1: PITR" in items and "orders us-east-1: PITR" not in items


# --- refused combinations (located; tests/broken_specs has one file per message) ----------

@pytest.mark.parametrize(("source", "message"), [
    ("region: us-east-1\nreads: 1\nwrites: 1\nreplicas: [{region: us-west-2}]\nmulti_region_consistency: strong",
     "exactly 3 regions"),
    ("region: us-east-1\nreads: 1\nwrites: 1\nwitness_region: us-east-2", "a witness region is for"),
    ("region: us-east-1\nreads: 1\nwrites: 1\nmax_throughput: {reads_per_second: 5}", "on-demand maximum"),
])
def test_refused(project, source: str, message: str):
    with pytest.raises(InputError) as error:
        plan(project, source)
    assert any(message in p.message and p.line for p in error.value.problems), error.value
