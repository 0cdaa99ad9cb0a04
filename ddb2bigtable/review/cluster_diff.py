"""What a change does to an instance's clusters: the change lines, and each moved cluster's two plans.

A cluster's plan carries the whole sizing arithmetic in its why (a thousand characters and
more on a multi-table instance). A change line carries only the figure that moved and, in
`brief`, the one clause that moved it (the table whose load grew, the CPU target, the
storage), so a pull-request table stays readable; `ClusterMove` keeps both plans so the
renderers can fold the full arithmetic and draw nodes before and after.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..plan.model import ClusterPlan, InstancePlan
from .change import Change, Flag


@dataclass(frozen=True)
class ClusterMove:
    """One cluster of an instance whose clusters changed, before and after (None: absent on that side)."""

    instance: str
    region: str
    before: ClusterPlan | None
    after: ClusterPlan | None

    @property
    def scope(self) -> str:
        return f"{self.instance}/cluster {self.region}"

    @property
    def moved(self) -> bool:
        """True when its expected node count or its range changed (or it came or went)."""
        a, b = self.before, self.after
        return a is None or b is None or (a.nodes_text, a.nodes) != (b.nodes_text, b.nodes)


def _level(c: ClusterPlan, name: str) -> float:
    return dict(c.levels).get(name, 0.0)


def sizing_brief(a: ClusterPlan, b: ClusterPlan) -> str:
    """The clauses that explain a node change: load (and the table that moved it most), CPU target, storage."""
    clauses = []
    load_a, load_b = _level(a, "sized"), _level(b, "sized")
    if abs(load_a - load_b) >= 0.005:
        shares_a = {s.table: s.nodes for s in a.load}
        shares_b = {s.table: s.nodes for s in b.load}
        table = max(shares_a.keys() | shares_b.keys(),
                    key=lambda t: (abs(shares_b.get(t, 0.0) - shares_a.get(t, 0.0)), t))
        clauses.append(f"load {load_a:.2f} → {load_b:.2f} nodes at 100 % CPU "
                       f"({table} {shares_a.get(table, 0.0):.2f} → {shares_b.get(table, 0.0):.2f})")
    else:
        moved = [f"{name} {_level(a, name):.2f} → {_level(b, name):.2f}" for name in ("min", "expected", "max")
                 if abs(_level(a, name) - _level(b, name)) >= 0.005]
        if moved:
            clauses.append("load at " + ", ".join(moved) + " nodes")
    if a.cpu_target != b.cpu_target:
        clauses.append(f"CPU target {a.cpu_target} % → {b.cpu_target} %")
    if round(a.storage_gib) != round(b.storage_gib):
        clauses.append(f"storage {a.storage_gib:,.0f} → {b.storage_gib:,.0f} GiB")
    return "; ".join(clauses) or "the stage's limits moved: see the arithmetic"


def _replaced(where: str, what: str, before: str, after: str, reason: str) -> Change:
    flag: Flag = "DESTRUCTIVE"
    return Change(where, what, before, after, flag, f"changing {reason} replaces the whole instance and its data",
                  "replaces the instance and its data")


def cluster_changes(scope: str, old: InstancePlan, new: InstancePlan) -> tuple[list[Change], list[ClusterMove]]:
    out: list[Change] = []
    before = {c.gcp_region: c for c in old.clusters}
    after = {c.gcp_region: c for c in new.clusters}
    moves = [ClusterMove(scope, region, before.get(region), after.get(region))
             for region in [*before, *(r for r in after if r not in before)]]
    for region in sorted(before.keys() - after.keys()):
        c = before[region]
        out.append(Change(f"{scope}/cluster {region}", "cluster removed", f"{c.zone}, {c.nodes_text} nodes",
                          "removed", "RISK", f"{region} loses its replica: its reads move to the other clusters"))
    for region in sorted(after.keys() - before.keys()):
        c = after[region]
        out.append(Change(f"{scope}/cluster {region}", "cluster added", "absent", f"{c.zone}, {c.nodes_text} nodes",
                          None, "every table of the instance is replicated to it"))
    for region in sorted(before.keys() & after.keys()):
        a, b = before[region], after[region]
        where = f"{scope}/cluster {region}"
        if a.zone != b.zone:
            out.append(_replaced(where, "zone", a.zone, b.zone, "a cluster's zone"))
        if a.storage_type != b.storage_type:
            out.append(_replaced(where, "storage type", a.storage_type, b.storage_type, "storage type"))
        if a.kms_key_name != b.kms_key_name:
            out.append(_replaced(where, "KMS key", a.kms_key_name or "Google-managed",
                                 b.kms_key_name or "Google-managed", "the CMEK key"))
        if a.nodes_text != b.nodes_text or a.nodes != b.nodes:
            kind = "autoscaling" if b.autoscaling else "nodes"
            out.append(Change(where, kind, a.nodes_text + (f" (expect {a.nodes})" if a.autoscaling else ""),
                              b.nodes_text + (f" (expect {b.nodes})" if b.autoscaling else ""), None, b.why,
                              sizing_brief(a, b)))
        if a.cpu_target != b.cpu_target:
            out.append(Change(where, "CPU target", f"{a.cpu_target} %", f"{b.cpu_target} %", None,
                              _cpu_clause(b), _cpu_clause(b)))
        if a.storage_gib != b.storage_gib:
            out.append(Change(where, "storage", f"{a.storage_gib:,.0f} GiB", f"{b.storage_gib:,.0f} GiB", None,
                              "every table of the instance is stored in full on every cluster"))
    return out, moves if any(m.moved for m in moves) else []


def _cpu_clause(c: ClusterPlan) -> str:
    """The plan's own words for its CPU target (`CPU target 35 % (70 % x (2-1)/2 so survivors ...)`)."""
    start = c.why.find("CPU target ")
    end = c.why.find(". ", start)
    return c.why[start:end] if start >= 0 and end > start else f"CPU target {c.cpu_target} %"
