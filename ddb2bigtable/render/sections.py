"""A plan as titled tables of text, shared by the markdown and terminal renderers.

Keeping the choice of columns here means a PR comment and a terminal show the same facts.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..plan import ClusterPlan, InstancePlan, StagePlan


@dataclass(frozen=True)
class Section:
    title: str
    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


def money(usd: float) -> str:
    return f"${usd:,.2f}"


def nodes_text(c: ClusterPlan) -> str:
    if c.autoscaling is None:
        return str(c.nodes)
    a = c.autoscaling
    return f"{a.min_nodes}-{a.max_nodes} (expected {c.nodes})"


def instance_sections(i: InstancePlan) -> list[Section]:
    clusters = Section("Clusters", ("cluster", "zone", "serves", "storage", "nodes", "CPU target", "why"), tuple(
        (c.id, c.zone, ", ".join(c.aws_regions), c.storage_type.upper(), nodes_text(c), f"{c.cpu_target} %",
         c.why + (f" | autoscaling: {c.autoscaling.why}" if c.autoscaling else ""))
        for c in i.clusters))
    tables = Section("Tables", ("table", "from", "families (GC)", "change stream", "backups", "protected", "views"), tuple(
        (t.id, f"{t.source_table} ({', '.join(t.source_regions)})",
         "; ".join(f"{f.name}: {f.gc.describe()}" for f in t.families),
         f"{t.change_stream_retention_hours} h" if t.change_stream_retention_hours else "-",
         f"daily, {t.backup.retention_days} d" if t.backup else "-",
         "yes" if t.deletion_protection else "no",
         ", ".join(v.id for v in t.materialized_views) or "-")
        for t in i.tables))
    profiles = Section("App profiles", ("profile", "routing", "clusters", "priority", "why"), tuple(
        (p.id, p.routing + (" + row affinity" if p.row_affinity else "")
         + (" + transactional writes" if p.allow_transactional_writes else ""),
         ", ".join(p.cluster_ids), p.priority, p.why)
        for p in i.app_profiles))
    cost = i.cost
    flag = " (estimate)" if cost.estimate else ""
    summary = Section("Monthly cost", ("", "Bigtable", "DynamoDB"), (
        ("total" + flag, money(cost.bigtable_monthly_usd), money(cost.dynamodb_monthly_usd)),))
    lines = Section("Cost lines", ("service", "item", "quantity", "unit price", "monthly", "source"), tuple(
        (service, line.item, f"{line.quantity:,.2f} {line.unit}", f"${line.unit_price:g}", money(line.monthly_usd),
         f"{line.source} ({line.as_of})" + (f" — estimate: {line.note}" if line.estimate else ""))
        for service, group in (("Bigtable", cost.bigtable), ("DynamoDB", cost.dynamodb)) for line in group))
    return [clusters, tables, profiles, summary, lines]


def stage_totals(plan: StagePlan) -> Section:
    rows = [(i.id, str(sum(c.nodes for c in i.clusters)), money(i.cost.bigtable_monthly_usd),
             money(i.cost.dynamodb_monthly_usd)) for i in plan.instances]
    rows.append(("all", str(sum(c.nodes for i in plan.instances for c in i.clusters)),
                 money(sum(i.cost.bigtable_monthly_usd for i in plan.instances)),
                 money(sum(i.cost.dynamodb_monthly_usd for i in plan.instances))))
    return Section(f"Stage {plan.stage}", ("instance", "nodes", "Bigtable / month", "DynamoDB / month"), tuple(rows))
