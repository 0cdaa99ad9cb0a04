"""A plan as titled tables of text plus notes, shared by the markdown and terminal renderers.

Keeping the choice of columns here means a PR comment and a terminal show the same facts.
The long "why" texts go into notes under each table, so the tables stay narrow enough for
an 80-column terminal.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..plan.cost import amount
from ..plan.model import CostLine, InstancePlan, ServePlan, StagePlan
from ..plan.operations import MEANING, duration_text, threshold_text


@dataclass(frozen=True)
class Section:
    title: str
    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    notes: tuple[str, ...] = ()


def money(usd: float) -> str:
    return f"${usd:,.2f}"


def _cost_notes(lines: tuple[CostLine, ...]) -> tuple[str, ...]:
    """Each source once with every date its figures carry, each locked figure's SKU and
    effective date, then each estimate note once."""
    dates: dict[str, dict[str, None]] = {}
    for line in lines:
        dates.setdefault(line.source, {})[line.as_of] = None
    sources = tuple(f"source: {url} (as of {', '.join(sorted(days))})" for url, days in dates.items())
    skus = dict.fromkeys(f"lock: {line.price_key} = ${_list_price(line):g} per {line.unit}, SKU {line.sku}, "
                         f"effective {line.as_of}" for line in lines if line.origin == "lock")
    discounts = dict.fromkeys(f"discount: {note}" for line in lines for note in line.discount_notes)
    estimates = dict.fromkeys(f"estimate: {line.note}" for line in lines if line.estimate and line.note)
    reasons = tuple(line.why for line in lines if line.why)
    return (*reasons, *sources, *skus, *discounts, *estimates)


def _list_price(line: CostLine) -> float:
    return line.unit_price if line.list_unit_price is None else line.list_unit_price


def _unit_price(line: CostLine) -> str:
    """The price paid, and the list price beside it when a discount applies."""
    if line.list_unit_price is None:
        return f"${line.unit_price:g}"
    return f"${line.unit_price:.6g} (list ${line.list_unit_price:g})"


def instance_sections(i: InstancePlan) -> list[Section]:
    clusters = Section("Clusters", ("cluster", "serves", "disk", "nodes", "expected", "CPU"), tuple(
        (c.id, ", ".join(c.aws_regions), c.storage_type.upper(), c.nodes_text,
         str(c.nodes) if c.autoscaling else "-", f"{c.cpu_target} %")
        for c in i.clusters), tuple(
        f"{c.id} (zone {c.zone}): {c.why}" + (f". Autoscaling: {c.autoscaling.why}" if c.autoscaling else "")
        for c in i.clusters))
    tables = Section("Tables", ("table", "from", "families", "stream", "backups", "protected"), tuple(
        (t.id, t.source_table, ", ".join(f.name + (" (int64 Sum)" if f.aggregate else "") for f in t.families),
         f"{t.change_stream_retention_hours} h" if t.change_stream_retention_hours else "-",
         f"daily, {t.backup.retention_days} d" if t.backup else "-",
         "yes" if t.deletion_protection else "no")
        for t in i.tables), tuple(
        f"{t.id}: {t.why}" + "".join(f"; family {f.name} ({f.gc.describe()}): {f.why}" for f in t.families)
        + (f"; {t.backup.why}" if t.backup else "")
        + "".join(f"; view {v.id}: {v.why}" for v in t.materialized_views) for t in i.tables))
    # What `pulumi up` (and `up`) also makes in the instance: its own table beside the spec's, apart
    # so the spec's table keeps its columns.
    own = Section("Tables ddb2bigtable adds", ("table", "family", "GC rule", "protected"), tuple(
        (t.id, f.name, f.gc.describe(), "yes" if t.deletion_protection else "no")
        for t in i.metadata_tables for f in t.families), tuple(
        f"{t.id}: {t.why}" + "".join(f"; family {f.name}: {f.why}" for f in t.families) for t in i.metadata_tables))
    profiles = Section("App profiles", ("profile", "routing", "clusters", "priority"), tuple(
        (p.id, p.routing + (" + row affinity" if p.row_affinity else "")
         + (" + transactional writes" if p.allow_transactional_writes else ""),
         ", ".join(p.cluster_ids), p.priority)
        for p in i.app_profiles), tuple(f"{p.id}: {p.why}" for p in i.app_profiles))
    cost = i.cost
    flag = " (estimate)" if cost.estimate else ""
    discounted = any(line.discount for line in (*cost.bigtable, *cost.dynamodb))
    summary = Section("Monthly cost", ("", "Bigtable", "DynamoDB"), (
        ("total" + flag + (" after discounts" if discounted else ""), money(cost.bigtable_monthly_usd),
         money(cost.dynamodb_monthly_usd)),
        *((("list price", money(cost.bigtable_list_monthly_usd), money(cost.dynamodb_list_monthly_usd)),)
          if discounted else ())))
    lines = [Section(f"{service} cost lines", ("item", "quantity", "unit price", "monthly", "price"), tuple(
        (line.item, f"{amount(line.quantity)} {line.unit}", _unit_price(line), money(line.monthly_usd),
         line.origin) for line in group), _cost_notes(group))
        for service, group in (("Bigtable", cost.bigtable), ("DynamoDB", cost.dynamodb)) if group]
    return [clusters, tables, own, profiles, *_alerts(i), summary, *lines]


def _alerts(i: InstancePlan) -> list[Section]:
    """The alert table: one row per policy; each kind's metric and meaning once, in the notes."""
    o = i.operations
    if o is None or not o.enabled:
        return []
    rows = tuple((a.id.removesuffix(f"-{a.kind}"), a.kind, threshold_text(a), duration_text(a), a.severity.lower())
                 for a in o.alerts)
    channels = ", ".join(o.channels) or "none (set alerts.channels in the stack file)"
    kinds = {a.kind: f"{a.kind} ({a.metric}): {MEANING[a.kind]}" for a in o.alerts}
    return [Section("Alerts", ("on", "alert", "threshold", "for", "severity"), rows,
                    (f"notify: {channels}", *kinds.values()))]


def stage_totals(plan: StagePlan) -> Section:
    rows = [(i.id, str(sum(c.nodes for c in i.clusters)), money(i.cost.bigtable_monthly_usd),
             money(i.cost.dynamodb_monthly_usd)) for i in plan.instances]
    rows.append(("all", str(sum(c.nodes for i in plan.instances for c in i.clusters)),
                 money(sum(i.cost.bigtable_monthly_usd for i in plan.instances)),
                 money(sum(i.cost.dynamodb_monthly_usd for i in plan.instances))))
    estimate = any(i.cost.estimate for i in plan.instances)
    notes = ("nodes: expected counts; autoscaled clusters move within their range",) + (
        ("some prices are estimates from a reference region: see each instance's cost lines",) if estimate else ()) + (
        ("this stage runs on the Bigtable emulator and costs nothing; the figures are what the same plan "
         "would cost in the cloud",) if plan.emulator else ())
    where = f"GCP project {plan.project}" if plan.project else "no GCP project set (gcp:project)"
    return Section(f"Stage {plan.stage} ({where})", ("instance", "nodes", "Bigtable / month", "DynamoDB / month"),
                   tuple(rows), notes)


def serve_section(serve: ServePlan) -> Section:
    """The stage's DynamoDB-compatible endpoint: each figure, its why in the notes."""
    if serve.where == "local":
        rows: tuple[tuple[str, ...], ...] = (("runs", "beside the emulator"), ("signing", serve.signing))
    else:
        rows = (("service", f"{serve.service} (Cloud Run, {', '.join(serve.regions)})"), ("image", serve.image),
                ("instances", f"{serve.min_instances}-{serve.max_instances}"),
                ("size", f"{serve.cpu} vCPU, {serve.memory}, {serve.workers} worker(s), "
                         f"{serve.concurrency} requests at once"),
                ("signing", serve.signing), ("ingress", serve.ingress),
                ("runs as", f"{serve.service_account_id} (roles/bigtable.user on {', '.join(serve.instances)})"),
                ("command", " ".join(serve.command)),
                ("alerts", ", ".join(f"{a.kind.removeprefix('serve-')} > {a.threshold * 100:g} % for "
                                     f"{duration_text(a)}" for a in serve.alerts) or "none (alerts off)"))
    channels = ", ".join(serve.alert_channels) or "none (set alerts.channels in the stack file)"
    notes = (serve.why, *(f"{figure}: {why}" for figure, why in serve.reasons),
             *((f"alerts notify: {channels}",) if serve.alerts else ()),
             *(f"alert {a.id}: {a.why}" for a in serve.alerts))
    return Section("Serve", ("setting", "value"), rows, notes)
