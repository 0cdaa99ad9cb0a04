"""What a change does to each stage: two plans in, the differences a reviewer must see out.

Pure comparison of `StagePlan`s. Each change names where it is, before and after, and a
flag where it matters: DESTRUCTIVE when data is deleted or the instance is replaced
(pulumi-gcp replaces the whole instance when a cluster's zone, storage type, KMS key or
the node scaling factor changes), RISK when capacity or storage runs short.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..plan.model import (
    AlertPlan,
    AppProfilePlan,
    ClusterPlan,
    GcPolicy,
    InstancePlan,
    OperationsPlan,
    StagePlan,
    TablePlan,
)
from ..plan.sizing import NODE_FIGURES

Flag = Literal["DESTRUCTIVE", "RISK"] | None
Status = Literal["changed", "unchanged", "added", "removed"]
STORAGE_RISK = 0.9  # storage per node above 90 % of the target leaves no room before the floor


@dataclass(frozen=True)
class Change:
    scope: str  # "shop-global/cluster us-east4", "shop-global/table orders/family cf"
    what: str
    before: str
    after: str
    flag: Flag = None
    why: str = ""


@dataclass(frozen=True)
class StageDiff:
    stage: str
    status: Status
    changes: tuple[Change, ...]
    nodes_before: int
    nodes_after: int
    bigtable_before: float
    bigtable_after: float
    dynamodb_before: float
    dynamodb_after: float

    @property
    def destructive(self) -> int:
        return sum(c.flag == "DESTRUCTIVE" for c in self.changes)

    @property
    def risks(self) -> int:
        return sum(c.flag == "RISK" for c in self.changes)

    @property
    def bigtable_delta(self) -> float:
        return round(self.bigtable_after - self.bigtable_before, 2)

    @property
    def bigtable_percent(self) -> float | None:
        return None if not self.bigtable_before else 100 * self.bigtable_delta / self.bigtable_before


def _nodes(c: ClusterPlan) -> str:
    return str(c.nodes) if c.autoscaling is None else f"{c.autoscaling.min_nodes}-{c.autoscaling.max_nodes}"


def _tightened(old: GcPolicy, new: GcPolicy) -> bool:
    """True when the new rule collects cells the old one kept."""
    def stricter(a: int | None, b: int | None) -> bool:
        return b is not None and (a is None or b < a)
    if old.mode != new.mode and None not in (old.max_age_seconds, old.max_versions):
        return new.mode == "union"
    return stricter(old.max_age_seconds, new.max_age_seconds) or stricter(old.max_versions, new.max_versions)


def _clusters(scope: str, old: InstancePlan, new: InstancePlan) -> list[Change]:
    out: list[Change] = []
    before = {c.gcp_region: c for c in old.clusters}
    after = {c.gcp_region: c for c in new.clusters}
    for region in before.keys() - after.keys():
        c = before[region]
        out.append(Change(f"{scope}/cluster {region}", "cluster removed", f"{c.zone}, {_nodes(c)} nodes", "-",
                          "RISK", f"{region} loses its replica: its reads move to the other clusters"))
    for region in sorted(after.keys() - before.keys()):
        c = after[region]
        out.append(Change(f"{scope}/cluster {region}", "cluster added", "-", f"{c.zone}, {_nodes(c)} nodes",
                          None, "every table of the instance is replicated to it"))
    for region in sorted(before.keys() & after.keys()):
        a, b = before[region], after[region]
        where = f"{scope}/cluster {region}"
        replaced: Flag = "DESTRUCTIVE"
        if a.zone != b.zone:
            out.append(Change(where, "zone", a.zone, b.zone, replaced,
                              "changing a cluster's zone replaces the whole instance and its data"))
        if a.storage_type != b.storage_type:
            out.append(Change(where, "storage type", a.storage_type, b.storage_type, replaced,
                              "changing storage type replaces the whole instance and its data"))
        if a.kms_key_name != b.kms_key_name:
            out.append(Change(where, "KMS key", a.kms_key_name or "Google-managed", b.kms_key_name or "Google-managed",
                              replaced, "changing the CMEK key replaces the whole instance and its data"))
        if _nodes(a) != _nodes(b) or a.nodes != b.nodes:
            kind = "autoscaling" if b.autoscaling else "nodes"
            out.append(Change(where, kind, _nodes(a) + (f" (expect {a.nodes})" if a.autoscaling else ""),
                              _nodes(b) + (f" (expect {b.nodes})" if b.autoscaling else ""), None, b.why))
        if a.cpu_target != b.cpu_target:
            out.append(Change(where, "CPU target", f"{a.cpu_target} %", f"{b.cpu_target} %"))
        if a.storage_gib != b.storage_gib:
            out.append(Change(where, "storage", f"{a.storage_gib:,.0f} GiB", f"{b.storage_gib:,.0f} GiB"))
    return out


def _table(scope: str, old: TablePlan, new: TablePlan) -> list[Change]:
    where = f"{scope}/table {new.id}"
    out: list[Change] = []
    families_before = {f.name: f for f in old.families}
    families_after = {f.name: f for f in new.families}
    for name in sorted(families_before.keys() - families_after.keys()):
        out.append(Change(f"{where}/family {name}", "family removed", families_before[name].gc.describe(), "-",
                          "DESTRUCTIVE", "removing a column family deletes every cell in it"))
    for name in sorted(families_after.keys() - families_before.keys()):
        out.append(Change(f"{where}/family {name}", "family added", "-", families_after[name].gc.describe()))
    for name in sorted(families_before.keys() & families_after.keys()):
        a, b = families_before[name].gc, families_after[name].gc
        if a != b:
            tightened = _tightened(a, b)
            out.append(Change(f"{where}/family {name}", "GC policy", a.describe(), b.describe(),
                              "DESTRUCTIVE" if tightened else None,
                              "the new rule collects existing cells the old one kept" if tightened
                              else "the new rule keeps more"))
    if old.ttl_attribute != new.ttl_attribute:
        out.append(Change(where, "TTL attribute", old.ttl_attribute or "none", new.ttl_attribute or "none",
                          "DESTRUCTIVE", "cell timestamps hold the old attribute's expiry: cells expire on the old "
                          "schedule (or at once) until the table is reloaded"))
    if old.change_stream_retention_hours != new.change_stream_retention_hours:
        out.append(Change(where, "change stream", f"{old.change_stream_retention_hours or 0} h",
                          f"{new.change_stream_retention_hours or 0} h"))
    if old.backup != new.backup:
        out.append(Change(where, "backups", f"{old.backup.retention_days} d" if old.backup else "none",
                          f"{new.backup.retention_days} d" if new.backup else "none"))
    if old.deletion_protection != new.deletion_protection:
        out.append(Change(where, "deletion protection", str(old.deletion_protection), str(new.deletion_protection)))
    views_before = {v.id for v in old.materialized_views}
    views_after = {v.id for v in new.materialized_views}
    for view in sorted(views_before ^ views_after):
        added = view in views_after
        out.append(Change(f"{where}/view {view}", "view added" if added else "view removed",
                          "-" if added else view, view if added else "-"))
    return out


def _routing(p: AppProfilePlan) -> str:
    text = f"{p.routing} {','.join(p.cluster_ids)} {p.priority}"
    return text + (" row-affinity" if p.row_affinity else "") + (" transactional" if p.allow_transactional_writes
                                                                else "")


def _instance(old: InstancePlan, new: InstancePlan) -> list[Change]:
    scope = new.id
    out = _clusters(scope, old, new)
    if old.node_scaling_factor != new.node_scaling_factor:
        out.append(Change(scope, "node scaling factor", f"{old.node_scaling_factor}X", f"{new.node_scaling_factor}X",
                          "DESTRUCTIVE", "changing the node scaling factor replaces the whole instance and its data"))
    tables_before = {t.id: t for t in old.tables}
    tables_after = {t.id: t for t in new.tables}
    for table_id in sorted(tables_before.keys() - tables_after.keys()):
        out.append(Change(f"{scope}/table {table_id}", "table removed", table_id, "-", "DESTRUCTIVE",
                          "removing a table deletes its data"))
    for table_id in sorted(tables_after.keys() - tables_before.keys()):
        out.append(Change(f"{scope}/table {table_id}", "table added", "-", tables_after[table_id].source_table))
    for table_id in sorted(tables_before.keys() & tables_after.keys()):
        out += _table(scope, tables_before[table_id], tables_after[table_id])
    profiles_before = {p.id: p for p in old.app_profiles}
    profiles_after = {p.id: p for p in new.app_profiles}
    for pid in sorted(profiles_before.keys() | profiles_after.keys()):
        a, b = profiles_before.get(pid), profiles_after.get(pid)
        if a is None or b is None or _routing(a) != _routing(b):
            out.append(Change(f"{scope}/app profile {pid}", "routing", _routing(a) if a else "-",
                              _routing(b) if b else "-"))
    return out + _alerts(scope, old.operations, new.operations)


def _alerts(scope: str, old: OperationsPlan | None, new: OperationsPlan | None) -> list[Change]:
    """Alerts turned on or off, added or removed, and thresholds or durations that moved:
    on-call sees in the pull request when "normal" is redefined."""
    before = {a.id: a for a in old.alerts} if old and old.enabled else {}
    after = {a.id: a for a in new.alerts} if new and new.enabled else {}
    out = []
    for aid in sorted(before.keys() | after.keys()):
        a, b = before.get(aid), after.get(aid)
        where = f"{scope}/alert {aid}"
        if a is None and b is not None:
            out.append(Change(where, "alert added", "-", _rule(b), None, b.why))
        elif b is None and a is not None:
            out.append(Change(where, "alert removed", _rule(a), "-"))
        elif a is not None and b is not None and (a.threshold, a.duration_seconds) != (b.threshold, b.duration_seconds):
            out.append(Change(where, "alert threshold", _rule(a), _rule(b), None, b.why))
    if old and new and old.enabled and new.enabled and old.channels != new.channels:
        out.append(Change(f"{scope}/alerts", "notification channels", ", ".join(old.channels) or "none",
                          ", ".join(new.channels) or "none"))
    return out


def _rule(a: AlertPlan) -> str:
    return f"> {a.threshold:g} for {a.duration_seconds}s"


def _risks(plan: StagePlan) -> list[Change]:
    out = [Change(w.instance, "capacity below the model's need", "", "", "RISK", w.message)
           for w in plan.warnings if w.code == "node-cap"]
    for i in plan.instances:
        for c in i.clusters:
            low = c.autoscaling.min_nodes if c.autoscaling else c.nodes
            target = NODE_FIGURES[c.storage_type].storage_target_gib
            if c.storage_gib / (low * target) > STORAGE_RISK:
                out.append(Change(f"{i.id}/cluster {c.gcp_region}", "storage near the floor",
                                  "", f"{c.storage_gib / low:,.0f} GiB per node", "RISK",
                                  f"above {STORAGE_RISK:.0%} of the {target:,} GiB storage target per node: "
                                  f"growth will force more nodes"))
    return out


def _totals(plan: StagePlan | None) -> tuple[int, float, float]:
    """Nodes and monthly costs; an emulator stage costs nothing, so it never moves a cost
    delta or trips `--fail-on cost-increase` (its plan still shows what the cloud would charge)."""
    if plan is None:
        return 0, 0.0, 0.0
    nodes = sum(c.nodes for i in plan.instances for c in i.clusters)
    if plan.emulator:
        return nodes, 0.0, 0.0
    return (nodes,
            round(sum(i.cost.bigtable_monthly_usd for i in plan.instances), 2),
            round(sum(i.cost.dynamodb_monthly_usd for i in plan.instances), 2))


def diff_stage(stage: str, old: StagePlan | None, new: StagePlan | None) -> StageDiff:
    changes: list[Change] = []
    if old is not None and new is not None:
        before = {i.id: i for i in old.instances}
        after = {i.id: i for i in new.instances}
        for iid in sorted(before.keys() - after.keys()):
            changes.append(Change(iid, "instance removed", iid, "-", "DESTRUCTIVE",
                                  "removing an instance deletes every table in it"))
        for iid in sorted(after.keys() - before.keys()):
            changes.append(Change(iid, "instance added", "-", iid))
        for iid in sorted(before.keys() & after.keys()):
            changes += _instance(before[iid], after[iid])
        if changes:  # risks and warnings are news only where something changed
            old_risks = _risks(old)
            changes += [r for r in _risks(new) if r not in old_risks]
            known = {(w.code, w.instance, w.table, w.message) for w in old.warnings}
            changes += [Change(w.instance + (f"/table {w.table}" if w.table else ""), f"new warning: {w.code}", "",
                               "", None, w.message)
                        for w in new.warnings if (w.code, w.instance, w.table, w.message) not in known
                        and w.code != "node-cap"]
    elif old is not None:
        changes = [Change(i.id, "instance removed", i.id, "-", "DESTRUCTIVE",
                          f"stage {stage} is gone: its instances are deleted") for i in old.instances]
    elif new is not None:
        changes = [Change(i.id, "instance added", "-", i.id) for i in new.instances]
    status: Status = ("added" if old is None else "removed" if new is None else "changed" if changes
                      else "unchanged")
    nodes_before, bigtable_before, dynamodb_before = _totals(old)
    nodes_after, bigtable_after, dynamodb_after = _totals(new)
    if status == "unchanged" and (bigtable_before, dynamodb_before) != (bigtable_after, dynamodb_after):
        status = "changed"  # prices moved with the price table
    return StageDiff(stage, status, tuple(changes), nodes_before, nodes_after, bigtable_before, bigtable_after,
                     dynamodb_before, dynamodb_after)


def summary(diffs: list[StageDiff]) -> str:
    """`prod: +$1,412/month (+18 %), staging: no change`."""
    parts = []
    for d in diffs:
        if d.status == "unchanged":
            parts.append(f"{d.stage}: no change")
            continue
        percent = d.bigtable_percent
        if abs(d.bigtable_delta) < 0.5:
            text = f"{d.stage}: {len(d.changes)} change(s), same cost"
        else:
            money = f"{'+' if d.bigtable_delta >= 0 else '-'}${abs(d.bigtable_delta):,.0f}/month"
            text = f"{d.stage}: {money}" + (f" ({percent:+.0f} %)" if percent is not None else f" ({d.status})")
        if d.destructive:
            text += f", {d.destructive} DESTRUCTIVE"
        parts.append(text)
    return ", ".join(parts)
