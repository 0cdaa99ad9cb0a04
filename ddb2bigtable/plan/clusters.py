"""Cluster sizing: the load each cluster carries, its CPU target, nodes or autoscaling.

Every cluster applies every write (replication), and serves the reads of the DynamoDB
replicas whose AWS region maps to its GCP region. The numbers in `why` are the ones used,
rounded for reading; `ClusterPlan.load` keeps them unrounded.
"""

from __future__ import annotations

from ..spec.ids import cluster_id
from ..spec.model import Spec, TableSpec
from ..spec.stage import Stage
from . import capacity, sizing
from .capacity import Level
from .model import AutoscalingPlan, ClusterPlan, LoadShare, PlanWarning
from .topology import Placement, kept_regions

# What each capacity level means, for the why (capacity.py defines them).
LEVEL_WORDS: dict[str, str] = {
    "sized": "provisioned capacity (on-demand: peak)",
    "min": "DynamoDB's autoscaling min (on-demand: average)",
    "expected": "expected capacity (provisioned units; on-demand: average)",
    "max": "DynamoDB's autoscaling max (on-demand: peak)",
}


def _conversion(per_op: tuple[float, int], item_kb: float, scale: float, consistency: str = "") -> str:
    """Why units and operations differ: consistency or transactions, item size, stage scale."""
    factor, size_divisor = per_op
    words = []
    if factor != 1:
        words.append(f"x {factor:g} {consistency}".rstrip())
    if size_divisor != 1:
        words.append(f"÷ {size_divisor} for {item_kb:g} KB items")
    if scale != 1:
        words.append(f"x {scale:g} stage scale")
    return ", ".join(words)


def _shares(table: TableSpec, placement: Placement, level: Level, stage: Stage,
            n_clusters: int, storage_type: str) -> list[LoadShare]:
    """The table's own share, then one per GSI (its view's rows are index-item sized)."""
    source = table.source
    kept = kept_regions(source, stage)
    parts = [(table.id, capacity.units(source, level), source.item_size_kb, capacity.limit_note(source))]
    for gsi in source.gsis:
        item_kb, how = capacity.gsi_item_kb(source, gsi)
        writes_how = ("" if gsi.writes is not None or source.billing != "on_demand"
                      else "; no writes given: every table write counted")
        limit = capacity.limit_note(source, gsi)
        parts.append((f"{table.id}/{gsi.name}", capacity.gsi_units(source, gsi, level), item_kb,
                      how + writes_how + (f"; {limit}" if limit else "")))
    shares = []
    for name, units, item_kb, note in parts:
        if kept:
            read_units = sum(units.reads[r] for r in placement.aws_regions if r in kept)
        else:  # no replica kept in this stage: its home reads spread over every cluster
            read_units = units.reads[source.region] / n_clusters
        scale = stage.capacity_scale
        shares.append(LoadShare(
            table=name,
            reads_per_second=capacity.read_ops(source, read_units, scale, item_kb),
            reads_per_node=sizing.reads_per_node(storage_type, item_kb),
            writes_per_second=capacity.write_ops(source, units.writes, scale, item_kb),
            writes_per_node=sizing.writes_per_node(storage_type, item_kb),
            read_units=read_units, write_units=units.writes,
            read_conversion=_conversion(sizing.read_units_per_op(source.read_consistency, item_kb), item_kb,
                                        scale, source.read_consistency),
            write_conversion=_conversion(sizing.write_units_per_op(source.write_mode, item_kb), item_kb,
                                         scale, source.write_mode),
            note=note))
    return shares


def _load(shares: list[LoadShare]) -> float:
    return sum(s.nodes for s in shares)


def _operations(units: float, ops: float, word: str, conversion: str, kind: str) -> str:
    if not conversion:
        return f"{ops:,.0f} {kind}/s"
    return f"{units:,.0f} {word} ({conversion}) = {ops:,.0f} {kind}/s"


def _describe_load(sized: list[LoadShare], levels: dict[Level, list[LoadShare]], on_demand: set[str]) -> str:
    """Every table's and view's sized arithmetic from DynamoDB's units (the JSON's `load`),
    busiest first, and its nodes of load at the other levels where they differ, so each
    level's total can be re-added."""
    others = {level: {s.table: s.nodes for s in shares} for level, shares in levels.items()}
    parts = []
    for s in sorted(sized, key=lambda s: s.nodes, reverse=True):
        demand = s.table.split("/")[0] in on_demand
        terms = []
        if s.reads_per_second:
            reads = _operations(s.read_units, s.reads_per_second, "RRU/s" if demand else "RCU", s.read_conversion,
                                "reads")
            terms.append(f"{reads} ÷ {s.reads_per_node:,.0f}")
        if s.writes_per_second:
            writes = _operations(s.write_units, s.writes_per_second, "WRU/s" if demand else "WCU",
                                 s.write_conversion, "writes")
            terms.append(f"{writes} ÷ {s.writes_per_node:,.0f}")
        text = f"{s.table} " + " + ".join(terms or ["idle"]) + f" = {s.nodes:.2f}"
        at = [(level, table_nodes[s.table]) for level, table_nodes in others.items()]
        if any(abs(n - s.nodes) >= 0.005 for _, n in at):
            text += " (" + ", ".join(f"{level} {n:.2f}" for level, n in at) + ")"
        if s.note:
            text += f" [{s.note}]"
        parts.append(text)
    return "; ".join(parts)


def _warm_words(spec: Spec) -> str:
    """Where warm throughput raised the min level, for the autoscaling why ("" if nowhere)."""
    notes = [f"{t.id}{'/' + g.name if g else ''}: {note}" for t in spec.tables
             for g in (None, *t.source.gsis) if (note := capacity.warm_note(t.source, g))]
    return f" [{'; '.join(notes)}: the table serves it at once, so the min does too]" if notes else ""


def _nodes_step(load: float, target: int, floor: int, factor: int) -> tuple[int, str]:
    """`sizing.nodes_for` with its arithmetic: load ÷ CPU target, then what raised it."""
    by_cpu = sizing.nodes_by_cpu(load, target)
    nodes = sizing.nodes_for(load, target, floor, factor)
    text = f"{load:.2f} ÷ {target} % = {load * 100 / target:.2f} → {by_cpu}"
    if floor > by_cpu:
        text += f", raised to the storage floor {floor}"
    if nodes > max(by_cpu, floor):
        text += f", rounded up to {nodes} for 2X node scaling"
    return nodes, text


def plan_clusters(spec: Spec, stage: Stage, placements: list[Placement], storage_type: str,
                  kms_keys: dict[str, str]) -> tuple[list[ClusterPlan], list[PlanWarning]]:
    instance_id = spec.instance.id + stage.instance_suffix
    factor = spec.instance.node_scaling_factor
    n = len(placements)
    source_targets = [target for t in spec.tables for target in capacity.autoscaling_targets(t.source)]
    target, target_why = sizing.cpu_target(n, stage.failover_headroom, source_targets)
    storage_gib = sum(t.source.storage_gb for t in spec.tables)
    floor = sizing.storage_floor(storage_gib, storage_type, factor)
    figures = sizing.NODE_FIGURES[storage_type]
    autoscaled = stage.autoscaling and any(capacity.scales(t.source) for t in spec.tables)
    cap = max(factor, stage.max_nodes_per_cluster - stage.max_nodes_per_cluster % factor)
    clusters, warnings = [], []
    on_demand = {t.id for t in spec.tables if t.source.billing == "on_demand"}
    for p in placements:
        def shares(level: Level, p: Placement = p) -> list[LoadShare]:
            return [share for t in spec.tables for share in _shares(t, p, level, stage, n, storage_type)]

        def nodes(level: Level) -> int:
            return sizing.nodes_for(_load(shares(level)), target, floor, factor)

        cid = cluster_id(instance_id, p.zone)
        sized = shares("sized")
        levels: dict[Level, list[LoadShare]] = (
            {level: shares(level) for level in ("min", "expected", "max")} if autoscaled else {})
        load = _load(sized)
        why = (f"load at {LEVEL_WORDS['sized']}: {_describe_load(sized, levels, on_demand)}; total {load:.2f} nodes at "
               f"100 % CPU. CPU target {target} % ({target_why}). Storage {storage_gib:,.0f} GiB ÷ "
               f"{figures.storage_target_gib:,} GiB/node target (limit {figures.storage_limit_gib:,}) → at least "
               f"{floor}. ")
        fixed, step = _nodes_step(load, target, floor, factor)
        auto = None
        if autoscaled:
            (lo, lo_step), (hi, hi_step) = (_nodes_step(_load(levels[lv]), target, floor, factor)
                                            for lv in ("min", "max"))
            lo, hi, raised = sizing.autoscaling_range(lo, hi, factor)
            auto_why = (f"min at {LEVEL_WORDS['min']}: {lo_step}{_warm_words(spec)}; "
                        f"max at {LEVEL_WORDS['max']}: {hi_step}")
            if raised:
                auto_why += f"; min raised to {lo} so max ≤ {sizing.AUTOSCALING_MAX_RATIO} x min"
            if hi > cap:
                warnings.append(PlanWarning("node-cap", instance_id, None,
                                            f"cluster {cid} may need {hi} nodes at max capacity; the stage caps it at "
                                            f"{cap} (max_nodes_per_cluster): raise the cap or the node quota",
                                            cid))
                hi, lo = cap, min(lo, cap)
                auto_why += f"; max capped at {cap} by the stage"
            auto = AutoscalingPlan(min_nodes=lo, max_nodes=hi, cpu_target=target,
                                   storage_target_gib=figures.storage_target_gib, why=auto_why)
            expected, step = _nodes_step(_load(levels["expected"]), target, floor, factor)
            fixed = min(hi, max(lo, expected))
            why += f"Buy autoscaling {lo}-{hi}; expected {fixed} at {LEVEL_WORDS['expected']}: {step}"
            if fixed != expected:
                why += f", kept within {lo}-{hi}"
        elif fixed > cap:
            warnings.append(PlanWarning("node-cap", instance_id, None,
                                        f"cluster {cid} needs {fixed} nodes; the stage caps it at {cap} "
                                        f"(max_nodes_per_cluster): it will be under-provisioned", cid))
            why += f"Needs {step}, capped at {cap} by the stage"
            fixed = cap
        else:
            why += f"Buy {fixed} {'node' if fixed == 1 else 'nodes'}: {step}"
        if storage_type == "hdd":
            reads_share = sum(s.reads_per_second / s.reads_per_node for s in sized)
            if reads_share > 0.1 * fixed:
                warnings.append(PlanWarning("hdd-reads", instance_id, None,
                                            f"cluster {cid} on HDD serves {reads_share:.2f} nodes' worth of reads "
                                            f"(> 10 % of its {fixed} nodes); HDD nodes read 500 rows/s against SSD's "
                                            f"17,000: expect high latency, or use SSD", cid))
        kms = next((kms_keys[r] for r in p.aws_regions if r in kms_keys), None)
        clusters.append(ClusterPlan(
            id=cid, zone=p.zone, gcp_region=p.gcp_region, aws_regions=p.aws_regions,
            storage_type=storage_type, nodes=fixed, autoscaling=auto, cpu_target=target,
            load=tuple(sized), levels=(("sized", load), *((lv, _load(sh)) for lv, sh in levels.items())),
            storage_gib=storage_gib, kms_key_name=kms, why=why,
        ))
    return clusters, warnings
