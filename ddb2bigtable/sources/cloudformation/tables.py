"""`AWS::DynamoDB::Table` and `AWS::Serverless::SimpleTable` -> `TableDefinition`.

A property the template leaves out takes CloudFormation's (or SAM's) default, which is
what the deployed table runs with, so it is a fact with that origin, not an estimate:
no BillingMode is PROVISIONED, no StreamSpecification no stream, a SimpleTable without
ProvisionedThroughput is PAY_PER_REQUEST with the key `id` (String).
"""

from __future__ import annotations

from ..located import Path
from ..model import Dropped, GsiDef, KeyAttr, KeyType, Sourced, TableDefinition, given
from .fields import (
    Fields,
    attribute_types,
    capacity,
    dropped,
    extras,
    key_schema,
    lsis,
    on_demand_max,
    pitr,
    projection,
    stream,
    table_class,
    tag_list,
    ttl,
    warm,
)

SAM_TYPES: dict[str, KeyType] = {"String": "S", "Number": "N", "Binary": "B"}


def table_name(f: Fields) -> Sourced[str]:
    name = f.text(("TableName",), "TableName")
    if name is not None:
        return name
    return Sourced(f.logical, f"CloudFormation {f.logical} (no TableName)",
                   f"CloudFormation names the table <stack>-{f.logical}-<random> when TableName is absent: put the "
                   "deployed name here (`aws cloudformation describe-stack-resource --logical-resource-id "
                   f"{f.logical}`)")


def billing(f: Fields) -> Sourced[str]:
    mode = f.text(("BillingMode",), "BillingMode")
    if mode is None:
        return given("provisioned", f.origin(()) + " (no BillingMode: PROVISIONED)")
    if mode.value not in ("PROVISIONED", "PAY_PER_REQUEST") and not mode.is_estimate:
        raise f.fail(("BillingMode",), f"BillingMode {mode.value!r}: CloudFormation takes PROVISIONED or "
                     "PAY_PER_REQUEST")
    return Sourced("on_demand" if mode.value == "PAY_PER_REQUEST" else "provisioned", mode.origin, mode.estimate)


def _flag_or_default(f: Fields, field: str) -> Sourced[bool]:
    return f.flag((field,), field) or given(False, f.origin(()) + f" (no {field}: false)")


def read_table(f: Fields, region: Sourced[str]) -> TableDefinition:
    """One `AWS::DynamoDB::Table` resource."""
    types = attribute_types(f)
    partition, sort = key_schema(f, ("KeySchema",), types)
    mode = billing(f)
    provisioned = mode.value == "provisioned"
    gsis = []
    for at in f.items(("GlobalSecondaryIndexes",), "GlobalSecondaryIndexes"):
        name = f.text((*at, "IndexName"), "IndexName")
        if name is None:
            raise f.fail(at, "a global secondary index needs an IndexName")
        g_partition, g_sort = key_schema(f, (*at, "KeySchema"), types)
        g_reads, g_writes = capacity(f, (*at, "ProvisionedThroughput"), provisioned)
        gsis.append(GsiDef(name, g_partition, g_sort, projection(f, (*at, "Projection")), g_reads, g_writes,
                           max_throughput=None if provisioned else on_demand_max(f, at), warm_throughput=warm(f, at)))
    enabled, days = pitr(f, ("PointInTimeRecoverySpecification",))
    lost = dropped(f) + [d for at in f.items(("GlobalSecondaryIndexes",), "GlobalSecondaryIndexes")
                         for d in [*dropped(f, at), *_index_insights(f, at)]]
    insights, kinesis = extras(f, region.value)
    reads, writes = capacity(f, ("ProvisionedThroughput",), provisioned)
    klass = table_class(f, ("TableClass",))
    return TableDefinition(
        name=table_name(f), region=region, partition=partition, sort=sort, billing=mode, reads=reads, writes=writes,
        ttl_attribute=ttl(f), stream=stream(f), pitr=enabled, pitr_days=days, table_class=klass,
        deletion_protection=_flag_or_default(f, "DeletionProtectionEnabled"),
        tags=tag_list(f, ("Tags",)), gsis=tuple(gsis), lsis=lsis(f, types), dropped=tuple(lost),
        max_throughput=None if provisioned else on_demand_max(f), warm_throughput=warm(f),
        contributor_insights=insights, kinesis_streams=kinesis)


def _index_insights(f: Fields, at: Path) -> list[Dropped]:
    """An index's own Contributor Insights: the spec's flag is the table's."""
    on = f.flag((*at, "ContributorInsightsSpecification", "Enabled"), "ContributorInsightsSpecification")
    return [Dropped("contributor insights of an index", on.origin, "Key Visualizer shows the view's hot keys too; "
                    "set the table's contributor_insights to get the plan's warning")] if on and on.value else []


def read_simple_table(f: Fields, region: Sourced[str]) -> TableDefinition:
    """One `AWS::Serverless::SimpleTable`: a partition key only, SAM's defaults otherwise."""
    key_name = f.text(("PrimaryKey", "Name"), "PrimaryKey.Name") or given("id", f.origin(()) + " (no PrimaryKey: id)")
    sam_type = f.text(("PrimaryKey", "Type"), "PrimaryKey.Type")
    if sam_type is not None and sam_type.value not in SAM_TYPES and not sam_type.is_estimate:
        raise f.fail(("PrimaryKey", "Type"), f"PrimaryKey.Type {sam_type.value!r}: SAM takes String, Number or Binary")
    kind: KeyType = SAM_TYPES.get(sam_type.value, "S") if sam_type else "S"
    origin = (f"{key_name.origin}, {sam_type.origin}" if sam_type and f.has(("PrimaryKey", "Name"))
              else sam_type.origin if sam_type
              else f.origin(()) + (" (no PrimaryKey.Type: String)" if f.has(("PrimaryKey", "Name"))
                                   else " (no PrimaryKey: id, String)"))
    partition = Sourced(KeyAttr(key_name.value, kind), origin, key_name.estimate)
    provisioned = f.has(("ProvisionedThroughput",))
    mode = (given("provisioned", f.origin(("ProvisionedThroughput",))) if provisioned
            else given("on_demand", f.origin(()) + " (no ProvisionedThroughput: SAM makes it PAY_PER_REQUEST)"))
    tags = tuple((str(k), v) for k in (f.raw(("Tags",)) or {}) if (v := f.text(("Tags", k), "Tags")) is not None)
    reads, writes = capacity(f, ("ProvisionedThroughput",), provisioned)
    return TableDefinition(
        name=table_name(f), region=region, partition=partition, sort=None, billing=mode, reads=reads, writes=writes,
        stream=given("none", f.origin(()) + " (SimpleTable: no stream)"),
        pitr=given(False, f.origin(()) + " (SimpleTable: no point-in-time recovery)"),
        table_class=given("standard", f.origin(()) + " (SimpleTable: STANDARD)"),
        deletion_protection=given(False, f.origin(()) + " (SimpleTable: no deletion protection)"),
        tags=tags, dropped=tuple(dropped(f)))
