"""The sizing model (docs/sizing.md): DynamoDB units -> operations -> per-node load -> nodes.

Pure arithmetic on plain numbers, so every step can be redone by hand (and is, in
`tests/plan/test_sizing_by_hand.py`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass


# Google, "Understand performance" / "Performance for typical workloads", 1 KB rows
# (cloud.google.com/bigtable/docs/performance, read 2026-11-21); storage per node and
# default autoscaling storage targets from "Autoscaling" and "Storage utilization per
# node" (cloud.google.com/bigtable/docs/autoscaling, .../quotas#storage-per-node, read
# 2026-11-21).
@dataclass(frozen=True)
class NodeFigures:
    reads_per_second: int
    writes_per_second: int
    storage_limit_gib: int
    storage_target_gib: int


NODE_FIGURES: dict[str, NodeFigures] = {
    "ssd": NodeFigures(reads_per_second=17_000, writes_per_second=14_000,
                       storage_limit_gib=5_120, storage_target_gib=2_560),
    "hdd": NodeFigures(reads_per_second=500, writes_per_second=10_000,
                       storage_limit_gib=16_384, storage_target_gib=8_192),
}
FIGURES_SOURCE = "cloud.google.com/bigtable/docs/performance, .../autoscaling (read 2026-11-21)"

# Google, "Instances, clusters, and nodes": "Each cluster has at least 1 node"
# (cloud.google.com/bigtable/docs/instances-clusters-nodes, read 2026-11-29). With 2X node
# scaling the smallest cluster is 2 nodes (`round_to_factor`).
MIN_NODES_SOURCE = "cloud.google.com/bigtable/docs/instances-clusters-nodes (read 2026-11-29)"

BASE_CPU_TARGET = 70  # percent; Google's recommended CPU for a single-cluster instance
CPU_TARGET_MIN, CPU_TARGET_MAX = 10, 80  # autoscaling accepts 10-80 %
AUTOSCALING_MAX_RATIO = 10  # Bigtable: max nodes <= 10 x min nodes

# DynamoDB: an RCU is one strongly consistent 4 KB read per second (two eventual, half a
# transactional); a WCU is one 1 KB write (half a transactional). AWS Developer Guide,
# "Read/write capacity mode" (read 2026-11-21).
READ_FACTOR = {"eventual": 2.0, "strong": 1.0, "transactional": 0.5}
WRITE_FACTOR = {"standard": 1.0, "transactional": 0.5}
READ_UNIT_KB, WRITE_UNIT_KB = 4, 1


def read_units_per_op(consistency: str, item_kb: float) -> tuple[float, int]:
    """(ops per unit for 4 KB, 4 KB units per item): `read_ops` divides by both, and the
    plan's why prints the same two numbers."""
    return READ_FACTOR[consistency], math.ceil(item_kb / READ_UNIT_KB)


def write_units_per_op(write_mode: str, item_kb: float) -> tuple[float, int]:
    """(ops per unit for 1 KB, 1 KB units per item), as `read_units_per_op`."""
    return WRITE_FACTOR[write_mode], math.ceil(item_kb / WRITE_UNIT_KB)


def read_ops(units: float, consistency: str, item_kb: float) -> float:
    """Reads/s that `units` RCU (or RRU/s) deliver for items of `item_kb`."""
    factor, per_item = read_units_per_op(consistency, item_kb)
    return units * factor / per_item


def write_ops(units: float, write_mode: str, item_kb: float) -> float:
    """Writes/s that `units` WCU (or WRU/s) deliver for items of `item_kb`."""
    factor, per_item = write_units_per_op(write_mode, item_kb)
    return units * factor / per_item


def reads_per_node(storage_type: str, item_kb: float) -> float:
    """R(s): Google's 1 KB figure scaled down for larger rows (never up for smaller)."""
    return NODE_FIGURES[storage_type].reads_per_second * min(1.0, 1.0 / item_kb)


def writes_per_node(storage_type: str, item_kb: float) -> float:
    return NODE_FIGURES[storage_type].writes_per_second * min(1.0, 1.0 / item_kb)


def cpu_target(clusters: int, failover_headroom: bool, source_targets: list[float]) -> tuple[int, str]:
    """The CPU a cluster may use, and why.

    With failover headroom the survivors of N clusters must absorb one failed cluster's
    reads, so each runs at 70 % x (N-1)/N. A DynamoDB autoscaling target below that is a
    promise the team made its users, so it lowers ours; it never raises it.
    """
    target = float(BASE_CPU_TARGET)
    why = "Google's single-cluster recommendation"
    if failover_headroom and clusters >= 2:
        target = BASE_CPU_TARGET * (clusters - 1) / clusters
        why = f"70 % x ({clusters}-1)/{clusters} so survivors absorb a failed cluster"
    if source_targets and min(source_targets) < target:
        target = min(source_targets)
        why += ", lowered to DynamoDB's autoscaling target"
    clamped = min(CPU_TARGET_MAX, max(CPU_TARGET_MIN, target))
    if clamped != target:
        why += f", clamped to {clamped:.0f} % (Bigtable allows {CPU_TARGET_MIN}-{CPU_TARGET_MAX} %)"
    return math.floor(clamped), why


def round_to_factor(nodes: int, scaling_factor: int) -> int:
    """2X node scaling only accepts multiples of 2."""
    return -(-nodes // scaling_factor) * scaling_factor


def storage_floor(storage_gib: float, storage_type: str, scaling_factor: int) -> int:
    by_storage = math.ceil(storage_gib / NODE_FIGURES[storage_type].storage_target_gib)
    return round_to_factor(max(1, by_storage), scaling_factor)


def nodes_by_cpu(load_nodes: float, cpu_target_percent: int) -> int:
    """ceil(load / target), at least 1. A tiny epsilon keeps 2.0000000001 (float noise from a
    sum of ratios) from becoming 3."""
    return max(1, math.ceil(load_nodes / (cpu_target_percent / 100) - 1e-9))


def nodes_for(load_nodes: float, cpu_target_percent: int, floor: int, scaling_factor: int) -> int:
    """max(1, ceil(load / target), storage floor), rounded up to the scaling factor."""
    return round_to_factor(max(nodes_by_cpu(load_nodes, cpu_target_percent), floor), scaling_factor)


def node_need(load_nodes: float, cpu_target_percent: int, storage_gib: float, storage_type: str) -> float:
    """The nodes a cluster's load and storage ask for before any rounding up or minimum:
    load ÷ CPU target, or storage ÷ the per-node storage target, whichever is more."""
    return max(load_nodes / (cpu_target_percent / 100), storage_gib / NODE_FIGURES[storage_type].storage_target_gib)


def autoscaling_range(min_nodes: int, max_nodes: int, scaling_factor: int) -> tuple[int, int, bool]:
    """(min, max, raised): max >= min, and min raised until max <= 10 x min."""
    max_nodes = max(max_nodes, min_nodes)
    needed = round_to_factor(math.ceil(max_nodes / AUTOSCALING_MAX_RATIO), scaling_factor)
    return max(min_nodes, needed), max_nodes, needed > min_nodes
