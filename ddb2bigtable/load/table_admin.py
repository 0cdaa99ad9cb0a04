"""Creates a plan's tables, column families and GC rules through the table-admin API.

Used where Pulumi is not: the emulator (`up --stage local`) and `load --create-tables`.
Families are created first and their GC rules set afterwards with ModifyColumnFamilies:
the same calls work in the cloud, and the emulator only starts its garbage collector when
a GC rule arrives that way (seen with cbtemulator of Cloud SDK 528; a rule given at table
creation is stored but never applied).
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass

from google.cloud.bigtable import Client, column_family

from ..plan.model import GcPolicy, InstancePlan, TablePlan


@dataclass(frozen=True)
class AdminAction:
    table: str
    what: str  # "created table", "created family cf", "set GC of cf: ..."


def gc_rule(policy: GcPolicy) -> column_family.GarbageCollectionRule | None:
    rules: list[column_family.GarbageCollectionRule] = []
    if policy.max_age_seconds is not None:
        rules.append(column_family.MaxAgeGCRule(datetime.timedelta(seconds=policy.max_age_seconds)))
    if policy.max_versions is not None:
        rules.append(column_family.MaxVersionsGCRule(policy.max_versions))
    if not rules:
        return None
    if len(rules) == 1:
        return rules[0]
    combine = column_family.GCRuleUnion if policy.mode == "union" else column_family.GCRuleIntersection
    return combine(rules=rules)


def ensure_table(client: Client, instance_id: str, table: TablePlan) -> list[AdminAction]:
    """The table with the plan's families and GC rules, creating or updating what differs."""
    handle = client.instance(instance_id).table(table.id)
    actions = []
    if not handle.exists():
        handle.create()
        actions.append(AdminAction(table.id, "created table"))
    existing = handle.list_column_families()
    for family in table.families:
        rule = gc_rule(family.gc)
        if family.name not in existing:
            handle.column_family(family.name).create()
            actions.append(AdminAction(table.id, f"created family {family.name}"))
        elif existing[family.name].gc_rule == rule:
            continue
        if rule is not None:
            handle.column_family(family.name, gc_rule=rule).update()
            actions.append(AdminAction(table.id, f"set GC of {family.name}: {family.gc.describe()}"))
    return actions


def ensure_tables(project: str, instance: InstancePlan, table_ids: list[str] | None = None) -> list[AdminAction]:
    client = Client(project=project, admin=True)
    actions = []
    for table in instance.tables:
        if table_ids is None or table.id in table_ids:
            actions += ensure_table(client, instance.id, table)
    return actions
