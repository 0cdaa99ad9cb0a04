"""Creates a plan's tables, column families and GC rules through the table-admin API.

Used where Pulumi is not: the emulator (`up --stage local`), `load --create-tables`, and
serve's CreateTable and DeleteTable on emulator stages.
Families are created first and their GC rules set afterwards with ModifyColumnFamilies:
the same calls work in the cloud, and the emulator only starts its garbage collector when
a GC rule arrives that way (seen with cbtemulator of Cloud SDK 528; a rule given at table
creation is stored but never applied).

A counter family is created as an aggregate family (int64 Sum, big-endian) in the same
call. Bigtable cannot convert an existing family to another type (the emulator even
accepts the request and keeps the old type), so a family whose type differs from the
plan's stops here with what to do, before anything of that table is changed.
"""

from __future__ import annotations

import datetime
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from google.api_core import exceptions
from google.cloud.bigtable import Client, column_family
from google.cloud.bigtable.row_filters import StripValueTransformerFilter
from google.cloud.bigtable.row_set import RowSet
from google.cloud.bigtable_admin_v2.types import ModifyColumnFamiliesRequest, Type
from google.cloud.bigtable_admin_v2.types import table as admin_table

from ..plan.model import INT64_SUM, TYPES_TABLE, FamilyPlan, GcPolicy, InstancePlan, TablePlan
from ..spec.errors import ServiceError
from .deadlines import admin_retry
from .emulator import EMULATOR_ENV
from .preflight import DEADLINE_SECONDS, EMULATOR_DEADLINE_SECONDS, family_kind

T = TypeVar("T")


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


_INT64_SUM = Type(aggregate_type=Type.Aggregate(
    input_type=Type(int64_type=Type.Int64(encoding=Type.Int64.Encoding(big_endian_bytes=Type.Int64.Encoding.BigEndianBytes()))),
    sum=Type.Aggregate.Sum()))


def _create_family(client: Client, table_name: str, family: FamilyPlan) -> None:
    created = admin_table.ColumnFamily(value_type=_INT64_SUM if family.aggregate == INT64_SUM else None)
    client.table_admin_client.modify_column_families(request={"name": table_name, "modifications": [
        ModifyColumnFamiliesRequest.Modification(id=family.name, create=created)]})


def _check_kinds(client: Client, instance_id: str, table: TablePlan, table_name: str) -> None:
    found = client.table_admin_client.get_table(request={"name": table_name, "view": "SCHEMA_VIEW"})
    for family in table.families:
        if family.name in found.column_families:
            kind = family_kind(found.column_families[family.name].value_type)
            if kind != family.aggregate:
                raise ServiceError(
                    f"table {instance_id}/{table.id}: family {family.name} is {kind or 'a plain family'}, the plan "
                    f"makes it {family.aggregate or 'a plain family'}; Bigtable cannot convert a family's type: "
                    f"delete the family (`cbt deletefamily {table.id} {family.name}`) or the table, then run this "
                    f"again (the load writes its cells anew); nothing of this table was changed")


def ensure_table(client: Client, instance_id: str, table: TablePlan) -> list[AdminAction]:
    """The table with the plan's families, their types and GC rules, creating or updating what
    differs; ServiceError, before any change to it, when a family's type differs."""
    handle = client.instance(instance_id).table(table.id)
    actions = []
    if not handle.exists():
        # created with its plain families in the same call: a worker that finds the table (serve's
        # token table, made on demand by whichever request comes first) finds them too, never a
        # table without the family it is about to write; aggregate families follow below
        plain = [f for f in table.families if not f.aggregate]
        handle.create(column_families={f.name: gc_rule(f.gc) for f in plain})
        actions.append(AdminAction(table.id, "created table"))
        for family in plain:
            actions += _made(table.id, family)
        if table.id != TYPES_TABLE.id and _forget_stale_record(client, instance_id, table.id):
            actions.append(AdminAction(table.id, f"deleted the types a table {table.id} deleted before had "
                                                 f"recorded ({TYPES_TABLE.id})"))
    else:
        _check_kinds(client, instance_id, table, handle.name)
    existing = handle.list_column_families()
    for family in table.families:
        rule = gc_rule(family.gc)
        if family.name not in existing:
            _create_family(client, handle.name, family)
            if rule is not None:
                handle.column_family(family.name, gc_rule=rule).update()
            actions += _made(table.id, family)
        elif existing[family.name].gc_rule != rule and rule is not None:
            handle.column_family(family.name, gc_rule=rule).update()
            actions.append(_gc_set(table.id, family))
    return actions


def _made(table_id: str, family: FamilyPlan) -> list[AdminAction]:
    """What making a family did, the same whether it came with its table or on its own."""
    kind = f" ({family.aggregate})" if family.aggregate else ""
    made = [AdminAction(table_id, f"created family {family.name}{kind}")]
    return made + ([_gc_set(table_id, family)] if gc_rule(family.gc) is not None else [])


def _gc_set(table_id: str, family: FamilyPlan) -> AdminAction:
    return AdminAction(table_id, f"set GC of {family.name}: {family.gc.describe()}")


def _forget_stale_record(client: Client, instance_id: str, table_id: str) -> bool:
    """The record's rows of `table_id` deleted (its attributes' rows, and the one row of
    before issue 50: bigtable/table_types.py); whether there were any (none either when the
    instance has no record table yet)."""
    record = client.instance(instance_id).table(TYPES_TABLE.id)
    key = table_id.encode()
    try:
        keys = [row.row_key for row in record.read_rows(row_set=_record_rows(key),
                                                        filter_=StripValueTransformerFilter(True))]
    except exceptions.NotFound:
        return False
    if not keys:
        return False
    for row_key in keys:
        row = record.direct_row(row_key)
        row.delete()
        status = row.commit()
        if status.code:
            raise ServiceError(f"created table {instance_id}/{table_id}, but cannot delete the types a table of that "
                               f"id recorded before (rows {table_id}... of {TYPES_TABLE.id}: {status.message}): "
                               f"delete them (`cbt deleterow {TYPES_TABLE.id} {table_id}`, and each row starting "
                               f"with it and a NUL) before loading the table")
    return True


def _record_rows(key: bytes) -> RowSet:
    rows = RowSet()
    rows.add_row_key(key)
    rows.add_row_range_from_keys(key + b"\x00", key + b"\x01")
    return rows


def ensure_tables(project: str, instance: InstancePlan, table_ids: list[str] | None = None) -> list[AdminAction]:
    """Every planned table (or those of `table_ids`) as `ensure_table` leaves it, and the
    instance's metadata tables (the record of each table's types) always."""
    tables = [t for t in instance.tables if table_ids is None or t.id in table_ids] + list(instance.metadata_tables)
    return _with_admin(project, instance.id, f"create or update the tables of instance {instance.id}",
                       lambda client: [a for t in tables for a in ensure_table(client, instance.id, t)])


def ensure_planned_table(project: str, instance_id: str, table: TablePlan) -> list[AdminAction]:
    """One table planned outside the stage's plan (serve's registry), as `ensure_table` leaves it."""
    return _with_admin(project, instance_id, f"create table {instance_id}/{table.id}",
                       lambda client: ensure_table(client, instance_id, table))


def create_new_table(project: str, instance_id: str, table: TablePlan) -> list[AdminAction] | None:
    """A table that did not exist, made as `ensure_table` makes it (serve's CreateTable);
    None, and nothing changed, when a table of that id exists: its rows are not the new
    table's, and what this tool did not create it does not take over."""
    def create(client: Client) -> list[AdminAction] | None:
        if client.instance(instance_id).table(table.id).exists():
            return None
        return ensure_table(client, instance_id, table)

    return _with_admin(project, instance_id, f"create table {instance_id}/{table.id}", create)


def delete_table(project: str, instance_id: str, table_id: str) -> bool:
    """The table deleted with its rows (serve's DeleteTable); False when it was not there."""
    def drop(client: Client) -> bool:
        try:
            client.table_admin_client.delete_table(
                request={"name": f"projects/{project}/instances/{instance_id}/tables/{table_id}"})
        except exceptions.NotFound:
            return False
        return True

    return _with_admin(project, instance_id, f"delete table {instance_id}/{table_id}", drop)


def _with_admin(project: str, instance_id: str, what: str, calls: Callable[[Client], T]) -> T:
    """`calls` with a table-admin client, after one cheap call with preflight's short
    deadline: the calls after it have no deadline of their own here (the admin client's
    60 s, 300 s to create a table), so a Bigtable that accepts connections and never
    answers would hold them a minute each; that, or any failure of Bigtable, is a
    ServiceError (exit 1) saying what to check."""
    client = Client(project=project, admin=True)
    endpoint = os.environ.get(EMULATOR_ENV)
    where = f"the Bigtable emulator at {endpoint}" if endpoint else f"Bigtable (project {project})"
    deadline = EMULATOR_DEADLINE_SECONDS if endpoint else DEADLINE_SECONDS
    try:
        client.table_admin_client.list_tables(
            request={"parent": f"projects/{project}/instances/{instance_id}", "view": "NAME_ONLY", "page_size": 1},
            timeout=deadline, retry=admin_retry(deadline))
        return calls(client)
    except (exceptions.GoogleAPICallError, exceptions.RetryError) as error:
        fix = ("start it (`ddb2bigtable up --stage local --keep-running`) or point "
               f"{EMULATOR_ENV} at the running one") if endpoint else "check the network, the project and the instance"
        raise ServiceError(f"cannot {what} on {where} ({type(error).__name__}: {str(error)[:200]}): {fix}") from None
