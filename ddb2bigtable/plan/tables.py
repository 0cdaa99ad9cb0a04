"""Table-level features: change streams, backups, deletion protection, GSIs as views.

DynamoDB Streams keep 24 hours of changes, so the change stream keeps the same. PITR
restores to any second of the last 1-35 days; Bigtable's automated backup policy takes a
daily backup, which is the nearest thing, and the plan says it is not per-second. A GSI
becomes a continuous materialized view, Bigtable's asynchronous secondary index:
eventually consistent like a GSI, keyed by the GSI key then the source row key (which
Bigtable requires in the view's key, so the view is one-to-one with the table).
"""

from __future__ import annotations

import re

from ..spec.model import Gsi, PointInTimeRecovery, Source, TableSpec
from . import gc_rules
from .model import BackupPlan, MaterializedViewPlan, PlanWarning, TablePlan

STREAM_RETENTION_HOURS = 24  # DynamoDB Streams keep records for 24 hours (AWS Developer Guide, read 2026-11-21)
BACKUP_FREQUENCY_HOURS = 24  # Bigtable automated backups: daily (cloud.google.com/bigtable/docs/backups, 2026-11-21)
BACKUP_MAX_RETENTION_DAYS = 90  # automated backup retention limit (same page)


def pitr_by_region(source: Source) -> dict[str, PointInTimeRecovery]:
    """Each region's PITR: a replica's own setting, else the table's."""
    out = {source.region: source.point_in_time_recovery}
    for r in source.replicas:
        out[r.region] = r.point_in_time_recovery or source.point_in_time_recovery
    return out


def view_id(table_id: str, gsi_name: str) -> str:
    return re.sub(r"[^-_.a-zA-Z0-9]", "_", f"{table_id}-{gsi_name}")[:128]


def number_column(name: str) -> str:
    """The view column holding an N index key as FLOAT64, the view's order for that key."""
    return f"{name}_number"


def view_query(table: TableSpec, gsi: Gsi) -> str:
    """The view's SQL: GSI key columns, then the source key, then the projection.

    Each key is its raw cell (BYTES). An N key's cell is its decimal text, whose byte order
    is not numeric ("10" < "9"), so the view also holds it as FLOAT64
    (`CAST(CAST(cell AS STRING) AS FLOAT64)`, GoogleSQL for Bigtable's CAST,
    https://cloud.google.com/bigtable/docs/reference/sql/conversion_functions, read
    2026-11-25; continuous materialized views take any GoogleSQL for Bigtable feature but
    the few they list, CAST not among them:
    https://cloud.google.com/bigtable/docs/continuous-materialized-view-queries, read
    2026-11-25) and is ordered by that number, so serve reads an index partition in number
    order from its start. FLOAT64 keeps 15-17 significant digits of DynamoDB's 38: numbers
    that differ further are equal there, and serve orders such ties exactly
    (docs/serve.md, Secondary indexes)."""
    family = table.mapping.default_family
    keys = [gsi.key.partition] + ([gsi.key.sort] if gsi.key.sort else [])
    names = [k.name for k in keys]
    columns = [f"{family}['{k}'] AS {k}" for k in names]
    columns += [f"CAST(CAST({family}['{k.name}'] AS STRING) AS FLOAT64) AS {number_column(k.name)}"
                for k in keys if k.type == "N"]
    columns.append("_key AS source_key")
    if gsi.projection == "all":
        columns.append(family)
    elif gsi.projection != "keys_only":
        columns += [f"{family}['{a}'] AS {a}" for a in gsi.projection if a not in names]
    order = ", ".join([*(number_column(k.name) if k.type == "N" else k.name for k in keys), "source_key"])
    return f"SELECT {', '.join(columns)} FROM `{table.id}` ORDER BY {order}"


def plan_table(table: TableSpec, instance_id: str, deletion_protection: bool | None
               ) -> tuple[TablePlan, list[PlanWarning]]:
    source = table.source
    families, warnings = gc_rules.plan_families(table, instance_id)
    stream_hours = STREAM_RETENTION_HOURS if source.stream != "none" else None
    backup = None
    pitr = source.point_in_time_recovery
    enabled = pitr_by_region(source)
    if any(p.enabled for p in enabled.values()):
        period = max(p.recovery_period_days for p in enabled.values() if p.enabled)
        days = min(period, BACKUP_MAX_RETENTION_DAYS)
        where = ""
        if not all(p.enabled and p.recovery_period_days == pitr.recovery_period_days for p in enabled.values()):
            on = [f"{r} {p.recovery_period_days} days" for r, p in enabled.items() if p.enabled]
            off = [r for r, p in enabled.items() if not p.enabled]
            where = (f" (replicas differ: on in {', '.join(on)}" + (f", off in {', '.join(off)}" if off else "")
                     + "; a Bigtable table's backups cover every cluster, so the longest period is kept)")
        backup = BackupPlan(
            frequency_hours=BACKUP_FREQUENCY_HOURS, retention_days=days,
            why=(f"PITR with {period} days{where}: daily automated backups kept {days} days; "
                 f"restores go to the last daily backup, not to any second"),
        )
    views = tuple(
        MaterializedViewPlan(
            id=view_id(table.id, g.name), gsi=g.name, query=view_query(table, g),
            why=f"GSI {g.name} as an asynchronous secondary index (eventually consistent, like the GSI)",
        )
        for g in source.gsis
    )
    for lsi in source.lsis:
        warnings.append(PlanWarning(
            "lsi", instance_id, table.id,
            f"LSI {lsi.name} (sort by {lsi.sort.name}) has no Bigtable equivalent: rows of one partition share a "
            f"row-key prefix, so scan the prefix and filter or sort by {lsi.sort.name} in the application, or "
            f"write index rows `<partition>#{lsi.sort.name}#<value>` next to the items"))
    protected = True if deletion_protection is None else deletion_protection
    why = f"from DynamoDB {source.table} ({', '.join(source.regions)})"
    if deletion_protection is None:
        why += (f"; protected against deletion: the stage does not say otherwise (production-safe default; "
                f"DynamoDB's table has it {'on' if source.deletion_protection else 'off'})")
    if stream_hours:
        why += f"; stream {source.stream} → change stream kept {stream_hours} h"
    return TablePlan(
        id=table.id, source_table=source.table, source_regions=source.regions, families=tuple(families),
        change_stream_retention_hours=stream_hours, backup=backup, deletion_protection=protected,
        materialized_views=views, storage_gib=source.storage_gb,
        ttl_attribute=source.ttl.attribute if source.ttl else None, why=why,
    ), warnings
