"""The spec v1 model: what a team tells us about its DynamoDB tables and their rows.

These dataclasses mirror the YAML field names (docs/spec.md) one to one, so a
reader can go from a spec line to the attribute that holds it. They are built only by
`reading.read_spec`, after the JSON Schema and the cross-checks have passed, so the
planner can trust every value without re-checking it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

KeyType = Literal["S", "N", "B"]
Billing = Literal["provisioned", "on_demand"]
ReadConsistency = Literal["eventual", "strong", "transactional"]
WriteMode = Literal["standard", "transactional"]
StreamView = Literal["none", "keys_only", "new_image", "old_image", "new_and_old_images"]
TableClass = Literal["standard", "standard_infrequent_access"]
StorageType = Literal["ssd", "hdd"]
GcMode = Literal["union", "intersection"]
MultiRegionConsistency = Literal["eventual", "strong"]


@dataclass(frozen=True)
class Location:
    """Where a value sits in its YAML file, for messages a user can jump to."""

    file: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


@dataclass(frozen=True)
class KeyAttribute:
    name: str
    type: KeyType


@dataclass(frozen=True)
class KeySchema:
    partition: KeyAttribute
    sort: KeyAttribute | None = None


@dataclass(frozen=True)
class SourceAutoscaling:
    """DynamoDB application auto scaling of a provisioned table or GSI (units, not ops).

    Reads and writes scale separately in AWS (each is its own scalable target), so either
    pair may be absent: a table with fixed reads and autoscaled writes has only
    `min_writes`/`max_writes`. `target_utilization` is the target of both unless
    `read_target_utilization` or `write_target_utilization` says otherwise.
    """

    min_reads: int | None = None
    max_reads: int | None = None
    min_writes: int | None = None
    max_writes: int | None = None
    target_utilization: float = 70.0  # percent, as in the AWS console
    read_target_utilization: float | None = None
    write_target_utilization: float | None = None

    @property
    def reads(self) -> tuple[int, int] | None:
        """(min, max) RCU when reads scale; None when they are fixed."""
        return None if self.min_reads is None or self.max_reads is None else (self.min_reads, self.max_reads)

    @property
    def writes(self) -> tuple[int, int] | None:
        return None if self.min_writes is None or self.max_writes is None else (self.min_writes, self.max_writes)

    @property
    def targets(self) -> tuple[float, ...]:
        """The target utilisation of each dimension that scales (a fixed one has none)."""
        out = []
        if self.reads is not None:
            out.append(self.read_target_utilization or self.target_utilization)
        if self.writes is not None:
            out.append(self.write_target_utilization or self.target_utilization)
        return tuple(out)


@dataclass(frozen=True)
class ReadAutoscaling:
    """A replica's own read auto scaling (AWS scales a replica's reads, never its writes)."""

    min_reads: int
    max_reads: int
    target_utilization: float = 70.0


@dataclass(frozen=True)
class Throughput:
    """Request units per second, either or both: on-demand maximum or warm throughput."""

    reads_per_second: float | None = None
    writes_per_second: float | None = None


@dataclass(frozen=True)
class Rate:
    """On-demand request units per second (RRU/s and WRU/s)."""

    reads_per_second: float
    writes_per_second: float


@dataclass(frozen=True)
class ReplicaGsi:
    """A replica's own read capacity of one of the table's GSIs (writes follow the table)."""

    name: str
    reads: int | None = None
    autoscaling: ReadAutoscaling | None = None


@dataclass(frozen=True)
class PointInTimeRecovery:
    enabled: bool = False
    recovery_period_days: int = 35


@dataclass(frozen=True)
class Replica:
    """A global-table replica besides the home region.

    `reads` is the replica's own provisioned RCU (or peak RRU/s when on-demand); None
    means the same as the home region, which is what AWS does by default. The other
    fields are the replica's own settings where AWS lets a replica differ; None (or
    empty) means the table's.
    """

    region: str
    reads: int | None = None
    autoscaling: ReadAutoscaling | None = None
    gsis: tuple[ReplicaGsi, ...] = ()
    table_class: TableClass | None = None
    point_in_time_recovery: PointInTimeRecovery | None = None

    def gsi(self, name: str) -> ReplicaGsi | None:
        return next((g for g in self.gsis if g.name == name), None)


@dataclass(frozen=True)
class Ttl:
    attribute: str


@dataclass(frozen=True)
class Gsi:
    name: str
    key: KeySchema
    projection: str | tuple[str, ...] = "all"  # "all" | "keys_only" | attribute names
    reads: int | None = None  # provisioned RCU (on-demand: peak RRU/s); None = 0
    writes: int | None = None
    autoscaling: SourceAutoscaling | None = None
    max_throughput: Throughput | None = None  # on-demand ceiling
    warm_throughput: Throughput | None = None  # floor for the autoscaling minimum


@dataclass(frozen=True)
class Lsi:
    name: str
    sort: KeyAttribute
    projection: str | tuple[str, ...] = "all"


@dataclass(frozen=True)
class Source:
    """The DynamoDB table as it runs today."""

    table: str
    region: str
    key: KeySchema
    billing: Billing = "provisioned"
    reads: int = 0
    writes: int = 0
    autoscaling: SourceAutoscaling | None = None
    peak: Rate | None = None
    average: Rate | None = None
    read_consistency: ReadConsistency = "eventual"
    write_mode: WriteMode = "standard"
    item_size_kb: float = 1.0
    storage_gb: float = 0.0
    item_count: int | None = None
    replicas: tuple[Replica, ...] = ()
    ttl: Ttl | None = None
    stream: StreamView = "none"
    point_in_time_recovery: PointInTimeRecovery = field(default_factory=PointInTimeRecovery)
    table_class: TableClass = "standard"
    deletion_protection: bool = False
    conditional_writes: bool = False
    tags: dict[str, str] = field(default_factory=dict)
    gsis: tuple[Gsi, ...] = ()
    lsis: tuple[Lsi, ...] = ()
    max_throughput: Throughput | None = None  # on-demand ceiling for peak (OnDemandThroughput)
    warm_throughput: Throughput | None = None  # floor for the autoscaling minimum (WarmThroughput)
    multi_region_consistency: MultiRegionConsistency = "eventual"
    witness_region: str | None = None  # MRSC witness: no replica, no data
    contributor_insights: bool = False
    kinesis_streams: tuple[str, ...] = ()  # Kinesis Data Streams destination ARNs

    @property
    def regions(self) -> tuple[str, ...]:
        """Home region first, then replicas in spec order."""
        return (self.region, *(r.region for r in self.replicas))

    @property
    def index_keys(self) -> tuple[tuple[str, str], ...]:
        """(index name, key attribute) for every key attribute of the global and local
        secondary indexes: an item without one is left out of that index (a sparse index)."""
        pairs = [(g.name, k.name) for g in self.gsis for k in (g.key.partition, g.key.sort) if k is not None]
        return (*pairs, *((lsi.name, lsi.sort.name) for lsi in self.lsis))


@dataclass(frozen=True)
class GcRule:
    """An explicit garbage-collection policy for one column family.

    Either limit may be absent; `mode` says how two limits combine (Bigtable's union
    deletes a cell when either limit is exceeded, intersection only when both are).
    """

    max_versions: int | None = None
    max_age_seconds: int | None = None
    mode: GcMode = "union"


@dataclass(frozen=True)
class FamilyMapping:
    name: str
    gc: GcRule | None = None


@dataclass(frozen=True)
class AttributeMapping:
    """How one attribute's value is stored (docs/spec.md, `mapping.attributes`).

    `type` is the declared DynamoDB type (`counter` = N stored as big-endian int64);
    `layout` chooses between the default (JSON for sets, maps and lists) and the opt-in
    layouts: `family` (members or keys become qualifiers) and `timestamps` (list items as
    cells at insertion timestamps).
    """

    name: str
    type: str | None = None
    layout: Literal["json", "family", "timestamps"] = "json"
    family: str | None = None


@dataclass(frozen=True)
class MappingRule:
    """One row/cell rule, chosen for items whose sort key starts with `sort_key_prefix`
    (and partition key with `partition_key_prefix`); the first matching rule wins, and a
    rule with neither prefix matches every item.

    Templates use `{attribute}` placeholders; `value` names an attribute or a template;
    `timestamp` names an attribute, `write_time` or `ttl`. Inside a rule a key attribute's
    placeholder holds the key without the rule's prefix (`Payment-0680` -> `0680`): the
    prefix is constant there, so nothing is lost and a row decodes back to its key. That
    is what lets the seeds' invoices live in row `0123`, not `Invoice-0123`.
    """

    sort_key_prefix: str | None
    row_key: str | None = None
    family: str | None = None
    qualifier: str | None = None
    value: str | None = None
    timestamp: str | None = None
    partition_key_prefix: str | None = None


@dataclass(frozen=True)
class Salt:
    """Optional salting prefix for hot sequential keys (seeds: "keys to avoid")."""

    buckets: int


@dataclass(frozen=True)
class Mapping:
    delimiter: str = "#"
    default_family: str = "cf"
    salt: Salt | None = None
    families: tuple[FamilyMapping, ...] = ()
    attributes: tuple[AttributeMapping, ...] = ()
    rules: tuple[MappingRule, ...] = ()


TypePath = tuple[str | int, ...]  # where a declared type sits under its table: ("mapping", "attributes", 2, "type")


@dataclass(frozen=True)
class TableSpec:
    id: str
    source: Source
    mapping: Mapping = field(default_factory=Mapping)
    location: Location | None = None
    # Where each declared type was written (`type_declarations`' paths), so an error about
    # one points at its line; not part of what the table is (equality, repr, fingerprints).
    type_locations: dict[TypePath, Location] = field(default_factory=dict, compare=False, repr=False)

    def type_declarations(self) -> list[tuple[str, str, TypePath]]:
        """(attribute, type, path under the table) of every type the spec states, in the
        order they take precedence: the key schema, GSI keys, LSI sort keys, then
        `mapping.attributes` with a `type`."""
        source = self.source
        keys: list[tuple[TypePath, KeyAttribute | None]] = [
            (("source", "key", "partition"), source.key.partition), (("source", "key", "sort"), source.key.sort)]
        for i, gsi in enumerate(source.gsis):
            keys += [(("source", "gsis", i, "key", "partition"), gsi.key.partition),
                     (("source", "gsis", i, "key", "sort"), gsi.key.sort)]
        keys += [(("source", "lsis", i, "sort"), lsi.sort) for i, lsi in enumerate(source.lsis)]
        found = [(key.name, key.type, (*path, "type")) for path, key in keys if key is not None]
        return found + [(a.name, a.type, ("mapping", "attributes", i, "type"))
                        for i, a in enumerate(self.mapping.attributes) if a.type is not None]


@dataclass(frozen=True)
class InstanceSpec:
    id: str
    display_name: str | None = None
    labels: dict[str, str] = field(default_factory=dict)
    storage: StorageType = "ssd"
    node_scaling_factor: int = 1
    kms_keys: dict[str, str] = field(default_factory=dict)  # AWS region -> CMEK key name
    row_affinity: bool = False  # `serving` keeps a row on one cluster (read-your-writes)
    zones: dict[str, str] = field(default_factory=dict)  # AWS region -> Bigtable zone, to pin a cluster
    location: Location | None = None


@dataclass(frozen=True)
class Spec:
    """One spec file: one Bigtable instance and the DynamoDB tables moving into it."""

    path: str
    instance: InstanceSpec
    tables: tuple[TableSpec, ...]
