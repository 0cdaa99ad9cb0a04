"""Spec files in, trusted `Spec` dataclasses out, or every problem at once.

Two passes. The JSON Schema (shipped in `schema/`) checks shapes, types and ranges, and
its errors are rewritten as sentences a user can act on ("unknown key 'raeds'; did you
mean 'reads'?"). Then the cross-checks the schema cannot express (regions, Bigtable id
rules, billing consistency, mapping references) run on every part of the file that passed
the schema, so one run reports as much as it can instead of one error per fix.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

from .checks import (
    check_instance,
    check_keys_and_mapping,
    check_sound_source,
    check_source,
    check_source_regions,
    check_table,
    check_table_id,
    check_table_ids,
)
from .errors import InputError, Problem
from .mapping_syntax import parse_duration
from .model import (
    AttributeMapping,
    FamilyMapping,
    GcRule,
    Gsi,
    InstanceSpec,
    KeyAttribute,
    KeySchema,
    Location,
    Lsi,
    Mapping,
    MappingRule,
    PointInTimeRecovery,
    Rate,
    ReadAutoscaling,
    Replica,
    ReplicaGsi,
    Salt,
    Source,
    SourceAutoscaling,
    Spec,
    TableSpec,
    Throughput,
    Ttl,
)
from .schema_check import Issue, clean, schema_problems
from .yaml_source import JsonPath, YamlDocument, parse_yaml

SPEC_SCHEMA = "spec-v1.schema.json"


# --- public API ---------------------------------------------------------------------------

def read_spec(path: str | Path) -> Spec:
    """One spec file as a `Spec`; `InputError` listing every problem otherwise."""
    return read_specs([path])[0]


def read_specs(paths: Sequence[str | Path]) -> list[Spec]:
    """Several spec files at once, so problems of all of them are reported together.

    Besides each file's own checks, two files must not describe the same instance.
    """
    problems: list[Problem] = []
    specs: list[Spec] = []
    instances: dict[str, Location] = {}
    for path in paths:
        spec, instance, found = _read_spec(Path(path), str(path))
        problems += found
        if instance is not None and instance.location is not None:
            first = instances.setdefault(instance.id, instance.location)
            if first is not instance.location:
                at = instance.location
                problems.append(Problem(at.file, at.line, at.column, "instance.id",
                                        f"instance id {instance.id!r} is also used by {first}; "
                                        f"each spec file describes its own instance"))
        if spec is not None:
            specs.append(spec)
    if problems:
        raise InputError(problems)
    return specs


# --- reading one spec file ----------------------------------------------------------------

def _read_spec(path: Path, file: str) -> tuple[Spec | None, InstanceSpec | None, list[Problem]]:
    """The spec (None if anything is wrong), its instance when that part is sound, and problems."""
    doc, problems = parse_yaml(path, file)
    if doc is None:
        return None, None, problems
    issues = schema_problems(doc, SPEC_SCHEMA)
    problems += [p for _, p in issues]
    if not isinstance(doc.data, dict):
        return None, None, problems
    data = doc.data
    raw_instance = data.get("instance") if isinstance(data.get("instance"), dict) else None
    instance = _instance(doc) if clean(issues, ("instance",)) and raw_instance is not None else None
    raw_tables: list[Any] = data["tables"] if isinstance(data.get("tables"), list) else []
    tables = [_table(doc, i) if clean(issues, ("tables", i)) else None for i in range(len(raw_tables))]
    if raw_instance is not None:
        problems += check_instance(doc, raw_instance, tables, lambda field: clean(issues, ("instance", field)))
    problems += check_table_ids(doc, raw_tables)
    for i, table in enumerate(tables):
        if table is not None:
            problems += check_table(doc, ("tables", i), table)
        elif isinstance(raw_tables[i], dict):
            problems += _check_sound_parts(doc, issues, i, raw_tables[i])
    sound = [t for t in tables if t is not None]
    if problems or instance is None or len(sound) != len(tables):
        return None, instance, problems
    return Spec(path=file, instance=instance, tables=tuple(sound)), instance, []


def _check_sound_parts(doc: YamlDocument, issues: list[Issue], i: int, raw: dict[str, Any]) -> list[Problem]:
    """The cross-checks of a table with schema problems, on the parts the schema passed:
    its id, its whole source, or else the source's regions."""
    def sound(*path: str | int) -> bool:
        return clean(issues, ("tables", i, *path))

    out = check_table_id(doc, ("tables", i), raw["id"]) if sound("id") and isinstance(raw.get("id"), str) else []
    source = raw.get("source")
    if sound("source") and isinstance(source, dict):
        out += check_source(doc, ("tables", i, "source"), _source(source))
    elif isinstance(source, dict):
        home = source.get("region") if sound("source", "region") and isinstance(source.get("region"), str) else None
        replicas = source.get("replicas") if sound("source", "replicas") else None
        regions = [r.get("region") if isinstance(r, dict) and isinstance(r.get("region"), str) else None
                   for r in replicas] if isinstance(replicas, list) else []
        out += check_source_regions(doc, ("tables", i, "source"), home, regions)
        if (partial := _sound_source(source, lambda field: sound("source", field))) is not None:
            out += check_sound_source(doc, ("tables", i, "source"), partial, lambda field: sound("source", field))
            if sound("mapping") and all(sound("source", field) for field in ("ttl", "gsis", "lsis")):
                mapping = _mapping(raw["mapping"]) if isinstance(raw.get("mapping"), dict) else Mapping()
                table = TableSpec(id=str(raw.get("id", "")), source=partial, mapping=mapping)
                out += check_keys_and_mapping(doc, ("tables", i), table)
    return out


_SOURCE_FIELDS = frozenset(f.name for f in fields(Source))


def _sound_source(raw: dict[str, Any], sound: Callable[[str], bool]) -> Source | None:
    """A source of only the fields the schema passed, for the checks that read nothing else;
    None without a sound key, which they all read. A missing table name or region stays
    empty: no check that runs here reads them."""
    kept = {k: v for k, v in raw.items() if k in _SOURCE_FIELDS and sound(k)}
    if "key" not in kept:
        return None
    return _source({"table": "", "region": "", **kept})


def _location(doc: YamlDocument, path: JsonPath) -> Location:
    line, column = doc.locate(path)
    return Location(doc.file, line, column)


def _instance(doc: YamlDocument) -> InstanceSpec:
    d = doc.data["instance"]
    return InstanceSpec(**{**d, "location": _location(doc, ("instance", "id"))})


def _table(doc: YamlDocument, i: int) -> TableSpec:
    d = doc.data["tables"][i]
    mapping = _mapping(d["mapping"]) if "mapping" in d else Mapping()
    table = TableSpec(id=d["id"], source=_source(d["source"]), mapping=mapping,
                      location=_location(doc, ("tables", i, "id")))
    return replace(table, type_locations={path: _location(doc, ("tables", i, *path))
                                          for _, _, path in table.type_declarations()})


def _build(cls: type, d: dict[str, Any], convert: dict[str, Callable[[Any], Any]]) -> Any:
    """`cls(**d)` with some values converted; the schema made the keys match the fields."""
    return cls(**{k: convert[k](v) if k in convert else v for k, v in d.items()})


def _key_attribute(d: dict[str, Any]) -> KeyAttribute:
    return KeyAttribute(**d)


def _key(d: dict[str, Any]) -> KeySchema:
    return _build(KeySchema, d, {"partition": _key_attribute, "sort": _key_attribute})


def _projection(value: str | list[str]) -> str | tuple[str, ...]:
    return tuple(value) if isinstance(value, list) else value


def _rate(d: dict[str, Any]) -> Rate:
    return Rate(float(d["reads_per_second"]), float(d["writes_per_second"]))


def _autoscaling(d: dict[str, Any]) -> SourceAutoscaling:
    return _build(SourceAutoscaling, d, {k: float for k in ("target_utilization", "read_target_utilization",
                                                             "write_target_utilization")})


def _read_autoscaling(d: dict[str, Any]) -> ReadAutoscaling:
    return _build(ReadAutoscaling, d, {"target_utilization": float})


def _throughput(d: dict[str, Any]) -> Throughput:
    return Throughput(**{k: float(v) for k, v in d.items()})


def _replica(d: dict[str, Any]) -> Replica:
    return _build(Replica, d, {
        "autoscaling": _read_autoscaling,
        "gsis": lambda gs: tuple(_build(ReplicaGsi, g, {"autoscaling": _read_autoscaling}) for g in gs),
        "point_in_time_recovery": lambda p: PointInTimeRecovery(**p),
    })


def _gsi(d: dict[str, Any]) -> Gsi:
    return _build(Gsi, d, {"key": _key, "projection": _projection, "autoscaling": _autoscaling,
                           "max_throughput": _throughput, "warm_throughput": _throughput})


def _source(d: dict[str, Any]) -> Source:
    return _build(Source, d, {
        "key": _key,
        "autoscaling": _autoscaling,
        "peak": _rate,
        "average": _rate,
        "max_throughput": _throughput,
        "warm_throughput": _throughput,
        "item_size_kb": float,
        "storage_gb": float,
        "replicas": lambda rs: tuple(_replica(r) for r in rs),
        "ttl": lambda t: Ttl(**t),
        "point_in_time_recovery": lambda p: PointInTimeRecovery(**p),
        "gsis": lambda gs: tuple(_gsi(g) for g in gs),
        "lsis": lambda ls: tuple(_build(Lsi, s, {"sort": _key_attribute, "projection": _projection}) for s in ls),
        "kinesis_streams": tuple,
    })


def _gc(d: dict[str, Any]) -> GcRule:
    age = d.get("max_age")
    return GcRule(max_versions=d.get("max_versions"), max_age_seconds=parse_duration(age) if age else None,
                  mode=d.get("mode", "union"))


def _mapping(d: dict[str, Any]) -> Mapping:
    return _build(Mapping, d, {
        "salt": lambda s: Salt(**s),
        "families": lambda fs: tuple(_build(FamilyMapping, f, {"gc": _gc}) for f in fs),
        "attributes": lambda attrs: tuple(AttributeMapping(**a) for a in attrs),
        "rules": lambda rules: tuple(MappingRule(**{"sort_key_prefix": None, **r}) for r in rules),
    })
