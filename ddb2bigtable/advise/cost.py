"""The cost findings: instances that carry less than one node of load, priced merged; and an
instance whose clusters are all at Bigtable's one-node minimum, with the instances of the
specs given that could hold its tables at no node more.

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

from ..plan import sizing
from ..plan.cost import amount, at_minimum, expected_load
from ..plan.model import ClusterPlan, InstancePlan
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


def _room(host: ClusterPlan, guest: ClusterPlan) -> bool:
    """The host cluster takes the guest's load and storage without a node more."""
    return sizing.node_need(expected_load(host) + expected_load(guest), host.cpu_target,
                            host.storage_gib + guest.storage_gib, host.storage_type) <= host.nodes


def _hosts(small: InstancePlan, candidates: list[tuple[Spec, InstancePlan]]) -> list[tuple[Spec, InstancePlan]]:
    """Instances with a cluster of the same storage in each of `small`'s regions, each with room;
    those that would copy the tables to fewer other regions first."""
    out = []
    for spec, host in candidates:
        by_region = {c.gcp_region: c for c in host.clusters}
        if host.storage_type == small.storage_type and all(
                c.gcp_region in by_region and _room(by_region[c.gcp_region], c) for c in small.clusters):
            out.append((spec, host))
    return sorted(out, key=lambda pair: len(pair[1].clusters))


def _named(small: InstancePlan, hosts: list[tuple[Spec, InstancePlan]]) -> str:
    """`video-library (specs/video.yaml); shop-global (specs/shop.yaml; it also copies them to
    europe-west1)`: each host, its spec, and the regions it would add."""
    own = {c.gcp_region for c in small.clusters}
    parts = []
    for spec, host in hosts:
        extra = sorted({c.gcp_region for c in host.clusters} - own)
        also = f"; it also copies them to {', '.join(extra)}" if extra else ""
        parts.append(f"{host.id} ({spec.path}{also})")
    return "; ".join(parts)


def minimum_nodes(specs: list[Spec], instances: list[InstancePlan]) -> list[Finding]:
    """An instance whose every cluster runs Bigtable's minimum because its tables ask for less:
    its cost is those nodes whatever the traffic. Other tables' instances that could hold its
    tables with no node more are named (with the regions they would add)."""
    pairs = list(zip(specs, instances, strict=True))
    out = []
    for spec, small in pairs:
        if not small.clusters or not all(at_minimum(c, spec.instance.node_scaling_factor) for c in small.clusters):
            continue
        need = max(sizing.node_need(expected_load(c), c.cpu_target, c.storage_gib, c.storage_type)
                   for c in small.clusters)
        tables = ", ".join(t.id for t in spec.tables)
        clusters = f"{small.storage_type.upper()} clusters in {', '.join(c.gcp_region for c in small.clusters)}"
        hosts = _hosts(small, [(s, i) for s, i in pairs if i is not small])
        where = (f"one of these, which have {clusters} with room for them: {_named(small, hosts)}" if hosts else
                 f"none of the specs given has one with {clusters} and room: add them to such an instance's spec "
                 "(give its spec to advise to check)")
        runs = "its cluster runs" if len(small.clusters) == 1 else f"each of its {len(small.clusters)} clusters runs"
        snippet = "".join([f"# in {hosts[0][0].path} (instance {hosts[0][1].id}), under tables:\n",
                           *(f"  - id: {t.id}   # from {spec.path}\n" for t in spec.tables)]) if hosts else ""
        out.append(Finding(
            "minimum-node", "info", small.id,
            f"{small.id} ({tables}) asks for {need:.2g} of a node, yet {runs} Bigtable's minimum of "
            f"{small.clusters[0].nodes} node ({sizing.MIN_NODES_SOURCE}): "
            f"${small.cost.bigtable_monthly_usd:,.2f}/month against DynamoDB's ${small.cost.dynamodb_monthly_usd:,.2f}",
            TABLES,
            f"put {tables} on an instance other tables already pay for: {where}; every table keeps its families and GC",
            snippet))
    return out
