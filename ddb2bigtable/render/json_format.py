"""The stable JSON form of a plan (`plan --format json`, version 1; see docs/json-formats.md).

Written out field by field rather than with `asdict`, so renaming a dataclass field can
never silently change what pipelines parse.
"""

from __future__ import annotations

from typing import Any

from ..plan.model import (
    AlertPlan,
    AppProfilePlan,
    ClusterPlan,
    CostEstimate,
    CostLine,
    FamilyPlan,
    InstancePlan,
    OperationsPlan,
    PlanWarning,
    ServePlan,
    StagePlan,
    TablePlan,
)

FORMAT_VERSION = 1


def _cluster(c: ClusterPlan) -> dict[str, Any]:
    auto = c.autoscaling
    return {
        "id": c.id, "zone": c.zone, "region": c.gcp_region, "serves_aws_regions": list(c.aws_regions),
        "storage_type": c.storage_type, "nodes": c.nodes, "cpu_target": c.cpu_target,
        "autoscaling": None if auto is None else {
            "min_nodes": auto.min_nodes, "max_nodes": auto.max_nodes, "cpu_target": auto.cpu_target,
            "storage_target_gib": auto.storage_target_gib, "why": auto.why},
        "storage_gib": c.storage_gib, "kms_key_name": c.kms_key_name,
        "load": [{"table": s.table, "reads_per_second": round(s.reads_per_second, 3),
                  "reads_per_node": round(s.reads_per_node, 3), "writes_per_second": round(s.writes_per_second, 3),
                  "writes_per_node": round(s.writes_per_node, 3), "nodes": round(s.nodes, 6),
                  "read_units": round(s.read_units, 3), "write_units": round(s.write_units, 3),
                  "read_conversion": s.read_conversion, "write_conversion": s.write_conversion,
                  "note": s.note} for s in c.load],
        "load_by_level": {level: round(nodes, 6) for level, nodes in c.levels},
        "why": c.why,
    }


def _family(f: FamilyPlan) -> dict[str, Any]:
    return {"name": f.name, "gc": {"max_age_seconds": f.gc.max_age_seconds, "max_versions": f.gc.max_versions,
                                   "mode": f.gc.mode}, "aggregate": f.aggregate, "why": f.why}


def _table(t: TablePlan) -> dict[str, Any]:
    return {
        "id": t.id, "source_table": t.source_table, "source_regions": list(t.source_regions),
        "families": [_family(f) for f in t.families],
        "change_stream_retention_hours": t.change_stream_retention_hours,
        "backup": None if t.backup is None else {"frequency_hours": t.backup.frequency_hours,
                                                 "retention_days": t.backup.retention_days, "why": t.backup.why},
        "deletion_protection": t.deletion_protection,
        "materialized_views": [{"id": v.id, "gsi": v.gsi, "query": v.query, "why": v.why}
                               for v in t.materialized_views],
        "storage_gib": t.storage_gib, "ttl_attribute": t.ttl_attribute, "why": t.why,
    }


def _profile(p: AppProfilePlan) -> dict[str, Any]:
    return {"id": p.id, "routing": p.routing, "cluster_ids": list(p.cluster_ids), "row_affinity": p.row_affinity,
            "allow_transactional_writes": p.allow_transactional_writes, "priority": p.priority, "why": p.why}


def _line(line: CostLine) -> dict[str, Any]:
    return {"item": line.item, "quantity": line.quantity, "unit": line.unit, "unit_price": line.unit_price,
            "monthly_usd": line.monthly_usd, "source": line.source, "as_of": line.as_of,
            "estimate": line.estimate, "note": line.note, "origin": line.origin, "sku": line.sku or None,
            "list_unit_price": line.list_unit_price, "list_monthly_usd": line.list_monthly_usd,
            "discount": line.discount or None, "why": line.why or None}


def _cost(c: CostEstimate) -> dict[str, Any]:
    return {"currency": "USD", "hours_per_month": c.hours_per_month,
            "bigtable_monthly_usd": c.bigtable_monthly_usd, "dynamodb_monthly_usd": c.dynamodb_monthly_usd,
            "bigtable_list_monthly_usd": c.bigtable_list_monthly_usd,
            "dynamodb_list_monthly_usd": c.dynamodb_list_monthly_usd,
            "estimate": c.estimate, "bigtable": [_line(x) for x in c.bigtable],
            "dynamodb": [_line(x) for x in c.dynamodb]}


def _instance(i: InstancePlan) -> dict[str, Any]:
    return {
        "id": i.id, "display_name": i.display_name, "spec": i.spec_file, "storage_type": i.storage_type,
        "node_scaling_factor": i.node_scaling_factor, "deletion_protection": i.deletion_protection,
        "labels": dict(i.labels), "clusters": [_cluster(c) for c in i.clusters],
        "tables": [_table(t) for t in i.tables],
        # Tables ddb2bigtable makes in every instance beside the spec's (the record of attribute types):
        # `pulumi up` creates them too, so a reviewer sees them; a field of their own keeps `tables` the spec's.
        "metadata_tables": [_table(t) for t in i.metadata_tables],
        "app_profiles": [_profile(p) for p in i.app_profiles],
        "cost": _cost(i.cost), "operations": _operations(i.operations),
    }


def _operations(o: OperationsPlan | None) -> dict[str, Any] | None:
    if o is None:
        return None
    return {"enabled": o.enabled, "channels": list(o.channels), "why": o.why,
            "alerts": [_alert(a) for a in o.alerts]}


def _alert(a: AlertPlan) -> dict[str, Any]:
    return {"id": a.id, "kind": a.kind, "metric": a.metric, "resource": a.resource, "filter": a.filter,
            "denominator": a.denominator, "aligner": a.aligner, "threshold": a.threshold,
            "duration_seconds": a.duration_seconds, "severity": a.severity, "why": a.why}


def _warning(w: PlanWarning) -> dict[str, Any]:
    return {"code": w.code, "instance": w.instance, "table": w.table, "cluster": w.cluster, "message": w.message}


def to_json(plan: StagePlan) -> dict[str, Any]:
    return {"version": FORMAT_VERSION, "stage": plan.stage, "project": plan.project, "emulator": plan.emulator,
            "instances": [_instance(i) for i in plan.instances],
            "warnings": [_warning(w) for w in plan.warnings], "serve": _serve(plan.serve)}


def _serve(s: ServePlan | None) -> dict[str, Any] | None:
    if s is None:
        return None
    return {"where": s.where, "service": s.service, "project": s.project, "regions": list(s.regions), "image": s.image,
            "command": list(s.command), "port": s.port, "workers": s.workers, "cpu": s.cpu,
            "startup_cpu_boost": s.startup_cpu_boost, "memory": s.memory,
            "concurrency": s.concurrency, "min_instances": s.min_instances, "max_instances": s.max_instances,
            "signing": s.signing, "invokers": list(s.invokers), "keys_env": s.keys_env,
            "keys_secret": s.keys_secret, "keys_secret_version": s.keys_secret_version, "ingress": s.ingress,
            "service_account_id": s.service_account_id, "instances": list(s.instances),
            "app_profile": s.app_profile, "deletion_protection": s.deletion_protection, "labels": dict(s.labels),
            "why": s.why, "reasons": [{"figure": f, "why": w} for f, w in s.reasons],
            "alerts": [_alert(a) for a in s.alerts], "alert_channels": list(s.alert_channels)}
