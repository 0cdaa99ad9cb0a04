"""Properties of the planner over generated specs (hypothesis).

Specs are built as dataclasses, past the loader, so the search explores the engine and
not YAML; the stage varies in scale, headroom, autoscaling, suffix and regions.
"""

from __future__ import annotations

import math
from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from ddb2bigtable.plan.planner import plan_stage
from ddb2bigtable.plan.sizing import NODE_FIGURES
from ddb2bigtable.spec.ids import id_problem
from ddb2bigtable.spec.model import (
    InstanceSpec,
    KeyAttribute,
    KeySchema,
    Rate,
    Replica,
    Source,
    SourceAutoscaling,
    Spec,
    TableSpec,
)
from ddb2bigtable.spec.regions import AWS_REGIONS
from ddb2bigtable.spec.stage import Stage

instance_ids = st.from_regex(r"[a-z][a-z0-9-]{4,20}[a-z0-9]", fullmatch=True)
regions = st.sampled_from(AWS_REGIONS)


@st.composite
def sources(draw, pool: list[str]) -> Source:
    home = draw(st.sampled_from(pool))
    others = [r for r in pool if r != home]
    replicas = draw(st.lists(st.sampled_from(others), max_size=3, unique=True)) if others else []
    billing = draw(st.sampled_from(["provisioned", "on_demand"]))
    key = KeySchema(KeyAttribute("pk", "S"), KeyAttribute("sk", "N"))
    common = dict(
        table="T", region=home, key=key, billing=billing,
        read_consistency=draw(st.sampled_from(["eventual", "strong", "transactional"])),
        write_mode=draw(st.sampled_from(["standard", "transactional"])),
        item_size_kb=draw(st.floats(0.1, 400)), storage_gb=draw(st.floats(0, 50_000)),
        replicas=tuple(Replica(r, draw(st.none() | st.integers(1, 100_000))) for r in replicas),
    )
    if billing == "on_demand":
        peak_r, peak_w = draw(st.floats(1, 500_000)), draw(st.floats(1, 200_000))
        return Source(**common, peak=Rate(peak_r, peak_w),
                      average=Rate(draw(st.floats(0, peak_r)), draw(st.floats(0, peak_w))))
    reads, writes = draw(st.integers(1, 200_000)), draw(st.integers(1, 80_000))
    auto = None
    if draw(st.booleans()):
        auto = SourceAutoscaling(min_reads=draw(st.integers(1, reads)), max_reads=draw(st.integers(reads, 400_000)),
                                 min_writes=draw(st.integers(1, writes)), max_writes=draw(st.integers(writes, 160_000)),
                                 target_utilization=draw(st.floats(20, 90)))
    return Source(**common, reads=reads, writes=writes, autoscaling=auto)


@st.composite
def specs(draw) -> Spec:
    pool = draw(st.lists(regions, min_size=1, max_size=8, unique=True))  # Bigtable: at most 8 clusters
    tables = tuple(TableSpec(id=f"t{i}", source=draw(sources(pool))) for i in range(draw(st.integers(1, 3))))
    instance = InstanceSpec(id=draw(instance_ids), storage=draw(st.sampled_from(["ssd", "hdd"])),
                            node_scaling_factor=draw(st.sampled_from([1, 2])))
    return Spec(path="generated.yaml", instance=instance, tables=tables)


@st.composite
def stages(draw) -> Stage:
    return Stage(name="gen", file="stacks/Pulumi.gen.yaml", gcp_project=None, specs=(),
                 instance_suffix=draw(st.sampled_from(["", "-dev", "-pr-1234"])),
                 capacity_scale=draw(st.sampled_from([0.01, 0.1, 0.5, 1.0, 2.0])),
                 regions=draw(st.sampled_from(["all", "home"])),
                 autoscaling=draw(st.booleans()), failover_headroom=draw(st.booleans()),
                 max_nodes_per_cluster=1000)


def cluster_counts(plan):
    return [c for i in plan.instances for c in i.clusters]


@settings(max_examples=150, deadline=None)
@given(specs(), stages(), st.floats(1.01, 5))
def test_more_capacity_never_gives_fewer_nodes(spec, stage, factor):
    def grown(s: Source) -> Source:
        if s.billing == "on_demand":
            return replace(s, peak=Rate(s.peak.reads_per_second * factor, s.peak.writes_per_second * factor),
                           average=Rate(s.average.reads_per_second * factor, s.average.writes_per_second * factor))
        auto = s.autoscaling and replace(s.autoscaling, min_reads=math.ceil(s.autoscaling.min_reads * factor),
                                         max_reads=math.ceil(s.autoscaling.max_reads * factor),
                                         min_writes=math.ceil(s.autoscaling.min_writes * factor),
                                         max_writes=math.ceil(s.autoscaling.max_writes * factor))
        return replace(s, reads=math.ceil(s.reads * factor), writes=math.ceil(s.writes * factor), autoscaling=auto,
                       replicas=tuple(replace(r, reads=r.reads and math.ceil(r.reads * factor)) for r in s.replicas))
    bigger = replace(spec, tables=tuple(replace(t, source=grown(t.source)) for t in spec.tables))
    before, after = cluster_counts(plan_stage(stage, [spec])), cluster_counts(plan_stage(stage, [bigger]))
    for a, b in zip(before, after, strict=True):
        assert b.nodes >= a.nodes or (a.autoscaling and b.autoscaling)
        if a.autoscaling and b.autoscaling:
            assert b.autoscaling.max_nodes >= a.autoscaling.max_nodes
        if a.autoscaling is None:
            assert b.nodes >= a.nodes


@settings(max_examples=200, deadline=None)
@given(specs(), stages())
def test_nodes_respect_the_storage_floor_the_10x_rule_and_2x_scaling(spec, stage):
    plan = plan_stage(stage, [spec])
    (instance,) = plan.instances
    storage = sum(t.source.storage_gb for t in spec.tables)
    floor = math.ceil(storage / NODE_FIGURES[instance.storage_type].storage_target_gib)
    for c in instance.clusters:
        counts = [c.nodes] + ([c.autoscaling.min_nodes, c.autoscaling.max_nodes] if c.autoscaling else [])
        assert min(counts) >= max(1, floor)
        if c.autoscaling:
            assert c.autoscaling.min_nodes <= c.nodes <= c.autoscaling.max_nodes
            assert c.autoscaling.max_nodes <= 10 * c.autoscaling.min_nodes
            assert 10 <= c.autoscaling.cpu_target <= 80
        if spec.instance.node_scaling_factor == 2:
            assert all(n % 2 == 0 for n in counts)


@settings(max_examples=200, deadline=None)
@given(specs(), stages())
def test_cluster_ids_are_valid_and_unique(spec, stage):
    (instance,) = plan_stage(stage, [spec]).instances
    ids = [c.id for c in instance.clusters]
    assert all(id_problem("cluster", i) is None for i in ids), ids
    assert len(set(ids)) == len(ids)
    assert id_problem("instance", instance.id) is None


@settings(max_examples=150, deadline=None)
@given(specs(), stages(), st.integers(1, 50_000))
def test_raising_one_figure_alone_never_lowers_any_count(spec, stage, extra):
    """Only `reads` of the first table grows (autoscaling bounds untouched): no count drops."""
    first = spec.tables[0]
    if first.source.billing == "on_demand":
        return
    source = first.source
    reads = source.reads + extra
    if source.autoscaling is not None:
        reads = min(reads, source.autoscaling.max_reads)
    grown = replace(spec, tables=(replace(first, source=replace(source, reads=reads)), *spec.tables[1:]))
    for a, b in zip(cluster_counts(plan_stage(stage, [spec])), cluster_counts(plan_stage(stage, [grown])),
                    strict=True):
        assert b.nodes >= a.nodes
        if a.autoscaling and b.autoscaling:
            assert b.autoscaling.min_nodes >= a.autoscaling.min_nodes
            assert b.autoscaling.max_nodes >= a.autoscaling.max_nodes
