"""`ddb2bigtable:bigtable:Table`: a table, one GC policy per family, its materialized views."""

from __future__ import annotations

import json

import pulumi
import pulumi_gcp as gcp

from ddb2bigtable.plan.model import INT64_SUM, FamilyPlan, GcPolicy, TablePlan

# pulumi-gcp's `column_families[].type` for the plan's aggregate kind: the provider's JSON
# form of Bigtable's Type (int64 Sum, big-endian inputs: what the codec writes and reads).
_FAMILY_TYPES = {INT64_SUM: json.dumps({"aggregateType": {"inputType": {"int64Type": {"encoding": {
    "bigEndianBytes": {}}}}, "sum": {}}}, sort_keys=True)}


def _duration(seconds: int) -> str:
    """Whole hours as hours (the provider's own form, so no perpetual diff), else seconds."""
    return f"{seconds // 3600}h" if seconds % 3600 == 0 else f"{seconds}s"


def gc_rules_json(policy: GcPolicy) -> str | None:
    """The provider's `gc_rules` JSON for a family, or None when the family keeps everything.

    One rule is written alone; two are combined with the plan's mode.
    """
    rules: list[dict[str, object]] = []
    if policy.max_age_seconds is not None:
        rules.append({"max_age": _duration(policy.max_age_seconds)})
    if policy.max_versions is not None:
        rules.append({"max_version": policy.max_versions})
    if not rules:
        return None
    document: dict[str, object] = {"rules": rules}
    if len(rules) > 1:
        document = {"mode": policy.mode, **document}
    return json.dumps(document, sort_keys=True)


def column_family(family: FamilyPlan) -> gcp.bigtable.TableColumnFamilyArgs:
    """The table's `column_families` entry; an aggregate family carries its type."""
    kind = None if family.aggregate is None else _FAMILY_TYPES[family.aggregate]
    return gcp.bigtable.TableColumnFamilyArgs(family=family.name, type=kind)


class BigtableTable(pulumi.ComponentResource):
    def __init__(self, name: str, table: TablePlan, instance: gcp.bigtable.Instance, project: str | None,
                 replicated: bool, opts: pulumi.ResourceOptions | None = None):
        super().__init__("ddb2bigtable:bigtable:Table", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        backup = table.backup
        self.table = gcp.bigtable.Table(
            name,
            name=table.id,
            instance_name=instance.name,
            project=project,
            column_families=[column_family(f) for f in table.families],
            change_stream_retention=(f"{table.change_stream_retention_hours}h"
                                     if table.change_stream_retention_hours else None),
            automated_backup_policy=None if backup is None else {
                "frequency": f"{backup.frequency_hours}h",
                "retention_period": f"{backup.retention_days * 24}h",
            },
            deletion_protection="PROTECTED" if table.deletion_protection else "UNPROTECTED",
            opts=pulumi.ResourceOptions(parent=self, protect=table.deletion_protection),
        )
        after_table = pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=[self.table]))
        self.gc_policies = []
        for family in table.families:
            rules = gc_rules_json(family.gc)
            if rules is None:
                continue  # Bigtable keeps every version of a family without a GC rule
            self.gc_policies.append(gcp.bigtable.GCPolicy(
                f"{name}-{family.name}",
                instance_name=instance.name,
                table=self.table.name,
                column_family=family.name,
                project=project,
                gc_rules=rules,
                ignore_warnings=True,
                # a replicated table's GC policy cannot be deleted, only abandoned
                deletion_policy="ABANDON" if replicated else None,
                opts=after_table,
            ))
        self.views = [
            gcp.bigtable.MaterializedView(
                f"{name}-{view.id}",
                instance=instance.name,
                materialized_view_id=view.id,
                query=view.query,
                project=project,
                deletion_protection=table.deletion_protection,
                opts=after_table,
            )
            for view in table.materialized_views
        ]
        self.register_outputs({"table": self.table.name})
