"""Global-table replicas of a live table (version 2019.11.21), each with its own settings.

DescribeTable lists the replicas (`Replicas[]`: region, status, read override, table class,
per-index read overrides); `describe_table.read` already takes each region and read
override. This module adds what each replica region says for itself:

- its traffic: CloudWatch in the replica's region (a replica's reads are served and
  metered there). On-demand, the replica's `reads` is its p99 RRU/s, as the spec defines
  it; provisioned, its use of its capacity is a `capacity-use` warning, as for the table.
- its read auto scaling (DescribeTableReplicaAutoScaling): reported when it differs from
  the table's, since the spec's replica holds reads only here;
- a status other than ACTIVE, a table class or index read override of its own: warnings.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from .aws_clients import Clients
from .cloudwatch import read_usage, utilisation
from .model import Dropped, Notice, TableDefinition, given

_LABEL = "DynamoDB DescribeTable"


def described(name: str, raw: dict[str, Any]) -> tuple[list[Dropped], list[Notice]]:
    """What DescribeTable says of replicas beyond region and read override."""
    dropped, notices = [], []
    for i, replica in enumerate(raw.get("Replicas") or []):
        where, region = f"{_LABEL} Table.Replicas[{i}]", replica.get("RegionName")
        if replica.get("ReplicaStatus") not in (None, "ACTIVE"):
            notices.append(Notice("replica-status", name, f"replica {region} is {replica['ReplicaStatus']} "
                                  f"({where}.ReplicaStatus): import again when it is ACTIVE"))
        klass = (replica.get("ReplicaTableClassSummary") or {}).get("TableClass")
        if klass and klass != (raw.get("TableClassSummary") or {}).get("TableClass", "STANDARD"):
            dropped.append(Dropped(f"replica {region} table class {klass}", f"{where}.ReplicaTableClassSummary",
                                   "the imported spec has the table's table_class only"))
        for gsi in replica.get("GlobalSecondaryIndexes") or []:
            if (gsi.get("ProvisionedThroughputOverride") or {}).get("ReadCapacityUnits"):
                dropped.append(Dropped(f"replica {region} read override of index {gsi.get('IndexName')}",
                                       f"{where}.GlobalSecondaryIndexes", "the plan sizes every region's index at "
                                       "the index's reads"))
    return dropped, notices


def _own_scaling(clients: Clients, name: str) -> dict[str, tuple[int, int]]:
    """Replica region -> (min, max) read auto scaling, from DescribeTableReplicaAutoScaling."""
    found, _ = clients.optional("DescribeTableReplicaAutoScaling", clients.dynamodb.describe_table_replica_auto_scaling,
                                TableName=name)
    out = {}
    for replica in ((found or {}).get("TableAutoScalingDescription") or {}).get("Replicas") or []:
        settings = replica.get("ReplicaProvisionedReadCapacityAutoScalingSettings") or {}
        if settings.get("MinimumUnits") is not None and settings.get("MaximumUnits") is not None:
            out[replica["RegionName"]] = (int(settings["MinimumUnits"]), int(settings["MaximumUnits"]))
    return out


def with_replicas(clients: Clients, table: TableDefinition) -> tuple[TableDefinition, list[Notice]]:
    """`table` with each replica's measured reads (on-demand), and the warnings about them."""
    if not table.replicas:
        return table, []
    name, on_demand = table.name.value, table.billing.value == "on_demand"
    notices: list[Notice] = []
    dropped = list(table.dropped)
    if not on_demand:
        home = table.read_scaling
        for region, (low, high) in sorted(_own_scaling(clients, name).items()):
            if region != table.region.value and (home is None or (low, high) != (home.minimum.value,
                                                                                 home.maximum.value)):
                dropped.append(Dropped(f"replica {region} read auto scaling {low}-{high}",
                                       "DynamoDB DescribeTableReplicaAutoScaling", "the imported replica keeps its "
                                       "reads only; add its autoscaling to the replica by hand"))
    replicas = []
    for replica in table.replicas:
        region = replica.region.value
        there = Clients(f"aws://{region}/{name}", region, clients.options)
        usage = read_usage(there, name, [], clients.options.days).usage.get((None, "reads"))
        if usage is None:
            replicas.append(replica)
            continue
        if on_demand:
            replica = replace(replica, reads=given(max(1, math.ceil(usage.peak)),
                                                   f"{usage.peak_origin} in {region}, rounded up"))
            notices.append(Notice("replica-traffic", name, f"replica {region}: {usage.metric} p99 {usage.peak:g} "
                                  f"RRU/s, average {usage.average:g}, {usage.window} (CloudWatch in {region})"))
        else:
            units = (replica.reads or table.reads)
            if units is not None:
                notices.append(Notice("capacity-use", f"{name} replica {region}",
                                      utilisation(usage, units.value, "RCU") + f" (CloudWatch in {region})"))
        replicas.append(replica)
    return replace(table, replicas=tuple(replicas), dropped=tuple(dropped)), notices

