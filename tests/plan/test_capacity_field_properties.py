"""Properties of the #19 capacity fields over generated specs (hypothesis).

A ceiling (`max_throughput`) can only lower what the plan buys, a floor
(`warm_throughput`) can only raise it, and plans with either keep the invariants every
plan keeps (storage floor, 10x rule, min <= expected <= max). Specs and stages come from
`test_sizing_properties`, so these explore the same space plus the new fields.
"""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from ddb2bigtable.plan.planner import plan_stage
from ddb2bigtable.spec.model import Source, Spec, Throughput

from .test_sizing_properties import cluster_counts, specs, stages

limits = st.builds(Throughput, st.none() | st.floats(1, 300_000), st.none() | st.floats(1, 300_000))


def _with(spec: Spec, change) -> Spec:
    return replace(spec, tables=tuple(replace(t, source=change(t.source)) for t in spec.tables))


@settings(max_examples=120, deadline=None)
@given(specs(), stages(), limits)
def test_a_max_throughput_never_raises_a_count(spec, stage, limit):
    def capped(s: Source) -> Source:
        return replace(s, max_throughput=limit) if s.billing == "on_demand" else s
    before = cluster_counts(plan_stage(stage, [spec]))
    after = cluster_counts(plan_stage(stage, [_with(spec, capped)]))
    for a, b in zip(before, after, strict=True):
        assert (b.autoscaling is None) == (a.autoscaling is None)
        if a.autoscaling and b.autoscaling:
            assert b.autoscaling.max_nodes <= a.autoscaling.max_nodes
        else:
            assert b.nodes <= a.nodes


@settings(max_examples=120, deadline=None)
@given(specs(), stages(), limits)
def test_a_warm_throughput_never_lowers_a_count_and_moves_only_the_min(spec, stage, warm):
    before = cluster_counts(plan_stage(stage, [spec]))
    after = cluster_counts(plan_stage(stage, [_with(spec, lambda s: replace(s, warm_throughput=warm))]))
    for a, b in zip(before, after, strict=True):
        if a.autoscaling is None:
            assert b.nodes == a.nodes  # a fixed cluster is sized at its capacity; warm is a floor for the min
            continue
        assert b.autoscaling is not None
        assert b.autoscaling.min_nodes >= a.autoscaling.min_nodes
        assert b.autoscaling.max_nodes >= a.autoscaling.max_nodes
        assert b.autoscaling.min_nodes <= b.nodes <= b.autoscaling.max_nodes
        assert b.autoscaling.max_nodes <= 10 * b.autoscaling.min_nodes or b.autoscaling.max_nodes == 1000


@settings(max_examples=120, deadline=None)
@given(specs(), stages(), st.sampled_from(["reads", "writes"]))
def test_fixing_one_dimension_keeps_the_plan_between_fixed_and_fully_scaled(spec, stage, fixed):
    """Dropping one dimension's autoscaling range (it stays at its provisioned units) never
    puts a cluster's min load below the fully scaled min load, nor its max above the fully
    scaled max, when the provisioned units lie inside the range. (The min node count may
    still drop: the 10x rule raises a min less when the max is lower.)"""
    def one_fixed(s: Source) -> Source:
        a = s.autoscaling
        if a is None or not (a.min_reads <= s.reads <= a.max_reads and a.min_writes <= s.writes <= a.max_writes):
            return s
        if any(r.reads is not None for r in s.replicas):  # a replica's own reads may lie outside the range
            return s
        bounds = {"min_reads": None, "max_reads": None} if fixed == "reads" else {"min_writes": None,
                                                                                    "max_writes": None}
        if fixed == "reads" and a.min_writes is None or fixed == "writes" and a.min_reads is None:
            return s
        return replace(s, autoscaling=replace(a, **bounds))
    before = cluster_counts(plan_stage(stage, [spec]))
    after = cluster_counts(plan_stage(stage, [_with(spec, one_fixed)]))
    for a, b in zip(before, after, strict=True):
        if a.autoscaling and b.autoscaling:
            assert b.autoscaling.max_nodes <= a.autoscaling.max_nodes
            before_load, after_load = dict(a.levels), dict(b.levels)
            assert after_load["min"] >= before_load["min"] - 1e-9
            assert after_load["max"] <= before_load["max"] + 1e-9
