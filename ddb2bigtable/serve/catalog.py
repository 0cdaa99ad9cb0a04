"""The tables serve answers for: DynamoDB table name -> the spec's table, its codec, the
Bigtable table and app profiles, from the stage's plan.

An application names a table as it did in DynamoDB (`source.table`: `Movies`), and serve
reads and writes the Bigtable table the plan made for it (`movies`) in the stage's
instance. Reads that may be eventually consistent go through the `serving` profile (the
nearest cluster); ConsistentRead and every write that checks a condition go through the
table's single-cluster profile (`txn-<region>`, planned for tables with
`conditional_writes`), since CheckAndMutateRow needs single-cluster routing, or `serving`
where the plan has none (one cluster: the same data).

The tables are those of the stage's specs, or of the spec files `serve --stage S SPEC...`
names instead (every other setting of the stage as it is): `served_specs` gives both the
command and each worker process the same list, which serve passes to its workers with its
other settings (protocol/server.py), so nothing is written to serve given specs.

On emulator stages an application may also create tables (CreateTable, created_tables.py):
those are kept in the instance's registry table and enter `Catalog.created` when a
request names them, so every worker process finds them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any

from ..codec.codec import Codec
from ..codec.items import AttributeValue, Item
from ..codec.mutations import CodecError, Expired
from ..codec.row_keys import key_part, salt_prefix
from ..codec.timestamps import ttl_timestamp
from ..codec.type_inference import AttributeTypes
from ..plan.model import InstancePlan
from ..plan.planner import plan_stage
from ..spec.families import family_names
from ..spec.model import Spec, TableSpec
from ..spec.reading import read_specs
from ..spec.stage import Stage, load_stage
from .errors import validation

SERVING = "serving"
# DynamoDB's key size limits: partition key 2048 bytes, sort key 1024 (AWS, "Quotas in Amazon
# DynamoDB", https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html, read 2026-11-25).
KEY_BYTES = (2048, 1024)


@dataclass(frozen=True)
class Created:
    """What the registry keeps of a table serve created: the request's definition
    (table_requests.KEPT), the table's id and creation time as DescribeTable reports them,
    and the TTL attribute UpdateTimeToLive set (None: TTL disabled)."""

    definition: dict[str, Any]
    table_uuid: str
    created_seconds: float
    ttl: str | None = None


@dataclass(frozen=True)
class Home:
    """Where CreateTable puts a new table: the instance of the stage's first spec, the
    region of its first table (the ARN's), and that table's app profiles."""

    instance_id: str
    region: str
    serving_profile: str | None
    consistent_profile: str | None


@dataclass(frozen=True)
class ServedTable:
    name: str  # the DynamoDB table name applications use
    spec: TableSpec
    instance_id: str
    codec: Codec
    serving_profile: str | None
    consistent_profile: str | None
    keys: tuple[str, ...] = field(default=())  # partition key, then sort key if any
    created: Created | None = None  # a table serve created (CreateTable), not the plan

    @cached_property
    def families(self) -> tuple[str, ...]:
        """The families the table's items use: what deleting an item's whole row deletes,
        family by family, so the reserved transaction family's cells (a lock, a
        ClientRequestToken's record) stay (store.client_mutations)."""
        return tuple(family_names(self.spec))

    @property
    def ttl_attribute(self) -> str | None:
        """The TTL attribute: the spec's, or the one UpdateTimeToLive set on a created table."""
        ttl = self.spec.source.ttl
        return ttl.attribute if ttl is not None else self.created.ttl if self.created is not None else None

    def unexpired(self, items: list[Item], now_micros: int) -> list[Item]:
        """The items that have not expired. A spec table's expiry is its cells' time (the
        reader leaves expired cells out: store.live_cells); a created table's cells carry
        their write time, since TTL may be turned on after they were written, so its TTL
        attribute's value is read, by the rule the codec stamps cells with (a Number of
        epoch seconds, ignored more than five years in the past)."""
        ttl = self.created.ttl if self.created is not None else None
        if ttl is None:
            return items
        return [i for i in items if not isinstance(ttl_timestamp(i, ttl, now_micros), Expired)]

    @property
    def key_types(self) -> dict[str, str]:
        key = self.spec.source.key
        return {k.name: k.type for k in (key.partition, key.sort) if k is not None}

    def key_of(self, item: Item) -> Item:
        return {k: item[k] for k in self.keys if k in item}

    def checked_key(self, key: Item) -> Item:
        """The Key parameter, exactly the table's key attributes with their types."""
        if set(key) != set(self.keys):
            raise validation("The provided key element does not match the schema")
        for (name, kind), most in zip(self.key_types.items(), KEY_BYTES, strict=False):
            (tag, inner), = key[name].items()
            if tag != kind:
                raise validation("The provided key element does not match the schema")
            size = len(inner.encode()) if tag == "S" else len(inner) if tag == "B" else 0
            if tag in ("S", "B") and size == 0:
                raise validation(f"One or more parameter values are not valid. The AttributeValue for a key "
                                 f"attribute cannot contain an empty {'string' if tag == 'S' else 'binary'} value. "
                                 f"Key: {name}")
            if size > most:
                raise validation(f"One or more parameter values were invalid: Size of "
                                 f"{'hashkey' if most == KEY_BYTES[0] else 'rangekey'} has exceeded the maximum "
                                 f"size limit of {most} bytes")
        return key

    def check_index_keys(self, item: Item) -> None:
        """An item written holds each secondary index's key attributes, if at all, with the
        type the index defines and not empty, or DynamoDB refuses the whole write."""
        source = self.spec.source
        keys = [(g.name, k) for g in source.gsis for k in (g.key.partition, g.key.sort) if k is not None]
        for index, key in keys + [(s.name, s.sort) for s in source.lsis]:
            if key.name not in item:
                continue
            (tag, inner), = item[key.name].items()
            if tag != key.type:
                raise validation(f"One or more parameter values were invalid: Type mismatch for Index Key {key.name} "
                                 f"Expected: {key.type} Actual: {tag} IndexName: {index}")
            if tag in ("S", "B") and not inner:
                raise validation(f"One or more parameter values are not valid. A value specified for a secondary "
                                 f"index key is not supported. The AttributeValue for a key attribute cannot contain "
                                 f"an empty {'string' if tag == 'S' else 'binary'} value. IndexName: {index}, "
                                 f"IndexKey: {key.name}")

    def row_key(self, keys: Item) -> bytes:
        try:
            return self.codec.row_key(keys)
        except CodecError as error:
            raise validation(f"One or more parameter values were invalid: {error}") from None

    def partition_ranges(self, partition: AttributeValue) -> list[tuple[bytes, bytes | None]] | None:
        """Row ranges [start, end) that hold every item of one partition, one per mapping rule
        that can hold it: the one row when the rule's row key is the partition key alone, else
        the rows starting with it; None when a rule's row key does not start with the
        partition key (then only a scan finds them)."""
        pk = self.keys[0]
        m = self.codec.mapping
        found: set[tuple[bytes, bytes | None]] = set()
        for plan in self.codec.plans:
            wanted = plan.prefixes.get(pk)
            if wanted and not (next(iter(partition)) == "S" and partition["S"].startswith(wanted)):
                continue  # this rule holds no item of this partition
            fields = plan.row.fields
            leading = 0
            while leading < len(fields) and fields[leading] == pk:
                leading += 1
            if leading == 0:
                return None
            values = m.fields.encode(plan, {pk: partition}, (pk,), strip=plan.strips)
            prefix = plan.row.prefix(values, leading)
            if m.salt:
                prefix = salt_prefix(key_part(partition, m.pk.type, pk), m.salt, m.delimiter) + prefix
            found.add((prefix, prefix + b"\x00") if leading == len(fields) else (prefix, after_prefix(prefix)))
        return sorted(found, key=lambda r: r[0])


def after_prefix(prefix: bytes) -> bytes | None:
    """The first key after every key that starts with `prefix` (None: the end of the table)."""
    trimmed = prefix.rstrip(b"\xff")
    return trimmed[:-1] + bytes([trimmed[-1] + 1]) if trimmed else None


@dataclass(frozen=True)
class Catalog:
    tables: dict[str, ServedTable]  # the stage's spec tables, fixed for the worker's life
    project: str
    emulator: bool
    home: Home | None = None
    # Tables serve created, as this worker last read them from the registry: a cache that
    # created_tables.resolve refreshes for the tables each request names.
    created: dict[str, ServedTable] = field(default_factory=dict)

    def get(self, name: Any) -> ServedTable:
        from .errors import not_found
        if not isinstance(name, str) or not name:
            raise validation("1 validation error detected: Value null at 'tableName' failed to satisfy constraint: "
                             "Member must not be null")
        table = self.tables.get(name) or self.created.get(name)
        if table is None:
            raise not_found(name)
        return table


def named_tables(body: dict[str, Any]) -> set[str]:
    """The table names a request names: TableName, BatchGetItem's and BatchWriteItem's
    RequestItems, TransactGetItems' and TransactWriteItems' TransactItems."""
    found = {body.get("TableName")} if isinstance(body.get("TableName"), str) else set()
    if isinstance(body.get("RequestItems"), dict):
        found |= set(body["RequestItems"])
    transact = body.get("TransactItems")
    for entry in transact if isinstance(transact, list) else ():
        for request in entry.values() if isinstance(entry, dict) else ():
            name = request.get("TableName") if isinstance(request, dict) else None
            found.add(name if isinstance(name, str) else None)
    return {name for name in found if isinstance(name, str) and name}


def _profiles(instance: InstancePlan, table: TableSpec) -> tuple[str | None, str | None]:
    ids = {p.id: p for p in instance.app_profiles}
    serving = SERVING if SERVING in ids else None
    home = next((c for c in instance.clusters if table.source.region in c.aws_regions), None)
    single = f"txn-{home.gcp_region}" if home is not None else None
    return serving, single if single in ids else serving


def served_table(table: TableSpec, instance_id: str, types: AttributeTypes, profiles: tuple[str | None, str | None],
                 created: Created | None = None) -> ServedTable:
    key = table.source.key
    return ServedTable(name=table.source.table, spec=table, instance_id=instance_id, codec=Codec(table, types),
                       serving_profile=profiles[0], consistent_profile=profiles[1],
                       keys=tuple(k.name for k in (key.partition, key.sort) if k is not None), created=created)


def served_specs(root: Path, stage_name: str, given: Sequence[str] = ()) -> tuple[Stage, list[Spec]]:
    """The stage and the specs served: the stage's own list, or the `given` spec files
    (wherever they are: paths as given, from the working folder) in its place, as `up SPEC...`
    loads them. InputError with the stage's or the specs' problems."""
    stage = load_stage(stage_name, root)
    if given:
        stage = replace(stage, specs=tuple(str(Path(spec).resolve()) for spec in given))
    return stage, read_specs([str(p) for p in stage.spec_paths(root)])


def catalog(root: Path, stage_name: str, types: dict[str, AttributeTypes], project: str,
            given: Sequence[str] = ()) -> Catalog:
    """Every table of the served specs (`served_specs`), keyed by its DynamoDB name. `types`
    are each table's recorded attribute types by Bigtable table id (the load's, see
    cli/serve_cmd.py)."""
    stage, specs = served_specs(root, stage_name, given)
    plan = plan_stage(stage, specs)
    tables: dict[str, ServedTable] = {}
    for spec, instance in zip(specs, plan.instances, strict=True):
        for table in spec.tables:
            tables[table.source.table] = served_table(table, instance.id, types.get(table.id, {}),
                                                      _profiles(instance, table))
    home = None
    if specs and specs[0].tables:
        first = specs[0].tables[0]
        home = Home(plan.instances[0].id, first.source.region, *_profiles(plan.instances[0], first))
    return Catalog(tables, project, stage.emulator, home)
