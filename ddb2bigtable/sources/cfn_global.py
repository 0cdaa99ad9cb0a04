"""`AWS::DynamoDB::GlobalTable` -> `TableDefinition`: replicas and per-replica settings.

A global table's template lists every region as a replica, the stack's own region among
them: that one is the spec's home `region`, and its per-replica settings (read capacity,
deletion protection, point-in-time recovery, class, tags) become the table's. Write
capacity is set once, by auto scaling only, so the current WCU is not in the template (an
estimate). Where another replica differs from the home region in something a spec holds
once per table, the difference is reported, not silently flattened.
"""

from __future__ import annotations

from .cfn_fields import (
    Fields,
    attribute_types,
    dropped,
    key_schema,
    lsis,
    pitr,
    projection,
    stream,
    table_class,
    tag_list,
    ttl,
)
from .cfn_tables import billing, table_name
from .located import Path
from .model import Dropped, GsiDef, Notice, ReplicaDef, Scaling, Sourced, TableDefinition, given

_PER_REPLICA = ("DeletionProtectionEnabled", "PointInTimeRecoverySpecification", "TableClass", "Tags")


def scaling(f: Fields, rel: Path) -> Scaling | None:
    """`{Min,Max}Capacity` and the target of a `*CapacityAutoScalingSettings` block."""
    if not f.has(rel):
        return None
    low = f.integer((*rel, "MinCapacity"), "MinCapacity")
    high = f.integer((*rel, "MaxCapacity"), "MaxCapacity")
    if low is None or high is None:
        raise f.fail(rel, "auto scaling settings need MinCapacity and MaxCapacity")
    target = f.number((*rel, "TargetTrackingScalingPolicyConfiguration", "TargetValue"), "TargetValue")
    return Scaling(low, high, target)


def _reads(f: Fields, rel: Path) -> tuple[Sourced[int] | None, Scaling | None]:
    """Fixed read units or read auto scaling of a replica (or of a replica's index)."""
    settings = (*rel, "ReadProvisionedThroughputSettings")
    return (f.integer((*settings, "ReadCapacityUnits"), "ReadCapacityUnits"),
            scaling(f, (*settings, "ReadCapacityAutoScalingSettings")))


def _regions(f: Fields) -> list[Sourced[str]]:
    """Each replica's region, in the template's order."""
    regions = [f.text((*at, "Region"), "Region") for at in f.items(("Replicas",), "Replicas")]
    if not regions or any(r is None for r in regions):
        raise f.fail(("Replicas",), "a global table needs Replicas, each with a Region")
    return [r for r in regions if r is not None]


def _home(f: Fields, regions: list[Sourced[str]], region: str | None) -> tuple[int, Sourced[str], list[Notice]]:
    """The index of the home replica, its region, and the warning when it was not chosen."""
    if region is None:
        first = regions[0]
        return 0, first, [Notice("default-region", f.logical, f"a template names no stack region: {first.value} "
                                 "(the first replica) taken as the home region; pass --region to choose another")]
    for i, r in enumerate(regions):
        if r.value == region:
            return i, Sourced(region, f"--region, a replica at {r.origin}"), []
    raise f.fail(("Replicas",), f"--region {region} is not one of this global table's replicas "
                 f"({', '.join(r.value for r in regions)}): pass the stack's region")


def _differences(f: Fields, home: Path, other: Path, region: str) -> list[Dropped]:
    out = []
    for field in _PER_REPLICA:
        if f.raw((*other, field)) != f.raw((*home, field)):
            out.append(Dropped(f"{field} of replica {region}, unlike the home region's", f.origin((*other, field)),
                               "a spec holds one value per table: the home region's was kept"))
    if f.has((*other, "ReadProvisionedThroughputSettings", "ReadCapacityAutoScalingSettings")):
        out.append(Dropped(f"read auto scaling of replica {region}",
                           f.origin((*other, "ReadProvisionedThroughputSettings", "ReadCapacityAutoScalingSettings")),
                           "a spec has one autoscaling range per table (the home region's); the replica's reads "
                           "are its minimum"))
    return out + dropped(f, other)


def read_global_table(f: Fields, region: str | None) -> tuple[TableDefinition, list[Notice]]:
    """One `AWS::DynamoDB::GlobalTable` resource, seen from its home region."""
    regions = _regions(f)
    home_index, home_region, notices = _home(f, regions, region)
    home: Path = ("Replicas", home_index)
    types = attribute_types(f)
    partition, sort = key_schema(f, ("KeySchema",), types)
    mode = billing(f)
    provisioned = mode.value == "provisioned"
    reads, read_scaling = _reads(f, home) if provisioned else (None, None)
    replicas, lost = [], dropped(f) + dropped(f, home)
    for i, where in enumerate(regions):
        if i == home_index:
            continue
        replica: Path = ("Replicas", i)
        fixed, auto = _reads(f, replica) if provisioned else (None, None)
        if auto is not None:
            fixed = Sourced(auto.minimum.value, auto.minimum.origin,
                            f"replica {where.value} auto scales reads {auto.minimum.value}-{auto.maximum.value}: "
                            "its current RCU is in `aws dynamodb describe-table` in that region")
        replicas.append(ReplicaDef(where, fixed))
        lost += _differences(f, home, replica, where.value)
    home_gsis = {str(f.raw((*at, "IndexName"))): at for at in f.items((*home, "GlobalSecondaryIndexes"), "Indexes")}
    gsis = []
    for at in f.items(("GlobalSecondaryIndexes",), "GlobalSecondaryIndexes"):
        name = f.text((*at, "IndexName"), "IndexName")
        if name is None:
            raise f.fail(at, "a global secondary index needs an IndexName")
        g_partition, g_sort = key_schema(f, (*at, "KeySchema"), types)
        g_reads, g_read_scaling = _reads(f, home_gsis[name.value]) if name.value in home_gsis else (None, None)
        g_write = scaling(f, (*at, "WriteProvisionedThroughputSettings", "WriteCapacityAutoScalingSettings"))
        gsis.append(GsiDef(name, g_partition, g_sort, projection(f, (*at, "Projection")),
                           g_reads if provisioned else None, None, g_read_scaling if provisioned else None,
                           g_write if provisioned else None))
    for field, what in (("WriteOnDemandThroughputSettings", "on-demand max write throughput"),
                        ("ReadOnDemandThroughputSettings", "on-demand max read throughput")):
        for rel in ((field,), (*home, field)):
            if f.has(rel):
                lost.append(Dropped(what, f.origin(rel), "Bigtable has no request cap; nodes are sized from the peak"))
    enabled, days = pitr(f, (*home, "PointInTimeRecoverySpecification"))
    protection = f.flag((*home, "DeletionProtectionEnabled"), "DeletionProtectionEnabled")
    table = TableDefinition(
        name=table_name(f), region=home_region, partition=partition, sort=sort, billing=mode, reads=reads,
        read_scaling=read_scaling,
        write_scaling=scaling(f, ("WriteProvisionedThroughputSettings", "WriteCapacityAutoScalingSettings"))
        if provisioned else None,
        replicas=tuple(replicas), ttl_attribute=ttl(f), stream=stream(f), pitr=enabled, pitr_days=days,
        table_class=table_class(f, (*home, "TableClass")),
        deletion_protection=protection or given(False, f.origin(home) + " (no DeletionProtectionEnabled: false)"),
        tags=tag_list(f, (*home, "Tags")), gsis=tuple(gsis), lsis=lsis(f, types), dropped=tuple(lost))
    return table, notices
