"""One `aws_dynamodb_table` (its arguments, from a `.tf` file or `terraform show -json`) -> `TableDefinition`.

Both forms hold the same arguments: blocks (`attribute`, `ttl`, `point_in_time_recovery`,
`global_secondary_index`, `replica`, ...) are lists of mappings, `tags` a mapping. An
argument left out takes the AWS provider's default, which is what the deployed table runs
with, so it is a fact with that origin (no billing_mode is PROVISIONED, no
stream_enabled no stream), not an estimate. Reading goes through `cfn_fields.Fields`, so a
wrong type is exit-2 input and an unresolved expression an estimate, as for CloudFormation.
"""

from __future__ import annotations

from typing import Any

from ...spec.regions import AWS_REGIONS
from ...spec.yaml_source import format_path
from ..cloudformation.fields import CMEK_ADVICE, Fields, projection, table_class
from ..cloudformation.intrinsics import Unresolved
from ..located import Located, Path
from ..model import (
    STREAM_VIEWS,
    Dropped,
    GsiDef,
    KeyAttr,
    KeyType,
    Limits,
    LsiDef,
    ReplicaDef,
    Sourced,
    TableDefinition,
    given,
)

_NOT_IN_SPEC = (
    ("import_table", "import from S3", "load the data with `ddb2bigtable load` from an export"),
)


_PROJECTION = ("projection_type", "non_key_attributes")


class TfFields(Fields):
    """The arguments of Terraform resource `address`, read relative to `base`."""

    def __init__(self, loc: Located, address: str, values: dict[str, Any], base: Path):
        super().__init__(loc, address, values, base)

    def origin(self, rel: Path) -> str:
        return f"Terraform {self.logical}" + (f".{format_path(rel)}" if rel else "")

    def raw(self, rel: Path) -> Any:
        """None for "" and empty blocks too: state writes every argument, unset ones empty."""
        value = super().raw(rel)
        return None if isinstance(value, (str, list, dict)) and not value else value


class _Types(dict[str, KeyType]):
    """Attribute name -> key type; `unknown` says why the attribute blocks are not known (a dynamic
    block over an unknown value), so a key without a type is an estimate instead of an error."""

    unknown: str | None = None


def _types(f: TfFields) -> _Types:
    types = _Types()
    listed = f.raw(("attribute",))
    if isinstance(listed, Unresolved):
        types.unknown = f"{f.origin(('attribute',))} is not known: {listed.reason}"
    for at in f.items(("attribute",), "attribute"):
        name, kind = f.text((*at, "name"), "attribute.name"), f.text((*at, "type"), "attribute.type")
        if name is None or kind is None:
            raise f.fail(at, "an attribute block needs name and type")
        if kind.value not in ("S", "N", "B") and not kind.is_estimate:
            raise f.fail((*at, "type"), f"attribute type {kind.value!r}: key attributes are S, N or B")
        types[name.value] = "N" if kind.value == "N" else "B" if kind.value == "B" else "S"
    return types


def _key(f: TfFields, rel: Path, types: _Types) -> Sourced[KeyAttr] | None:
    name = f.text(rel, format_path(rel))
    if name is None:
        return None
    if name.value not in types and not name.is_estimate:
        if types.unknown is None:
            raise f.fail(rel, f"key attribute {name.value!r} has no attribute block; add one with its type")
        return Sourced(KeyAttr(name.value, "S"), f"{name.origin} + attribute",
                       f"{types.unknown}; its type S is a guess")
    return Sourced(KeyAttr(name.value, types.get(name.value, "S")), f"{name.origin} + attribute", name.estimate)


def _schema_keys(f: TfFields, at: Path, types: _Types) -> tuple[Sourced[KeyAttr] | None, Sourced[KeyAttr] | None]:
    """An index's (partition, sort): `hash_key`/`range_key`, or the newer `key_schema` blocks
    (`attribute_name`, `key_type` HASH or RANGE; a spec index has one of each at most)."""
    schema = f.items((*at, "key_schema"), "key_schema")
    if not schema:
        return _key(f, (*at, "hash_key"), types), _key(f, (*at, "range_key"), types)
    found: dict[str, list[Path]] = {}
    for part in schema:
        role = f.text((*part, "key_type"), "key_schema.key_type")
        found.setdefault(role.value if role else "", []).append((*part, "attribute_name"))
    if len(found.get("HASH", [])) != 1 or len(found.get("RANGE", [])) > 1 or set(found) - {"HASH", "RANGE"}:
        raise f.fail((*at, "key_schema"), "key_schema: a spec index has one HASH and at most one RANGE attribute "
                     "(multi-attribute keys are not in spec version 1); key_type takes HASH or RANGE")
    sort = found.get("RANGE")
    return _key(f, found["HASH"][0], types), _key(f, sort[0], types) if sort else None


def _flag(f: TfFields, rel: Path, default: str) -> Sourced[bool]:
    return f.flag(rel, format_path(rel)) or given(False, f.origin(()) + f" (no {default}: false)")


def _block_flag(f: TfFields, block: str, field: str) -> Sourced[bool] | None:
    """`block { field = ... }`: the first block's value, or None without the block."""
    return f.flag((block, 0, field), f"{block}.{field}") if f.items((block,), block) else None


def _stream(f: TfFields) -> Sourced[str]:
    """stream_enabled and stream_view_type read together: an unknown view of an enabled stream is an
    estimate of the widest view, never `none`; an unknown switch makes the view an estimate."""
    enabled = f.flag(("stream_enabled",), "stream_enabled")
    view = f.text(("stream_view_type",), "stream_view_type")
    if enabled is None or (not enabled.value and not enabled.is_estimate):
        return given("none", (enabled.origin if enabled else f.origin(()) + " (no stream_enabled)"))
    if view is None:
        if enabled.is_estimate:
            return Sourced("none", enabled.origin, enabled.estimate)
        raise f.fail(("stream_enabled",), "stream_enabled = true needs a stream_view_type")
    if view.value not in STREAM_VIEWS and not view.is_estimate:
        raise f.fail(("stream_view_type",), f"stream_view_type {view.value!r}: takes "
                     f"{', '.join(STREAM_VIEWS)}")
    shown = STREAM_VIEWS.get(view.value, "new_and_old_images")
    why = view.estimate if view.is_estimate else None
    if why and view.value not in STREAM_VIEWS:
        why += "; new_and_old_images (the widest view) stands in until it is given"
    if enabled.is_estimate:
        why = f"{enabled.estimate}; the stream is {shown} if it is on" if why is None else f"{enabled.estimate}; {why}"
    return Sourced(shown, view.origin, why)


def _dropped(f: TfFields) -> list[Dropped]:
    out = [Dropped(what, f.origin((arg,)), advice) for arg, what, advice in _NOT_IN_SPEC if f.has((arg,))]
    if f.items(("server_side_encryption",), "server_side_encryption"):
        key = f.text(("server_side_encryption", 0, "kms_key_arn"), "kms_key_arn")
        enabled = f.flag(("server_side_encryption", 0, "enabled"), "server_side_encryption.enabled")
        if key is not None:
            out.append(Dropped(f"AWS KMS key {key.value}", key.origin, CMEK_ADVICE))
        elif enabled is not None and enabled.value:
            out.append(Dropped("AWS-managed KMS key (server_side_encryption)", enabled.origin, CMEK_ADVICE))
    for at in f.items(("replica",), "replica"):
        region = f.raw((*at, "region_name"))
        if (key := f.text((*at, "kms_key_arn"), "kms_key_arn")) is not None:
            out.append(Dropped(f"AWS KMS key {key.value} of replica {region}", key.origin, CMEK_ADVICE))
    return out


def _ttl(f: TfFields, enabled: Sourced[bool] | None) -> Sourced[str] | None:
    """The TTL attribute of an enabled `ttl` block; one whose switch is unknown is an estimate."""
    attribute = f.text(("ttl", 0, "attribute_name"), "ttl.attribute_name")
    if enabled is None or attribute is None or not (enabled.value or enabled.is_estimate):
        return None
    if enabled.is_estimate:
        return Sourced(attribute.value, attribute.origin, f"{enabled.estimate}; TTL on {attribute.value} if it is on")
    return attribute


def _tags(f: TfFields) -> tuple[tuple[tuple[str, Sourced[str]], ...], tuple[str, ...]]:
    """`tags`, each value with its origin; a tags map the files cannot give is named instead."""
    raw = f.raw(("tags",))
    if isinstance(raw, Unresolved):
        return (), (f"the tags are not known ({f.origin(('tags',))}: {raw.reason}); add them to the spec's "
                    "tags if they matter",)
    f.loc.check((*f.base, "tags"), raw or {}, (dict,), "tags")
    return tuple((str(k), v) for k in (raw or {}) if (v := f.text(("tags", k), "tags")) is not None), ()


def _region(f: TfFields, rel: Path, what: str, home: str) -> Sourced[str] | None:
    """A region argument; one the files cannot give stands as another AWS region, marked as an
    estimate, so the spec still validates and the warning says which variable to give."""
    region = f.text(rel, what)
    if region is None or not region.is_estimate or region.value in AWS_REGIONS:
        return region
    stand_in = "us-west-2" if home != "us-west-2" else "us-east-2"
    return Sourced(stand_in, region.origin, f"{region.estimate}; {stand_in} stands in until it is given")


def replicas(f: TfFields, pitr: bool, home: str) -> tuple[ReplicaDef, ...]:
    """`replica` blocks; a replica's own point_in_time_recovery where it differs from the table's."""
    found = []
    for at in f.items(("replica",), "replica"):
        region = _region(f, (*at, "region_name"), "replica.region_name", home)
        if region is None:
            raise f.fail(at, "a replica block needs region_name")
        # the provider's default is false: a replica block without it has no PITR, whatever the table's
        own = f.flag((*at, "point_in_time_recovery"), "point_in_time_recovery") or given(
            False, f.origin(at) + " (no point_in_time_recovery: false)")
        found.append(ReplicaDef(region, pitr=own if own.value != pitr else None))
    return tuple(found)


def _limits(f: TfFields, block: Path, reads: str, writes: str) -> Limits | None:
    """`on_demand_throughput { max_read_request_units ... }` or `warm_throughput { ... }`
    (-1 or 0: no limit)."""
    if not f.items(block, str(block[-1])):
        return None
    found = [v if (v := f.number((*block, 0, name), name)) is not None and v.value > 0 else None
             for name in (reads, writes)]
    return None if found == [None, None] else Limits(found[0], found[1])


def _throughputs(f: TfFields, at: Path = ()) -> tuple[Limits | None, Limits | None]:
    """(on-demand maximum, warm throughput) of the table or of an index at `at`."""
    return (_limits(f, (*at, "on_demand_throughput"), "max_read_request_units", "max_write_request_units"),
            _limits(f, (*at, "warm_throughput"), "read_units_per_second", "write_units_per_second"))


def _consistency(f: TfFields, home: str) -> tuple[Sourced[str] | None, Sourced[str] | None]:
    """MRSC: a replica's `consistency_mode = "STRONG"`, and a `global_table_witness` block."""
    modes = [m for at in f.items(("replica",), "replica")
             if (m := f.text((*at, "consistency_mode"), "consistency_mode")) is not None]
    mode = next((m for m in modes if m.value == "STRONG"), modes[0] if modes else None)
    witness = (_region(f, ("global_table_witness", 0, "region_name"), "global_table_witness.region_name", home)
               if f.items(("global_table_witness",), "global_table_witness") else None)
    return Sourced(mode.value.lower(), mode.origin, mode.estimate) if mode else None, witness


def read_table(f: TfFields, region: Sourced[str]) -> TableDefinition:
    """One `aws_dynamodb_table`'s arguments."""
    name = f.text(("name",), "name")
    if name is None:
        raise f.fail((), "an aws_dynamodb_table needs a name")
    types = _types(f)
    partition, sort = _key(f, ("hash_key",), types), _key(f, ("range_key",), types)
    if partition is None:
        raise f.fail(("hash_key",), "an aws_dynamodb_table needs a hash_key")
    mode = f.text(("billing_mode",), "billing_mode")
    if mode is not None and mode.value not in ("PROVISIONED", "PAY_PER_REQUEST") and not mode.is_estimate:
        raise f.fail(("billing_mode",), f"billing_mode {mode.value!r}: takes PROVISIONED or PAY_PER_REQUEST")
    billing = (Sourced("on_demand" if mode.value == "PAY_PER_REQUEST" else "provisioned", mode.origin, mode.estimate)
               if mode else given("provisioned", f.origin(()) + " (no billing_mode: PROVISIONED)"))
    provisioned = billing.value == "provisioned"

    def units(at: Path) -> tuple[Sourced[int] | None, Sourced[int] | None]:
        if not provisioned:
            return None, None
        return f.integer((*at, "read_capacity"), "read_capacity"), f.integer((*at, "write_capacity"), "write_capacity")

    gsis = []
    for at in f.items(("global_secondary_index",), "global_secondary_index"):
        index, (g_partition, g_sort) = f.text((*at, "name"), "name"), _schema_keys(f, at, types)
        if index is None or g_partition is None:
            raise f.fail(at, "a global_secondary_index needs name and hash_key (or key_schema)")
        g_max, g_warm = _throughputs(f, at)
        gsis.append(GsiDef(index, g_partition, g_sort, projection(f, at, _PROJECTION),
                           *units(at), max_throughput=None if provisioned else g_max, warm_throughput=g_warm))
    lsis = []
    for at in f.items(("local_secondary_index",), "local_secondary_index"):
        index, l_sort = f.text((*at, "name"), "name"), _key(f, (*at, "range_key"), types)
        if index is None or l_sort is None:
            raise f.fail(at, "a local_secondary_index needs name and range_key")
        lsis.append(LsiDef(index, l_sort, projection(f, at, _PROJECTION)))
    ttl_on = _block_flag(f, "ttl", "enabled")
    pitr = _block_flag(f, "point_in_time_recovery", "enabled") or given(
        False, f.origin(()) + " (no point_in_time_recovery: disabled)")
    days = (f.integer(("point_in_time_recovery", 0, "recovery_period_in_days"), "recovery_period_in_days")
            if f.items(("point_in_time_recovery",), "point_in_time_recovery") else None)
    tags, missing = _tags(f)
    reads, writes = units(())
    consistency, witness = _consistency(f, region.value)
    most, warm = _throughputs(f)
    return TableDefinition(
        name=name, region=region, partition=partition, sort=sort, billing=billing, reads=reads, writes=writes,
        ttl_attribute=_ttl(f, ttl_on),
        stream=_stream(f), pitr=pitr, pitr_days=days,
        table_class=table_class(f, ("table_class",)),
        deletion_protection=_flag(f, ("deletion_protection_enabled",), "deletion_protection_enabled"),
        tags=tags, replicas=replicas(f, pitr.value, region.value), gsis=tuple(gsis), lsis=tuple(lsis),
        dropped=tuple(_dropped(f)), multi_region_consistency=consistency, witness_region=witness,
        max_throughput=None if provisioned else most, warm_throughput=warm, missing=missing)
