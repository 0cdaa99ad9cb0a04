"""`aws dynamodb describe-table` output -> `TableDefinition`.

The JSON the AWS CLI prints (`{"Table": {...}}`, the DescribeTable API response) says what
the table runs with now: capacity, indexes, replicas, stream, class, encryption, size.
It does not carry TTL, point-in-time recovery, tags or auto scaling (other API calls), so
those are named as missing with the command that prints them.
"""

from __future__ import annotations

import re
from typing import Any, cast

from ...spec.yaml_source import format_path
from ..located import Located, Path, walk
from ..model import (
    STREAM_VIEWS,
    TABLE_CLASSES,
    Dropped,
    GsiDef,
    Imported,
    KeyAttr,
    KeyType,
    Limits,
    LsiDef,
    Options,
    ReplicaDef,
    Sourced,
    TableDefinition,
    given,
)

KIND = "describe-table"
GIB = 1024**3


def is_describe_table(data: Any) -> bool:
    return isinstance(data, dict) and isinstance(data.get("Table"), dict) and "KeySchema" in data["Table"]


class _Reader:
    """Typed access to `Table.*` of one file, every value tagged with its JSON path."""

    def __init__(self, loc: Located):
        self.loc = loc

    def origin(self, path: Path) -> str:
        return f"describe-table {format_path(path)}"

    def get(self, path: Path, kinds: tuple[type, ...], what: str, required: bool = False) -> Any:
        value = walk(self.loc.data, path)
        if value is None:
            if required:
                raise self.loc.fail(path, f"{what} is missing: this is not complete describe-table output; "
                                    "save `aws dynamodb describe-table --table-name NAME --output json` again")
            return None
        return self.loc.check(path, value, kinds, what)

    def items(self, path: Path, what: str) -> list[tuple[Path, dict[str, Any]]]:
        found = self.get(path, (list,), what) or []
        return [((*path, i), self.loc.check((*path, i), item, (dict,), what)) for i, item in enumerate(found)]

    def key(self, path: Path, types: dict[str, KeyType]) -> tuple[Sourced[KeyAttr], Sourced[KeyAttr] | None]:
        """(partition, sort) of a KeySchema, each typed from AttributeDefinitions."""
        parts: dict[str, Sourced[KeyAttr]] = {}
        for at, element in self.items(path, "KeySchema"):
            name = self.loc.check((*at, "AttributeName"), element.get("AttributeName"), (str,), "AttributeName")
            role = self.loc.check((*at, "KeyType"), element.get("KeyType"), (str,), "KeyType")
            if name not in types:
                raise self.loc.fail(at, f"key attribute {name!r} has no AttributeDefinitions entry; "
                                    "save complete describe-table output")
            parts[role] = given(KeyAttr(name, types[name]), self.origin(at) + " + AttributeDefinitions")
        if "HASH" not in parts:
            raise self.loc.fail(path, "the KeySchema has no HASH key; save complete describe-table output")
        return parts["HASH"], parts.get("RANGE")

    def projection(self, path: Path) -> Sourced[str | tuple[str, ...]]:
        kind = self.get((*path, "ProjectionType"), (str,), "ProjectionType") or "ALL"
        if kind == "INCLUDE":
            names = tuple(self.get((*path, "NonKeyAttributes"), (list,), "NonKeyAttributes") or ())
            return given(names, self.origin((*path, "NonKeyAttributes")))
        return given(kind.lower(), self.origin((*path, "ProjectionType")))


def _types(r: _Reader) -> dict[str, KeyType]:
    out: dict[str, KeyType] = {}
    for at, d in r.items(("Table", "AttributeDefinitions"), "AttributeDefinitions"):
        kind = r.loc.check((*at, "AttributeType"), d.get("AttributeType"), (str,), "AttributeType")
        if kind not in ("S", "N", "B"):
            raise r.loc.fail((*at, "AttributeType"), f"AttributeType {kind!r}: a key is S, N or B")
        out[r.loc.check((*at, "AttributeName"), d.get("AttributeName"), (str,), "AttributeName")] = cast(KeyType, kind)
    return out


def _capacity(r: _Reader, path: Path) -> tuple[Sourced[int] | None, Sourced[int] | None]:
    out = []
    for field in ("ReadCapacityUnits", "WriteCapacityUnits"):
        value = r.get((*path, field), (int,), field)
        out.append(given(value, r.origin((*path, field))) if value else None)
    return out[0], out[1]


def _size(r: _Reader) -> dict[str, Any]:
    size = r.get(("Table", "TableSizeBytes"), (int,), "TableSizeBytes")
    count = r.get(("Table", "ItemCount"), (int,), "ItemCount")
    out: dict[str, Any] = {}
    if size is not None:
        out["storage_gb"] = given(round(size / GIB, 3), r.origin(("Table", "TableSizeBytes")) + " / 2^30")
    if count is not None:
        out["item_count"] = given(count, r.origin(("Table", "ItemCount")))
    if size and count:
        kb = min(400.0, max(0.01, round(size / count / 1024, 2)))
        out["item_size_kb"] = given(kb, "describe-table Table.TableSizeBytes / Table.ItemCount / 1024")
    return out


def _gsis(r: _Reader, types: dict[str, KeyType], provisioned: bool) -> tuple[GsiDef, ...]:
    out = []
    for at, _ in r.items(("Table", "GlobalSecondaryIndexes"), "GlobalSecondaryIndexes"):
        partition, sort = r.key((*at, "KeySchema"), types)
        reads, writes = _capacity(r, (*at, "ProvisionedThroughput")) if provisioned else (None, None)
        name = r.get((*at, "IndexName"), (str,), "IndexName", required=True)
        most, warm = _throughputs(r, at, provisioned)
        out.append(GsiDef(given(name, r.origin((*at, "IndexName"))), partition, sort,
                          r.projection((*at, "Projection")), reads, writes, max_throughput=most, warm_throughput=warm))
    return tuple(out)


def _lsis(r: _Reader, types: dict[str, KeyType]) -> tuple[LsiDef, ...]:
    out = []
    for at, _ in r.items(("Table", "LocalSecondaryIndexes"), "LocalSecondaryIndexes"):
        _, sort = r.key((*at, "KeySchema"), types)
        if sort is None:
            raise r.loc.fail(at, "a local secondary index needs a RANGE key; save complete describe-table output")
        name = r.get((*at, "IndexName"), (str,), "IndexName", required=True)
        out.append(LsiDef(given(name, r.origin((*at, "IndexName"))), sort, r.projection((*at, "Projection"))))
    return tuple(out)


def _dropped(r: _Reader, home: str) -> list[Dropped]:
    out = []
    key = r.get(("Table", "SSEDescription", "KMSMasterKeyArn"), (str,), "KMSMasterKeyArn")
    if key:
        out.append(Dropped(f"AWS KMS key {key}", r.origin(("Table", "SSEDescription", "KMSMasterKeyArn")),
                           "Bigtable cannot use an AWS key: a CMEK needs a Cloud KMS key; add "
                           f"instance.kms_keys: {{{home}: projects/P/locations/L/keyRings/R/cryptoKeys/K}}"))
    return out


def _limits(r: _Reader, path: Path, reads: str, writes: str) -> Limits | None:
    """OnDemandThroughput / WarmThroughput at `path`; AWS shows -1 (or nothing) for no limit."""
    found = []
    for field in (reads, writes):
        value = r.get((*path, field), (int, float), field)
        found.append(given(float(value), r.origin((*path, field))) if value is not None and value > 0 else None)
    return None if found == [None, None] else Limits(found[0], found[1])


def _throughputs(r: _Reader, path: Path, provisioned: bool) -> tuple[Limits | None, Limits | None]:
    """(`max_throughput` (on-demand only), `warm_throughput`) of the table or an index."""
    most = None if provisioned else _limits(r, (*path, "OnDemandThroughput"), "MaxReadRequestUnits",
                                            "MaxWriteRequestUnits")
    return most, _limits(r, (*path, "WarmThroughput"), "ReadUnitsPerSecond", "WriteUnitsPerSecond")


def _consistency(r: _Reader) -> tuple[Sourced[str] | None, Sourced[str] | None]:
    """MultiRegionConsistency (STRONG: MRSC) and the witness of GlobalTableWitnesses."""
    mode = r.get(("Table", "MultiRegionConsistency"), (str,), "MultiRegionConsistency")
    witness = next((w for at, item in r.items(("Table", "GlobalTableWitnesses"), "GlobalTableWitnesses")
                    if (w := item.get("RegionName")) is not None and isinstance(w, str)), None)
    witness_at = ("Table", "GlobalTableWitnesses", 0, "RegionName")
    return (given(mode.lower(), r.origin(("Table", "MultiRegionConsistency"))) if mode else None,
            given(witness, r.origin(witness_at)) if witness else None)


def _replicas(r: _Reader, home: str, table_class: str, provisioned: bool) -> tuple[tuple[ReplicaDef, ...],
                                                                                 list[Dropped]]:
    """Replicas besides the home region, with their own read units (provisioned tables:
    ProvisionedThroughputOverride, of the table and of its indexes) and class."""
    replicas, dropped = [], []
    for at, item in r.items(("Table", "Replicas"), "Replicas"):
        region = r.loc.check((*at, "RegionName"), item.get("RegionName"), (str,), "RegionName")
        if region == home:
            continue
        reads = (r.get((*at, "ProvisionedThroughputOverride", "ReadCapacityUnits"), (int,), "ReadCapacityUnits")
                 if provisioned else None)
        gsi_reads = []
        for g_at, g in r.items((*at, "GlobalSecondaryIndexes"), "GlobalSecondaryIndexes") if provisioned else ():
            own = r.get((*g_at, "ProvisionedThroughputOverride", "ReadCapacityUnits"), (int,), "ReadCapacityUnits")
            if own and isinstance(g.get("IndexName"), str):
                where = r.origin((*g_at, "ProvisionedThroughputOverride", "ReadCapacityUnits"))
                gsi_reads.append((g["IndexName"], given(own, where), None))
        klass = r.get((*at, "ReplicaTableClassSummary", "TableClass"), (str,), "TableClass")
        class_at = (*at, "ReplicaTableClassSummary", "TableClass")
        own_class = (given(TABLE_CLASSES.get(klass, "standard"), r.origin(class_at))
                     if klass and TABLE_CLASSES.get(klass) != table_class else None)
        replicas.append(ReplicaDef(given(region, r.origin((*at, "RegionName"))),
                                   given(reads, r.origin((*at, "ProvisionedThroughputOverride", "ReadCapacityUnits")))
                                   if reads else None, gsi_reads=tuple(gsi_reads), table_class=own_class))
        own_max = r.get((*at, "OnDemandThroughputOverride", "MaxReadRequestUnits"), (int,), "MaxReadRequestUnits")
        if own_max and own_max > 0:
            dropped.append(Dropped(f"on-demand max read throughput {own_max} of replica {region}",
                                   r.origin((*at, "OnDemandThroughputOverride", "MaxReadRequestUnits")),
                                   "a spec's max_throughput is the table's (the home region's): the replica is "
                                   "sized from its reads without that cap"))
        if item.get("KMSMasterKeyId"):
            dropped.append(Dropped(f"AWS KMS key of replica {region}", r.origin((*at, "KMSMasterKeyId")),
                                   f"a CMEK needs a Cloud KMS key: add instance.kms_keys.{region}"))
    return tuple(replicas), dropped


def read(loc: Located, options: Options) -> Imported:
    """The one table of a describe-table file."""
    r = _Reader(loc)
    name = r.get(("Table", "TableName"), (str,), "TableName", required=True)
    arn = r.get(("Table", "TableArn"), (str,), "TableArn") or ""
    in_arn = re.match(r"arn:aws[a-z-]*:dynamodb:([a-z0-9-]+):", arn)
    region, notices = options.region_of(name, given(in_arn.group(1), r.origin(("Table", "TableArn")))
                                        if in_arn else None)
    types = _types(r)
    partition, sort = r.key(("Table", "KeySchema"), types)
    mode = r.get(("Table", "BillingModeSummary", "BillingMode"), (str,), "BillingMode")
    billing = (given("on_demand" if mode == "PAY_PER_REQUEST" else "provisioned",
                     r.origin(("Table", "BillingModeSummary", "BillingMode")))
               if mode else given("provisioned", "describe-table (no BillingModeSummary: PROVISIONED)"))
    provisioned = billing.value == "provisioned"
    reads, writes = _capacity(r, ("Table", "ProvisionedThroughput")) if provisioned else (None, None)
    view = r.get(("Table", "StreamSpecification", "StreamViewType"), (str,), "StreamViewType")
    enabled = r.get(("Table", "StreamSpecification", "StreamEnabled"), (bool,), "StreamEnabled")
    stream = (given(STREAM_VIEWS.get(view, "none"), r.origin(("Table", "StreamSpecification", "StreamViewType")))
              if enabled and view else given("none", "describe-table (no enabled StreamSpecification)"))
    klass = r.get(("Table", "TableClassSummary", "TableClass"), (str,), "TableClass")
    table_class = (given(TABLE_CLASSES.get(klass, "standard"), r.origin(("Table", "TableClassSummary", "TableClass")))
                   if klass else given("standard", "describe-table (no TableClassSummary: STANDARD)"))
    protection = r.get(("Table", "DeletionProtectionEnabled"), (bool,), "DeletionProtectionEnabled")
    replicas, lost = _replicas(r, region.value, table_class.value, provisioned)
    most, warm = _throughputs(r, ("Table",), provisioned)
    consistency, witness = _consistency(r)
    where = f"--table-name {name} --region {region.value}"
    missing: tuple[str, ...] = (f"describe-table does not show TTL: `aws dynamodb describe-time-to-live {where}`; "
               "add `ttl: {attribute: NAME}` if it is enabled",
               "describe-table does not show tags: "
               f"`aws dynamodb list-tags-of-resource --resource-arn {arn or 'ARN'}`; add them under `tags:`")
    if provisioned:
        missing += ("describe-table does not show auto scaling: `aws application-autoscaling "
                    f"describe-scalable-targets --service-namespace dynamodb --resource-id table/{name}`; "
                    "add `autoscaling:` if it is on",)
    table = TableDefinition(
        name=given(name, r.origin(("Table", "TableName"))), region=region, partition=partition, sort=sort,
        billing=billing, reads=reads, writes=writes, replicas=replicas, stream=stream, table_class=table_class,
        deletion_protection=(given(protection, r.origin(("Table", "DeletionProtectionEnabled")))
                             if protection is not None else None),
        gsis=_gsis(r, types, provisioned), lsis=_lsis(r, types), dropped=tuple(_dropped(r, region.value) + lost),
        missing=missing, **_size(r), max_throughput=most, warm_throughput=warm,
        multi_region_consistency=consistency, witness_region=witness)
    return Imported(loc.file, KIND, (table,), tuple(notices))

