"""Global-table replicas of a live table (version 2019.11.21), each with its own settings.

DescribeTable lists the replicas, and `describe_table.read` takes each one's region, read
override, index read overrides and table class. This module adds what only other calls say:

- its read auto scaling (DescribeTableReplicaAutoScaling: the replica's and its indexes'
  minimum, maximum and target), where it differs from the table's;
- its traffic: CloudWatch in the replica's region (a replica's reads are served and
  metered there). On-demand, the replica's `reads` is its p99 RRU/s, as the spec defines
  it, with a `replica-traffic` warning; provisioned, its use of its capacity is a
  `capacity-use` warning, as for the table;
- its point-in-time recovery (DescribeContinuousBackups in its region: each replica has
  its own), where it differs from the table's; unknown (not served, denied) is a warning;
- a status other than ACTIVE: a warning.

A global table of the older version 2017.11.29 (DescribeTable `GlobalTableVersion`) lists
no `Replicas`: its regions come from DescribeGlobalTable's `ReplicationGroup`, each
replica being a table of its own there (its reads from CloudWatch as above).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from ...spec.errors import Ddb2BigtableError
from ..model import Notice, ReplicaDef, Scaling, Sourced, TableDefinition, given
from .clients import Clients
from .cloudwatch import read_usage, utilisation

_SCALING = "DynamoDB DescribeTableReplicaAutoScaling"


def replica_status(name: str, raw: dict[str, Any]) -> list[Notice]:
    """A warning for each replica DescribeTable shows in a state other than ACTIVE."""
    return [Notice("replica-status", name, f"replica {r.get('RegionName')} is {r['ReplicaStatus']} (DynamoDB "
                   f"DescribeTable Table.Replicas[{i}].ReplicaStatus): import again when it is ACTIVE")
            for i, r in enumerate(raw.get("Replicas") or []) if r.get("ReplicaStatus") not in (None, "ACTIVE")]


def _scaling(settings: dict[str, Any] | None, where: str) -> Scaling | None:
    """Min, max and target-tracking target of one AutoScalingSettingsDescription."""
    if not settings or settings.get("MinimumUnits") is None or settings.get("MaximumUnits") is None:
        return None
    target = next((p["TargetTrackingScalingPolicyConfiguration"]["TargetValue"]
                   for p in settings.get("ScalingPolicies") or []
                   if (p.get("TargetTrackingScalingPolicyConfiguration") or {}).get("TargetValue") is not None), None)
    return Scaling(given(int(settings["MinimumUnits"]), f"{where}.MinimumUnits"),
                   given(int(settings["MaximumUnits"]), f"{where}.MaximumUnits"),
                   given(float(target), f"{where}.ScalingPolicies TargetValue") if target is not None else None)


def _same(a: Scaling | None, b: Scaling | None) -> bool:
    def values(s: Scaling | None) -> Any:
        return s and (s.minimum.value, s.maximum.value, s.target.value if s.target else None)
    return bool(values(a) == values(b))


def _own_scaling(clients: Clients, table: TableDefinition, replica: ReplicaDef,
                 described: dict[str, Any]) -> ReplicaDef:
    """`replica` with the read auto scaling of its own that differs from the table's."""
    region = replica.region.value
    for i, found in enumerate(described.get("Replicas") or []):
        if found.get("RegionName") != region:
            continue
        where = f"{_SCALING} Replicas[{i}]"
        own = _scaling(found.get("ReplicaProvisionedReadCapacityAutoScalingSettings"),
                       f"{where}.ReplicaProvisionedReadCapacityAutoScalingSettings")
        gsi_reads = {name: (reads, scaling) for name, reads, scaling in replica.gsi_reads}
        for j, gsi in enumerate(found.get("GlobalSecondaryIndexes") or []):
            index = next((g for g in table.gsis if g.name.value == gsi.get("IndexName")), None)
            scaling = _scaling(gsi.get("ProvisionedReadCapacityAutoScalingSettings"),
                               f"{where}.GlobalSecondaryIndexes[{j}].ProvisionedReadCapacityAutoScalingSettings")
            if index is not None and scaling is not None and not _same(scaling, index.read_scaling):
                gsi_reads[index.name.value] = (gsi_reads.get(index.name.value, (None, None))[0], scaling)
        return replace(replica, read_scaling=own if own and not _same(own, table.read_scaling) else None,
                       gsi_reads=tuple((n, r, s) for n, (r, s) in gsi_reads.items()))
    return replica


LEGACY = "2017.11.29"


def legacy_replicas(clients: Clients, table: TableDefinition, raw: dict[str, Any]) -> tuple[
        TableDefinition, list[Notice]]:
    """A 2017.11.29 global table's replicas, from DescribeGlobalTable."""
    if raw.get("GlobalTableVersion") != LEGACY or table.replicas:
        return table, []
    name = table.name.value
    found, why = clients.best_effort("DescribeGlobalTable", clients.dynamodb.describe_global_table,
                                     GlobalTableName=name)
    if found is None:
        return table, [Notice("not-in-source", name, f"{why}: the replicas of this {LEGACY} global table are not "
                              "known; add them under `replicas:`")]
    group = (found.get("GlobalTableDescription") or {}).get("ReplicationGroup") or []
    where = "DynamoDB DescribeGlobalTable ReplicationGroup"
    replicas = tuple(ReplicaDef(given(r["RegionName"], f"{where}[{i}].RegionName"))
                     for i, r in enumerate(group) if r.get("RegionName") and r["RegionName"] != table.region.value)
    return replace(table, replicas=replicas), [Notice("legacy-global-table", name, f"a global table of version "
                                                       f"{LEGACY}: each replica is a table of its own with its own "
                                                       "capacity; check each replica's reads")]


def continuous_backups(found: dict[str, Any], where: str = "") -> tuple[Sourced[bool], Sourced[int] | None]:
    """(enabled, recovery period) from a DescribeContinuousBackups answer."""
    described = found.get("ContinuousBackupsDescription", {}).get("PointInTimeRecoveryDescription", {})
    origin = f"DynamoDB DescribeContinuousBackups{where} PointInTimeRecoveryDescription"
    enabled = given(described.get("PointInTimeRecoveryStatus") == "ENABLED", f"{origin}.PointInTimeRecoveryStatus")
    days = described.get("RecoveryPeriodInDays")
    return enabled, (given(int(days), f"{origin}.RecoveryPeriodInDays") if enabled.value and days else None)


def _own_pitr(there: Clients, table: TableDefinition, replica: ReplicaDef, notices: list[Notice]) -> ReplicaDef:
    """The replica's PITR as its region reports it, where it differs from the table's."""
    name, region = table.name.value, replica.region.value
    try:
        found, why = there.optional("DescribeContinuousBackups", there.dynamodb.describe_continuous_backups,
                                    TableName=name)
    except Ddb2BigtableError as error:  # the table unknown there (DynamoDB Local keeps one database per region)
        found, why = None, str(error)
    if found is None:
        notices.append(Notice("not-in-source", name, f"replica {region}: {why}: its point_in_time_recovery is taken "
                              f"to be the table's; check `aws dynamodb describe-continuous-backups --table-name "
                              f"{name} --region {region}`"))
        return replica
    enabled, days = continuous_backups(found, f" in {region}")
    same = table.pitr is not None and enabled.value == table.pitr.value and (
        not enabled.value or _value(days) == _value(table.pitr_days))
    return replica if same else replace(replica, pitr=enabled, pitr_days=days)


def _value(sourced: Sourced[int] | None) -> int | None:
    return None if sourced is None else sourced.value


def with_replicas(clients: Clients, table: TableDefinition) -> tuple[TableDefinition, list[Notice]]:
    """`table` with each replica's measured reads (on-demand), and the warnings about them."""
    if not table.replicas:
        return table, []
    name, on_demand = table.name.value, table.billing.value == "on_demand"
    notices: list[Notice] = []
    described: dict[str, Any] = {}
    if not on_demand:
        found, why = clients.optional("DescribeTableReplicaAutoScaling",
                                      clients.dynamodb.describe_table_replica_auto_scaling, TableName=name)
        described = (found or {}).get("TableAutoScalingDescription") or {}
        if why:
            notices.append(Notice("not-in-source", name, f"{why}: a replica's own auto scaling is not known; the "
                                  "table's applies"))
    replicas = []
    for replica in table.replicas:
        replica = _own_scaling(clients, table, replica, described) if described else replica
        region = replica.region.value
        there = Clients(f"aws://{region}/{name}", region, clients.options)
        replica = _own_pitr(there, table, replica, notices)
        usage = read_usage(there, name, [], clients.options.days).usage.get((None, "reads"))
        if usage is None:
            replicas.append(replica)
            continue
        if on_demand:
            replica = replace(replica, reads=given(math.ceil(usage.peak),
                                                   f"{usage.peak_origin} in {region}, rounded up"))
            notices.append(Notice("replica-traffic", name, f"replica {region}: {usage.metric} p99 {usage.peak:g} "
                                  f"RRU/s, average {usage.average:g}, {usage.window} (CloudWatch in {region})"))
        else:
            units = (replica.reads or table.reads)
            if units is not None:
                notices.append(Notice("capacity-use", f"{name} replica {region}",
                                      utilisation(usage, units.value, "RCU") + f" (CloudWatch in {region})"))
        replicas.append(replica)
    return replace(table, replicas=tuple(replicas)), notices

