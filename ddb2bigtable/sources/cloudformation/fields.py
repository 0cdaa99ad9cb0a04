"""Reading one CloudFormation resource's properties: typed, located, with their origin.

`Fields` wraps the resolved `Properties` of one resource. Every read names its origin
(`CloudFormation Orders.Properties.ProvisionedThroughput.ReadCapacityUnits`), a value of the
wrong type is exit-2 input at its file:line, and a value the template cannot resolve
(a parameter without a default) comes back as an estimate whose note says what to pass.
The parts `AWS::DynamoDB::Table` and `AWS::DynamoDB::GlobalTable` share (key schema,
indexes, stream, TTL, class, tags, what a spec cannot hold) are read here once.
"""

from __future__ import annotations

from typing import Any, cast

from ...spec.yaml_source import format_path
from ..located import Located, Path, walk
from ..model import STREAM_VIEWS, TABLE_CLASSES, Dropped, KeyAttr, KeyType, Limits, LsiDef, Projection, Sourced, given
from .intrinsics import Unresolved

CMEK_ADVICE = "Bigtable cannot use an AWS key: a CMEK needs a Cloud KMS key; add instance.kms_keys: {REGION: " \
        "projects/P/locations/L/keyRings/R/cryptoKeys/K} (docs/spec.md)"


class Fields:
    """The resolved properties of resource `logical`, read relative to `Properties`."""

    def __init__(self, loc: Located, logical: str, props: dict[str, Any], base: Path | None = None):
        self.loc, self.logical, self.props = loc, logical, props
        self.base = base if base is not None else ("Resources", logical, "Properties")

    def origin(self, rel: Path) -> str:
        return f"CloudFormation {self.logical}.{format_path(self.base[2:] + rel)}"

    def raw(self, rel: Path) -> Any:
        return walk(self.props, rel)

    def has(self, rel: Path) -> bool:
        return self.raw(rel) is not None

    def _read(self, rel: Path, convert: Any, placeholder: Any) -> Sourced[Any] | None:
        value = self.raw(rel)
        if value is None:
            return None
        if isinstance(value, Unresolved):
            shown = placeholder if placeholder is not None else value.placeholder
            return Sourced(shown, self.origin(rel), f"{self.origin(rel)} is not resolved: {value.reason}")
        return given(convert((*self.base, *rel), value), self.origin(rel))

    def text(self, rel: Path, what: str) -> Sourced[str] | None:
        return self._read(rel, lambda at, v: str(self.loc.check(at, v, (str, int, float), what)), None)

    def integer(self, rel: Path, what: str) -> Sourced[int] | None:
        return self._read(rel, lambda at, v: self.loc.integer(at, v, what), 1)

    def number(self, rel: Path, what: str) -> Sourced[float] | None:
        return self._read(rel, lambda at, v: self.loc.number(at, v, what), 70.0)

    def flag(self, rel: Path, what: str) -> Sourced[bool] | None:
        def convert(at: Path, v: Any) -> bool:
            if isinstance(v, str) and v.lower() in ("true", "false"):
                return v.lower() == "true"
            return self.loc.check(at, v, (bool,), what)
        return self._read(rel, convert, False)

    def items(self, rel: Path, what: str) -> list[Path]:
        """The paths of a list property's entries (each checked to be a mapping)."""
        value = self.raw(rel)
        if value is None or isinstance(value, Unresolved):
            return []
        self.loc.check((*self.base, *rel), value, (list,), what)
        for i, item in enumerate(value):
            self.loc.check((*self.base, *rel, i), item, (dict,), what)
        return [(*rel, i) for i in range(len(value))]

    def fail(self, rel: Path, message: str) -> Exception:
        return self.loc.fail((*self.base, *rel), f"{self.logical}: {message}")


def capacity(f: Fields, rel: Path, provisioned: bool) -> tuple[Sourced[int] | None, Sourced[int] | None]:
    """(RCU, WCU) of a `ProvisionedThroughput` block; none for an on-demand table."""
    if not provisioned:
        return None, None
    return (f.integer((*rel, "ReadCapacityUnits"), "ReadCapacityUnits"),
            f.integer((*rel, "WriteCapacityUnits"), "WriteCapacityUnits"))


def attribute_types(f: Fields) -> dict[str, KeyType]:
    types: dict[str, KeyType] = {}
    for at in f.items(("AttributeDefinitions",), "AttributeDefinitions"):
        name = f.text((*at, "AttributeName"), "AttributeName")
        kind = f.text((*at, "AttributeType"), "AttributeType")
        if name is None or kind is None:
            raise f.fail(at, "an attribute definition needs AttributeName and AttributeType")
        if kind.value not in ("S", "N", "B") and not kind.is_estimate:
            raise f.fail((*at, "AttributeType"), f"AttributeType {kind.value!r}: key attributes are S, N or B")
        types[name.value] = cast(KeyType, kind.value if kind.value in ("S", "N", "B") else "S")
    return types


def key_schema(f: Fields, rel: Path, types: dict[str, KeyType]) -> tuple[Sourced[KeyAttr], Sourced[KeyAttr] | None]:
    """(partition, sort) of a KeySchema, typed from AttributeDefinitions."""
    parts: dict[str, Sourced[KeyAttr]] = {}
    for at in f.items(rel, "KeySchema"):
        name = f.text((*at, "AttributeName"), "AttributeName")
        role = f.text((*at, "KeyType"), "KeyType")
        if name is None or role is None:
            raise f.fail(at, "a key schema element needs AttributeName and KeyType")
        if name.value not in types:
            raise f.fail(at, f"key attribute {name.value!r} is not in AttributeDefinitions; add it there")
        parts[role.value] = Sourced(KeyAttr(name.value, types[name.value]), f.origin(at) + " + AttributeDefinitions",
                                    name.estimate)
    if "HASH" not in parts:
        raise f.fail(rel, "the KeySchema has no HASH key; add one")
    return parts["HASH"], parts.get("RANGE")


def projection(f: Fields, rel: Path, fields: tuple[str, str] = ("ProjectionType", "NonKeyAttributes")
               ) -> Sourced[Projection]:
    """An index's projection; `fields` name the type and attribute list (Terraform's differ)."""
    kind = f.text((*rel, fields[0]), fields[0])
    if kind is None:
        return given("all", f.origin(rel) + f" (no {fields[0]}: ALL)")
    if kind.value == "INCLUDE":
        names = f.raw((*rel, fields[1])) or []
        return given(tuple(str(n) for n in names), f.origin((*rel, fields[1])))
    return Sourced(kind.value.lower(), kind.origin, kind.estimate)


def lsis(f: Fields, types: dict[str, KeyType]) -> tuple[LsiDef, ...]:
    out = []
    for at in f.items(("LocalSecondaryIndexes",), "LocalSecondaryIndexes"):
        name = f.text((*at, "IndexName"), "IndexName")
        _, sort = key_schema(f, (*at, "KeySchema"), types)
        if name is None or sort is None:
            raise f.fail(at, "a local secondary index needs IndexName and a RANGE key")
        out.append(LsiDef(name, sort, projection(f, (*at, "Projection"))))
    return tuple(out)


def stream(f: Fields) -> Sourced[str]:
    view = f.text(("StreamSpecification", "StreamViewType"), "StreamViewType")
    if view is None:
        return given("none", f.origin(()) + " (no StreamSpecification)")
    return Sourced(STREAM_VIEWS.get(view.value, "none"), view.origin, view.estimate)


def ttl(f: Fields) -> Sourced[str] | None:
    enabled = f.flag(("TimeToLiveSpecification", "Enabled"), "TimeToLiveSpecification.Enabled")
    if enabled is None or not enabled.value:
        return None
    return f.text(("TimeToLiveSpecification", "AttributeName"), "TimeToLiveSpecification.AttributeName")


def table_class(f: Fields, rel: Path) -> Sourced[str]:
    klass = f.text(rel, str(rel[-1]))
    if klass is None:
        return given("standard", f.origin(()) + f" (no {rel[-1]}: STANDARD)")
    return Sourced(TABLE_CLASSES.get(klass.value, "standard"), klass.origin, klass.estimate)


def pitr(f: Fields, rel: Path) -> tuple[Sourced[bool], Sourced[int] | None]:
    enabled = f.flag((*rel, "PointInTimeRecoveryEnabled"), "PointInTimeRecoveryEnabled")
    days = f.integer((*rel, "RecoveryPeriodInDays"), "RecoveryPeriodInDays")
    return enabled or given(False, f.origin(()) + " (no PointInTimeRecoverySpecification: disabled)"), days


def tag_list(f: Fields, rel: Path) -> tuple[tuple[str, Sourced[str]], ...]:
    """Tags as CloudFormation writes them for tables: a list of {Key, Value}."""
    out = []
    for at in f.items(rel, "Tags"):
        key = f.text((*at, "Key"), "Tags[].Key")
        value = f.text((*at, "Value"), "Tags[].Value")
        if key is not None and value is not None:
            out.append((key.value, value))
    return tuple(out)


def limits(f: Fields, rel: Path, reads: str, writes: str) -> Limits | None:
    """Units-per-second limits at `rel` (OnDemandThroughput, WarmThroughput); AWS writes -1
    for "no limit", so only positive values count."""
    found = [v if (v := f.number((*rel, name), name)) is not None and v.value > 0 else None for name in (reads, writes)]
    return None if found == [None, None] else Limits(found[0], found[1])


def on_demand_max(f: Fields, rel: Path = ()) -> Limits | None:
    return limits(f, (*rel, "OnDemandThroughput"), "MaxReadRequestUnits", "MaxWriteRequestUnits")


def warm(f: Fields, rel: Path = ()) -> Limits | None:
    return limits(f, (*rel, "WarmThroughput"), "ReadUnitsPerSecond", "WriteUnitsPerSecond")


def extras(f: Fields, region: str, rel: Path = ()) -> tuple[Sourced[bool] | None, tuple[Sourced[str], ...]]:
    """Contributor Insights and the Kinesis destination at `rel` (a table's or a replica's
    in `region`): spec fields the plan warns about (Bigtable has neither). An ARN the
    template alone cannot give (`!GetAtt Stream.Arn`) becomes a placeholder in ARN form,
    marked as an estimate, so the imported spec still validates."""
    insights = f.flag((*rel, "ContributorInsightsSpecification", "Enabled"), "ContributorInsightsSpecification")
    kinesis = f.text((*rel, "KinesisStreamSpecification", "StreamArn"), "KinesisStreamSpecification.StreamArn")
    if kinesis is not None and kinesis.is_estimate:
        kinesis = Sourced(f"arn:aws:kinesis:{region}:000000000000:stream/UNRESOLVED", kinesis.origin,
                          kinesis.estimate)
    return insights, (kinesis,) if kinesis is not None else ()


def dropped(f: Fields, rel: Path = ()) -> list[Dropped]:
    """Settings at `rel` a spec cannot express (a table's or a replica's)."""
    out = []
    checks = [
        (("ResourcePolicy",), "resource-based policy", "Bigtable access is IAM on the project, instance or table: "
         "grant the principals roles/bigtable.user there"),
        (("StreamSpecification", "ResourcePolicy"), "stream resource policy", "grant change-stream readers IAM "
         "roles on the table"),
        (("ImportSourceSpecification",), "import from S3", "load the data with `ddb2bigtable load` from an export"),
    ]
    for path, what, advice in checks:
        if f.has((*rel, *path)):
            out.append(Dropped(what, f.origin((*rel, *path)), advice))
    key = f.text((*rel, "SSESpecification", "KMSMasterKeyId"), "KMSMasterKeyId")
    if key is not None:
        out.append(Dropped(f"AWS KMS key {key.value}", key.origin, CMEK_ADVICE))
    elif (kind := f.text((*rel, "SSESpecification", "SSEType"), "SSEType")) and kind.value == "KMS":
        out.append(Dropped("AWS-managed KMS key (SSEType KMS)", kind.origin, CMEK_ADVICE))
    elif (sse := f.flag((*rel, "SSESpecification", "SSEEnabled"), "SSEEnabled")) and sse.value:
        out.append(Dropped("AWS-managed KMS key (SSEEnabled)", sse.origin, CMEK_ADVICE))
    return out
