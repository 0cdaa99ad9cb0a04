"""Every value a spec needs that no source gave, as an explicit estimate with its remedy.

Readers leave a field None when their source is silent; `complete` fills each one the spec
needs with a value marked as an estimate, whose note says why it is a guess and which
command (or which spec field) gives the real number. The emitter comments and warns about
every estimate, so nothing invented passes as a fact.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from .model import GsiDef, Rates, Scaling, Sourced, TableDefinition, guessed

# What a new on-demand table serves at once (AWS: "initial throughput for on-demand capacity
# mode", 4,000 WRU/s and 12,000 RRU/s). An upper bound for a table nobody measured.
ON_DEMAND_INITIAL_READS = 12000
ON_DEMAND_INITIAL_WRITES = 4000
AWS_DEFAULT_TARGET = 70.0  # the console's default target utilisation


def _describe(table: TableDefinition, query: str) -> str:
    return (f"aws dynamodb describe-table --table-name {table.name.value} --region {table.region.value} "
            f"--query '{query}'")


def _metrics(table: TableDefinition) -> str:
    # The Sum of a minute, not its Maximum: CloudWatch's Maximum of Consumed*CapacityUnits is
    # the largest single request (AWS, "DynamoDB metrics and dimensions", read 2026-11-24).
    return (f"the 99th percentile of per-second consumption, which `ddb2bigtable import aws://{table.region.value}/"
            f"{table.name.value}` measures: aws cloudwatch get-metric-statistics --namespace AWS/DynamoDB "
            f"--metric-name ConsumedReadCapacityUnits (and ConsumedWriteCapacityUnits) --dimensions "
            f"Name=TableName,Value={table.name.value} --region {table.region.value} --statistics Sum --period 60 "
            f"over 14 days, each minute's sum / 60")


def _units(table: TableDefinition, current: Sourced[int] | None, scaling: Scaling | None, what: str,
           query: str) -> Sourced[int]:
    """The provisioned units of one dimension: given, else the auto scaling floor, else 1."""
    if current is not None:
        return current
    fix = f"the current value is what `{_describe(table, query)}` prints"
    if scaling is not None:
        return guessed(scaling.minimum.value,
                       f"the auto scaling minimum ({scaling.minimum.origin}); the source has no current {what}: {fix}")
    return guessed(1, f"the source gives no {what}: {fix}")


def _targeted(scaling: Scaling | None) -> Scaling | None:
    """A scaling with its target: the policy's, else AWS's default as an estimate."""
    if scaling is None or scaling.target is not None:
        return scaling
    why = ("no target-tracking scaling policy was found; AWS's default is 70 %: check "
           "`aws application-autoscaling describe-scaling-policies --service-namespace dynamodb`")
    return replace(scaling, target=guessed(AWS_DEFAULT_TARGET, why))


def _gsi(table: TableDefinition, gsi: GsiDef, provisioned: bool) -> GsiDef:
    if not provisioned:
        return replace(gsi, read_scaling=None, write_scaling=None)
    index = "Table.GlobalSecondaryIndexes[].[IndexName,ProvisionedThroughput]"
    reads = _units(table, gsi.reads, gsi.read_scaling, f"RCU of index {gsi.name.value}", index)
    writes = _units(table, gsi.writes, gsi.write_scaling, f"WCU of index {gsi.name.value}", index)
    return replace(gsi, reads=reads, writes=writes, read_scaling=_targeted(gsi.read_scaling),
                   write_scaling=_targeted(gsi.write_scaling))


def _initial(units: int, unit: str, cap: Sourced[float] | None, why: Callable[[str, str], str]) -> Sourced[float]:
    """AWS's initial on-demand rate as the peak estimate, at most the table's own maximum
    (DynamoDB throttles above it: a higher guess would only raise a false peak-above-max).
    `why(rate, bound)` words it; a function, not a format string: names in it are the user's."""
    if cap is not None and cap.value < units:
        return guessed(float(cap.value), why(f"{units:,} {unit}", f"capped at the table's max throughput "
                                                                  f"{cap.value:,g} ({cap.origin})"))
    return guessed(float(units), why(f"{units:,} {unit}", "an upper bound"))


def complete(table: TableDefinition) -> TableDefinition:
    """`table` with every field the spec needs set, the missing ones as estimates."""
    provisioned = table.billing.value == "provisioned"
    dropped = list(table.dropped)
    changes: dict[str, Any] = {}
    if provisioned:
        reads = _units(table, table.reads, table.read_scaling, "RCU", "Table.ProvisionedThroughput")
        writes = _units(table, table.writes, table.write_scaling, "WCU", "Table.ProvisionedThroughput")
        changes.update(reads=reads, writes=writes, read_scaling=_targeted(table.read_scaling),
                       write_scaling=_targeted(table.write_scaling),
                       replicas=tuple(replace(r, read_scaling=_targeted(r.read_scaling),
                                              gsi_reads=tuple((n, u, _targeted(a)) for n, u, a in r.gsi_reads))
                                      for r in table.replicas))
    elif table.peak is None:
        def why(rate: str, bound: str) -> str:
            return (f"no source measured this on-demand table's peak; {rate} is what AWS gives a new on-demand "
                    f"table at once, {bound}: the real peak is {_metrics(table)}")
        changes["peak"] = Rates(_initial(ON_DEMAND_INITIAL_READS, "RRU/s", cap.reads if (cap := table.max_throughput)
                                         else None, why),
                                _initial(ON_DEMAND_INITIAL_WRITES, "WRU/s", cap.writes if cap else None, why))
    gsis = [_gsi(table, gsi, provisioned) for gsi in table.gsis]
    size = _describe(table, "Table.[TableSizeBytes,ItemCount]")
    if table.item_size_kb is None:
        changes["item_size_kb"] = guessed(1.0, f"no source gives the item size: TableSizeBytes / ItemCount of `{size}`")
    if table.storage_gb is None:
        changes["storage_gb"] = guessed(0.0, f"no source gives the table size: TableSizeBytes of `{size}`, in GiB")
    if table.pitr is None:
        changes["pitr"] = guessed(False, "the source does not say: `aws dynamodb describe-continuous-backups "
                                  f"--table-name {table.name.value} --region {table.region.value}`")
    if table.deletion_protection is None:
        command = _describe(table, "Table.DeletionProtectionEnabled")
        changes["deletion_protection"] = guessed(False, f"the source does not say: `{command}`")
    app = "no definition says how the application uses the table; ask its owners"
    if table.read_consistency is None:
        changes["read_consistency"] = guessed("eventual", f"{app}: strong (ConsistentRead) or transactional "
                                              "(TransactGetItems) reads need 2x or 4x the units")
    if table.write_mode is None:
        changes["write_mode"] = guessed("standard", f"{app}: transactional (TransactWriteItems) writes cost 2 units")
    if table.conditional_writes is None:
        changes["conditional_writes"] = guessed(
            False, f"{app}: true when it uses ConditionExpression or atomic counters (adds transactional app profiles)")
    return replace(table, gsis=tuple(gsis), dropped=tuple(dropped), **changes)
