"""`AWS::DynamoDB::GlobalTable` -> `TableDefinition`: replicas and per-replica settings.

A global table's template lists every region as a replica, the stack's own region among
them: that one is the spec's home `region`, and its per-replica settings (read capacity,
deletion protection, point-in-time recovery, class, tags) become the table's. Write
capacity is set once, by auto scaling only, so the current WCU is not in the template (an
estimate). Where another replica differs from the home region in something a spec holds
once per table, the difference is reported, not silently flattened.
"""

from __future__ import annotations

from ..located import Path
from ..model import Dropped, GsiDef, Limits, Notice, ReplicaDef, Scaling, Sourced, TableDefinition, given
from .fields import (
    Fields,
    attribute_types,
    dropped,
    extras,
    key_schema,
    lsis,
    pitr,
    projection,
    stream,
    table_class,
    tag_list,
    ttl,
    warm,
)
from .tables import billing, table_name


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


_ONCE_PER_TABLE = ("DeletionProtectionEnabled", "Tags", "ContributorInsightsSpecification",
                   "KinesisStreamSpecification", "ReadOnDemandThroughputSettings")


def _differences(f: Fields, home: Path, other: Path, region: str) -> list[Dropped]:
    """What a replica sets unlike the home region that a spec holds once per table (a
    replica's own class, PITR and read auto scaling are replica fields, not losses)."""
    out = []
    for field in _ONCE_PER_TABLE:
        if f.raw((*other, field)) != f.raw((*home, field)):
            out.append(Dropped(f"{field} of replica {region}, unlike the home region's", f.origin((*other, field)),
                               "a spec holds one value per table: the home region's was kept"))
    return out + dropped(f, other)


def _own(f: Fields, home: Path, other: Path, field: str) -> bool:
    """The replica's setting differs from the home region's; one it leaves out is AWS's
    default (no PITR, class STANDARD) in that replica, not the home region's value."""
    return f.raw((*other, field)) != f.raw((*home, field))


def _value(sourced: Sourced[int] | None) -> int | None:
    return None if sourced is None else sourced.value


def _bounds(s: Scaling | None) -> tuple[int, int, float | None] | None:
    return None if s is None else (s.minimum.value, s.maximum.value, s.target.value if s.target else None)


def _replica(f: Fields, home: Path, at: Path, where: Sourced[str], provisioned: bool,
             home_gsis: dict[str, Path]) -> ReplicaDef:
    """One replica besides the home region, with the settings it has of its own."""
    fixed, auto = _reads(f, at) if provisioned else (None, None)
    if auto is not None:
        fixed = Sourced(auto.minimum.value, auto.minimum.origin,
                        f"replica {where.value} auto scales reads {auto.minimum.value}-{auto.maximum.value}: "
                        "its current RCU is in `aws dynamodb describe-table` in that region")
    gsi_reads = []
    for g_at in f.items((*at, "GlobalSecondaryIndexes"), "Indexes") if provisioned else ():
        name = str(f.raw((*g_at, "IndexName")))
        own_reads, own_scaling = _reads(f, g_at)
        home_reads, home_scaling = _reads(f, home_gsis[name]) if name in home_gsis else (None, None)
        reads = own_reads if own_reads is not None and _value(own_reads) != _value(home_reads) else None
        scaled = own_scaling if own_scaling is not None and _bounds(own_scaling) != _bounds(home_scaling) else None
        if reads is not None or scaled is not None:
            gsi_reads.append((name, reads, scaled))
    klass = table_class(f, (*at, "TableClass")) if _own(f, home, at, "TableClass") else None
    if klass is not None and not f.has((*at, "TableClass")):
        klass = given("standard", f.origin(at) + " (no TableClass: STANDARD)")
    enabled, days = (pitr(f, (*at, "PointInTimeRecoverySpecification"))
                     if _own(f, home, at, "PointInTimeRecoverySpecification") else (None, None))
    if enabled is not None and not f.has((*at, "PointInTimeRecoverySpecification")):
        enabled = given(False, f.origin(at) + " (no PointInTimeRecoverySpecification: disabled)")
    return ReplicaDef(where, fixed, auto, tuple(gsi_reads), klass, enabled, days)


def _max_throughput(f: Fields, at: Path, home: Path | None) -> Limits | None:
    """On-demand maximum of the table (`at` = ()) or of a GSI (`at` its entry): MaxWriteRequestUnits
    is set once, MaxReadRequestUnits per replica (the home region's, at `home`, is kept)."""
    writes = f.number((*at, "WriteOnDemandThroughputSettings", "MaxWriteRequestUnits"), "MaxWriteRequestUnits")
    reads = (f.number((*home, "ReadOnDemandThroughputSettings", "MaxReadRequestUnits"), "MaxReadRequestUnits")
             if home is not None else None)
    limits = Limits(reads if reads and reads.value > 0 else None, writes if writes and writes.value > 0 else None)
    return None if limits.empty else limits


def _consistency(f: Fields) -> tuple[Sourced[str] | None, Sourced[str] | None]:
    """MultiRegionConsistency (STRONG: MRSC) and the first GlobalTableWitnesses region."""
    mode = f.text(("MultiRegionConsistency",), "MultiRegionConsistency")
    witnesses = [f.text((*at, "Region"), "Region") for at in f.items(("GlobalTableWitnesses",), "Witnesses")]
    consistency = Sourced(mode.value.lower(), mode.origin, mode.estimate) if mode is not None else None
    return consistency, next((w for w in witnesses if w is not None), None)


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
    home_gsis = {str(f.raw((*at, "IndexName"))): at for at in f.items((*home, "GlobalSecondaryIndexes"), "Indexes")}
    for i, where in enumerate(regions):
        if i == home_index:
            continue
        replica: Path = ("Replicas", i)
        replicas.append(_replica(f, home, replica, where, provisioned, home_gsis))
        lost += _differences(f, home, replica, where.value)
    gsis = []
    for at in f.items(("GlobalSecondaryIndexes",), "GlobalSecondaryIndexes"):
        name = f.text((*at, "IndexName"), "IndexName")
        if name is None:
            raise f.fail(at, "a global secondary index needs an IndexName")
        g_partition, g_sort = key_schema(f, (*at, "KeySchema"), types)
        g_reads, g_read_scaling = _reads(f, home_gsis[name.value]) if name.value in home_gsis else (None, None)
        g_write = scaling(f, (*at, "WriteProvisionedThroughputSettings", "WriteCapacityAutoScalingSettings"))
        home_gsi = home_gsis.get(name.value)
        gsis.append(GsiDef(name, g_partition, g_sort, projection(f, (*at, "Projection")),
                           g_reads if provisioned else None, None, g_read_scaling if provisioned else None,
                           g_write if provisioned else None,
                           max_throughput=None if provisioned else _max_throughput(f, at, home_gsi),
                           warm_throughput=warm(f, at)))
    consistency, witness = _consistency(f)
    insights, kinesis = extras(f, home_region.value, home)
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
        tags=tag_list(f, (*home, "Tags")), gsis=tuple(gsis), lsis=lsis(f, types), dropped=tuple(lost),
        max_throughput=None if provisioned else _max_throughput(f, (), home), warm_throughput=warm(f, ()),
        multi_region_consistency=consistency, witness_region=witness, contributor_insights=insights,
        kinesis_streams=kinesis)
    return table, notices
