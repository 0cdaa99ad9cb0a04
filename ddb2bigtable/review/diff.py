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
    AppProfilePlan,
    GcPolicy,
    InstancePlan,
    OperationsPlan,
    StagePlan,
    TablePlan,
)
from ..plan.operations import rule_text
from .change import Change
from .cluster_diff import ClusterMove, cluster_changes
from .news import news
from .serve_diff import serve_changes

Status = Literal["changed", "unchanged", "added", "removed"]


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
    # Every cluster of each instance whose clusters moved, before and after: the chart and the arithmetic.
    clusters: tuple[ClusterMove, ...] = ()

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


def _tightened(old: GcPolicy, new: GcPolicy) -> bool:
    """True when the new rule collects cells the old one kept."""
    def stricter(a: int | None, b: int | None) -> bool:
        return b is not None and (a is None or b < a)
    if old.mode != new.mode and None not in (old.max_age_seconds, old.max_versions):
        return new.mode == "union"
    return stricter(old.max_age_seconds, new.max_age_seconds) or stricter(old.max_versions, new.max_versions)


def _table(scope: str, old: TablePlan, new: TablePlan) -> list[Change]:
    where = f"{scope}/table {new.id}"
    out: list[Change] = []
    families_before = {f.name: f for f in old.families}
    families_after = {f.name: f for f in new.families}
    for name in sorted(families_before.keys() - families_after.keys()):
        out.append(Change(f"{where}/family {name}", "family removed", families_before[name].gc.describe(), "removed",
                          "DESTRUCTIVE", "removing a column family deletes every cell in it"))
    for name in sorted(families_after.keys() - families_before.keys()):
        out.append(Change(f"{where}/family {name}", "family added", "absent", families_after[name].gc.describe()))
    for name in sorted(families_before.keys() & families_after.keys()):
        kind_a, kind_b = families_before[name].aggregate, families_after[name].aggregate
        if kind_a != kind_b:
            out.append(Change(f"{where}/family {name}", "family type", kind_a or "plain", kind_b or "plain",
                              "DESTRUCTIVE", "Bigtable cannot convert an existing family to another type "
                              "(cloud.google.com/bigtable/docs/data-types, read 2026-11-25): it must be dropped and "
                              "created again, which deletes every cell in it; reload the table afterwards",
                              "a new type means dropping the family: its cells are deleted"))
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
                          "absent" if added else view, view if added else "removed"))
    queries_before = {v.id: v.query for v in old.materialized_views}
    for view in sorted(v.id for v in new.materialized_views if queries_before.get(v.id, v.query) != v.query):
        out.append(Change(f"{where}/view {view}", "view query", "base query", "new query", "RISK",
                          "a materialized view's query cannot change in place: pulumi up deletes the view and builds "
                          "it again from the table, and the index's queries through serve fail until it is built; "
                          "under deletion protection the up fails until the view is unprotected",
                          "replaced: rebuilt from the table"))
    return out


def _routing(p: AppProfilePlan) -> str:
    text = f"{p.routing} {','.join(p.cluster_ids)} {p.priority}"
    return text + (" row-affinity" if p.row_affinity else "") + (" transactional" if p.allow_transactional_writes
                                                                else "")


def _instance(old: InstancePlan, new: InstancePlan) -> tuple[list[Change], list[ClusterMove]]:
    scope = new.id
    out, moves = cluster_changes(scope, old, new)
    if old.node_scaling_factor != new.node_scaling_factor:
        out.append(Change(scope, "node scaling factor", f"{old.node_scaling_factor}X", f"{new.node_scaling_factor}X",
                          "DESTRUCTIVE", "changing the node scaling factor replaces the whole instance and its data"))
    tables_before = {t.id: t for t in (*old.tables, *old.metadata_tables)}  # all that pulumi up makes
    tables_after = {t.id: t for t in (*new.tables, *new.metadata_tables)}
    for table_id in sorted(tables_before.keys() - tables_after.keys()):
        out.append(Change(f"{scope}/table {table_id}", "table removed", table_id, "removed", "DESTRUCTIVE",
                          "removing a table deletes its data"))
    for table_id in sorted(tables_after.keys() - tables_before.keys()):
        out.append(Change(f"{scope}/table {table_id}", "table added", "absent", tables_after[table_id].source_table))
    for table_id in sorted(tables_before.keys() & tables_after.keys()):
        out += _table(scope, tables_before[table_id], tables_after[table_id])
    profiles_before = {p.id: p for p in old.app_profiles}
    profiles_after = {p.id: p for p in new.app_profiles}
    for pid in sorted(profiles_before.keys() | profiles_after.keys()):
        a, b = profiles_before.get(pid), profiles_after.get(pid)
        if a is None or b is None or _routing(a) != _routing(b):
            out.append(Change(f"{scope}/app profile {pid}", "routing", _routing(a) if a else "absent",
                              _routing(b) if b else "removed"))
    return out + _alerts(scope, old.operations, new.operations), moves


# Why a derived threshold moved, in one clause: each follows a figure of its cluster's plan.
_FOLLOWS = {"cpu": "follows the cluster's CPU target", "at-max": "follows the autoscaling maximum",
            "storage": "follows the planned storage share per node"}


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
            out.append(Change(where, "alert added", "absent", rule_text(b), None, b.why))
        elif b is None and a is not None:
            out.append(Change(where, "alert removed", rule_text(a), "removed"))
        elif a is not None and b is not None and (a.threshold, a.duration_seconds) != (b.threshold, b.duration_seconds):
            out.append(Change(where, "alert threshold", rule_text(a), rule_text(b), None, b.why,
                              _FOLLOWS.get(b.kind, "")))
    if old and new and old.enabled and new.enabled and old.channels != new.channels:
        out.append(Change(f"{scope}/alerts", "notification channels", ", ".join(old.channels) or "none",
                          ", ".join(new.channels) or "none"))
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


def _made(i: InstancePlan) -> str:
    """An added instance as `pulumi up` makes it: its id and every table, ddb2bigtable's own included."""
    return f"{i.id} (tables {', '.join(t.id for t in (*i.tables, *i.metadata_tables))})"


def _whole(i: InstancePlan, gone: bool) -> list[ClusterMove]:
    """The clusters of an instance that comes or goes, for the chart and the arithmetic."""
    return [ClusterMove(i.id, c.gcp_region, c if gone else None, None if gone else c) for c in i.clusters]


def diff_stage(stage: str, old: StagePlan | None, new: StagePlan | None) -> StageDiff:
    changes: list[Change] = []
    moves: list[ClusterMove] = []
    if old is not None and new is not None:
        before = {i.id: i for i in old.instances}
        after = {i.id: i for i in new.instances}
        for iid in sorted(before.keys() - after.keys()):
            changes.append(Change(iid, "instance removed", iid, "removed", "DESTRUCTIVE",
                                  "removing an instance deletes every table in it"))
            moves += _whole(before[iid], gone=True)
        for iid in sorted(after.keys() - before.keys()):
            changes.append(Change(iid, "instance added", "absent", _made(after[iid])))
            moves += _whole(after[iid], gone=False)
        for iid in sorted(before.keys() & after.keys()):
            instance_changes, instance_moves = _instance(before[iid], after[iid])
            changes += instance_changes
            moves += instance_moves
        changes += serve_changes(old.serve, new.serve)
        changes += news(old, new)  # a warning alone is news too (a table made Standard-IA, say)
    elif old is not None:
        changes = [Change(i.id, "instance removed", i.id, "removed", "DESTRUCTIVE",
                          f"stage {stage} is gone: its instances are deleted") for i in old.instances]
        moves = [m for i in old.instances for m in _whole(i, gone=True)]
    elif new is not None:
        changes = [Change(i.id, "instance added", "absent", _made(i)) for i in new.instances]
        moves = [m for i in new.instances for m in _whole(i, gone=False)]
    status: Status = ("added" if old is None else "removed" if new is None else "changed" if changes
                      else "unchanged")
    nodes_before, bigtable_before, dynamodb_before = _totals(old)
    nodes_after, bigtable_after, dynamodb_after = _totals(new)
    if status == "unchanged" and (bigtable_before, dynamodb_before) != (bigtable_after, dynamodb_after):
        status = "changed"  # prices moved with the price table
    return StageDiff(stage, status, tuple(changes), nodes_before, nodes_after, bigtable_before, bigtable_after,
                     dynamodb_before, dynamodb_after, tuple(moves))


def _cost_move(cloud: str, before: float, after: float) -> str:
    """`Bigtable unchanged`, `DynamoDB +$57/month (+5 %)`: each cost names its cloud."""
    delta = round(after - before, 2)
    if abs(delta) < 0.5:
        return f"{cloud} unchanged"
    percent = f" ({100 * delta / before:+.0f} %)" if before else ""
    return f"{cloud} {'+' if delta > 0 else '-'}${abs(delta):,.0f}/month{percent}"


def stage_summary(d: StageDiff) -> str:
    """One stage in one line: `prod: 21 changes, Bigtable -$215/month (-1 %), DynamoDB -$7,391/month
    (-26 %), 1 DESTRUCTIVE, 2 RISK`. "Cost" alone would mean Bigtable's only, so both clouds are named."""
    if d.status == "unchanged":
        return f"{d.stage}: no change"
    count = len(d.changes)
    parts = [f"{count} change{'s' if count != 1 else ''}" if count else "prices only",
             _cost_move("Bigtable", d.bigtable_before, d.bigtable_after),
             _cost_move("DynamoDB", d.dynamodb_before, d.dynamodb_after)]
    if parts[1:] == ["Bigtable unchanged", "DynamoDB unchanged"]:
        parts[1:] = ["Bigtable and DynamoDB cost unchanged"]
    parts += [f"{d.destructive} DESTRUCTIVE"] if d.destructive else []
    parts += [f"{d.risks} RISK"] if d.risks else []
    if d.status in ("added", "removed"):
        parts.insert(0, f"stage {d.status}")
    return f"{d.stage}: " + ", ".join(parts)


def summary(diffs: list[StageDiff]) -> str:
    """Every stage's line, joined by `; ` (a comma separates the items of one stage):
    `prod: 2 changes, Bigtable +$1,412/month (+18 %), DynamoDB unchanged; staging: no change`."""
    return "; ".join(stage_summary(d) for d in diffs)
