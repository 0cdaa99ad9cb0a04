"""The cost finding: instances that carry less than one node of load, priced merged.

An instance runs at least one node per cluster whatever its tables ask; several small
tables in several instances each pay for that node. The seeds keep similar data
together (few tables, a row-key prefix per dataset), and all tables of an instance share
its nodes, so the small instances of a stage fit in one. The saving is not a guess: the
merged instance (every small instance's tables in one spec, the first one's settings) is
planned by the planner and priced by the plan's own cost model, next to what the
instances cost apart. Instances are merged only with others on the same storage type and
the same cluster regions, so the merge changes no table's placement.
"""

from __future__ import annotations

from dataclasses import replace

from ..plan.cost import amount
from ..plan.model import InstancePlan
from ..plan.planner import plan_instance
from ..plan.price_lock import PriceLock
from ..spec.errors import InputError
from ..spec.model import Spec
from ..spec.stage import Stage
from .findings import TABLES, Finding


def load_nodes(instance: InstancePlan) -> float:
    """The most any cluster of the instance needs, in nodes at its CPU target (fractions kept)."""
    return max((sum(share.nodes for share in c.load) / (c.cpu_target / 100) for c in instance.clusters),
               default=0.0)


def consolidation(stage: Stage, specs: list[Spec], instances: list[InstancePlan],
                  lock: PriceLock | None = None) -> list[Finding]:
    """One finding per group of two or more instances under one node of load each."""
    groups: dict[tuple[str, tuple[str, ...]], list[tuple[Spec, InstancePlan]]] = {}
    for spec, instance in zip(specs, instances, strict=True):
        if load_nodes(instance) < 1:
            regions = tuple(sorted(c.gcp_region for c in instance.clusters))
            groups.setdefault((instance.storage_type, regions), []).append((spec, instance))
    return [finding for group in groups.values() if len(group) > 1
            for finding in _merged(stage, group, lock)]


def _merged(stage: Stage, group: list[tuple[Spec, InstancePlan]], lock: PriceLock | None) -> list[Finding]:
    first = group[0][0]
    merged = replace(first, path="(consolidated)", tables=tuple(t for spec, _ in group for t in spec.tables))
    try:
        shared, _ = plan_instance(merged, stage, lock)
    except InputError:
        return []  # the instances cannot share one (ids clash, CMEK differs): no advice
    apart = sum(i.cost.bigtable_monthly_usd for _, i in group)
    together = shared.cost.bigtable_monthly_usd
    if together >= apart:
        return []
    loads = ", ".join(f"{i.id} {amount(load_nodes(i))}" for _, i in group)
    nodes_apart = sum(c.nodes for _, i in group for c in i.clusters)
    nodes_together = sum(c.nodes for c in shared.clusters)
    return [Finding(
        "consolidate-instances", "info", group[0][1].id,
        f"stage {stage.name}: {len(group)} instances each need less than one node at their CPU target "
        f"(nodes of load: {loads}) yet pay for {nodes_apart} nodes (${apart:,.2f}/month); one shared instance "
        f"needs {nodes_together} (${together:,.2f}/month): ${apart - together:,.2f}/month less",
        TABLES,
        "move these tables into one spec (one instance; keep each table, or give similar datasets one table "
        "with a row-key prefix each, as Google advises); every table keeps its families and GC",
        "instance:\n  id: " + first.instance.id + "   # the shared instance\ntables:\n"
        + "".join(f"  - id: {t.id}   # from {spec.path}\n" for spec, _ in group for t in spec.tables))]
