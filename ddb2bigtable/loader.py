"""Spec files in, trusted `Spec` dataclasses out, or every problem at once.

Two passes. The JSON Schema (shipped in `schema/`) checks shapes, types and ranges, and
its errors are rewritten as sentences a user can act on ("unknown key 'raeds'; did you
mean 'reads'?"). Then the cross-checks the schema cannot express (regions, Bigtable id
rules, billing consistency, mapping references) run on every part of the file that passed
the schema, so one run reports as much as it can instead of one error per fix.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable, Iterable, Sequence
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator, ValidationError

from . import ids
from .errors import InputError, Problem
from .regions import AWS_REGIONS
from .spec import (
    AttributeMapping, FamilyMapping, GcRule, Gsi, InstanceSpec, KeyAttribute, KeySchema,
    Location, Lsi, Mapping, MappingRule, PointInTimeRecovery, Rate, Replica, Salt, Source,
    SourceAutoscaling, Spec, TableSpec, Ttl,
)
from .yaml_source import JsonPath, YamlDocument, format_path, parse_yaml

SPEC_SCHEMA = "spec-v1.schema.json"
DURATION_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
KMS_KEY = re.compile(r"^projects/[^/]+/locations/[^/]+/keyRings/[^/]+/cryptoKeys/[^/]+$")
_TEMPLATE_TOKEN = re.compile(r"\{\{|\}\}|\{([^{}]*)\}|[{}]")

# A problem plus the part of the document it spoils: cross-checks skip spoiled parts.
Issue = tuple[JsonPath, Problem]


# --- public API ---------------------------------------------------------------------------

def load_spec(path: str | Path) -> Spec:
    """One spec file as a `Spec`; `InputError` listing every problem otherwise."""
    return load_specs([path])[0]


def load_specs(paths: Sequence[str | Path]) -> list[Spec]:
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


def parse_duration(text: str) -> int:
    """Seconds in a spec duration (`90s`, `45m`, `36h`, `7d`, `1w`); the schema checked the form."""
    return int(text[:-1]) * DURATION_UNITS[text[-1]]


def template_fields(template: str) -> tuple[str, ...]:
    """The placeholder names of a mapping template, in order.

    Grammar: `{name}` is the attribute `name`; `{{` and `}}` are literal braces; anything
    else is text. Format specs (`{n:>5}`) are refused: keys must stay byte-exact.
    Raises ValueError saying what is wrong.
    """
    names: list[str] = []
    for match in _TEMPLATE_TOKEN.finditer(template):
        token, name = match.group(0), match.group(1)
        if token in ("{{", "}}"):
            continue
        if name is None:
            raise ValueError(f"unmatched {token!r} at character {match.start() + 1}; "
                             f"write {token * 2!r} for a literal brace")
        if not name.strip():
            raise ValueError("empty placeholder '{}'; write an attribute name inside the braces")
        if ":" in name or "!" in name:
            raise ValueError(f"placeholder {{{name}}} has a format spec; only plain {{attribute}} "
                             f"placeholders are supported")
        names.append(name)
    return tuple(names)


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """`"; did you mean 'reads'?"` for the closest choice, or an empty string.

    Equally close choices are all offered ('us-est-1' is one letter from both us-east-1
    and us-west-1): guessing one of them would mislead half the time.
    """
    scored = sorted((-difflib.SequenceMatcher(None, word, c).ratio(), c) for c in set(choices))
    best = [c for score, c in scored if -score >= 0.6 and score <= scored[0][0] + 0.01]
    return f"; did you mean {' or '.join(map(repr, best))}?" if best else ""


def region_problem(region: str) -> str | None:
    """Why `region` is not an AWS region DynamoDB runs in, or None."""
    if region in AWS_REGIONS:
        return None
    hint = did_you_mean(region, AWS_REGIONS) or f"; expected one of {', '.join(AWS_REGIONS)}"
    return f"unknown AWS region {region!r}{hint}"


@cache
def load_schema(name: str) -> dict[str, Any]:
    """A JSON Schema shipped in the package (`ddb2bigtable/schema/<name>`)."""
    text = resources.files(__package__).joinpath("schema", name).read_text(encoding="utf-8")
    return json.loads(text)


def schema_problems(doc: YamlDocument, schema_name: str, at: JsonPath = ()) -> list[Issue]:
    """Schema errors for the value at `at` in `doc`, as located, readable problems."""
    schema = load_schema(schema_name)
    value = doc.value_at(at)
    issues: dict[Problem, JsonPath] = {}  # dict: one entry per problem, in order
    for error in Draft202012Validator(schema).iter_errors(value):
        for spoiled, problem in _explain(doc, schema, error, at):
            issues.setdefault(problem, spoiled)
    return [(spoiled, problem) for problem, spoiled in issues.items()]


def clean(issues: Iterable[Issue], part: JsonPath) -> bool:
    """True when no issue spoils `part` (an issue inside it, or around it)."""
    return not any(p[:len(part)] == part or part[:len(p)] == p for p, _ in issues)


# --- schema errors as sentences -----------------------------------------------------------

_TYPE_WORDS = {"integer": "an integer", "number": "a number", "string": "text", "boolean": "true or false",
               "object": "a mapping (key: value)", "array": "a list", "null": "nothing"}
_COMPARISONS = {"minimum": ">=", "maximum": "<=", "exclusiveMinimum": ">", "exclusiveMaximum": "<"}


def _explain(doc: YamlDocument, root: dict[str, Any], error: ValidationError, at: JsonPath) -> list[Issue]:
    path = (*at, *error.absolute_path)
    kind, value, schema = error.validator, error.instance, error.schema
    if kind in ("anyOf", "oneOf"):
        deeper = [e for e in error.context or () if e.relative_path]
        if deeper:  # the value has the right shape for a branch; report inside it
            return [issue for e in deeper for issue in _explain(doc, root, e, at)]
    if kind == "additionalProperties":
        allowed = sorted(schema.get("properties", {}))
        return [((*path, key), doc.problem((*path, key), _unknown_key(key, allowed), key=True))
                for key in value if key not in allowed]
    if kind == "required":
        unknown = [k for k in value if k not in schema.get("properties", {})]
        return [((*path, name), doc.problem(path, _missing_key(root, schema, name), key=True))
                for name in error.validator_value
                if name not in value and not any(did_you_mean(k, [name]) for k in unknown)]
    why = _description(root, error.absolute_schema_path)
    if kind == "type":
        message = f"expected {_types(error.validator_value)}, got {_show(value)}"
        if "string" in _as_list(error.validator_value) and isinstance(value, bool):
            message += " (YAML reads unquoted yes, no, on and off as true/false: put the text in quotes)"
        elif "string" in _as_list(error.validator_value) and isinstance(value, (int, float)):
            message += f" (put it in quotes if it is text: '{value}')"
    elif kind == "enum":
        choices = error.validator_value
        message = f"expected one of {', '.join(map(_show, choices))}; got {_show(value)}"
        if isinstance(value, str):
            message += did_you_mean(value, [c for c in choices if isinstance(c, str)])
    elif kind == "const":
        message = f"expected {_show(error.validator_value)}, got {_show(value)}"
    elif kind in _COMPARISONS:
        noun = _types(schema.get("type", "number"))
        message = f"expected {noun} {_COMPARISONS[kind]} {error.validator_value}, got {_show(value)}"
    elif kind in ("minLength", "maxLength"):
        bound = "at least" if kind == "minLength" else "at most"
        message = f"expected {bound} {error.validator_value} characters, got {len(value)} ({_show(value)})"
    elif kind in ("minItems", "maxItems"):
        bound = "at least" if kind == "minItems" else "at most"
        message = f"expected {bound} {error.validator_value} item(s), got {len(value)}"
    elif kind == "uniqueItems":
        message = "an item is listed twice; keep one of them"
    elif kind in ("pattern", "anyOf", "oneOf") and why:
        return [(path, doc.problem(path, f"expected {why}, got {_show(value)}"))]
    else:
        message = error.message
    if why:
        message += f": {why}"
    return [(path, doc.problem(path, message))]


def _unknown_key(key: str, allowed: list[str]) -> str:
    return f"unknown key {key!r}" + (did_you_mean(key, allowed) or f"; expected one of: {', '.join(allowed)}")


def _missing_key(root: dict[str, Any], schema: dict[str, Any], name: str) -> str:
    why = _own_description(root, schema.get("properties", {}).get(name, {}))
    return f"missing key {name!r}" + (f": {why}" if why else "")


def _description(root: dict[str, Any], schema_path: Iterable[str | int]) -> str | None:
    """The description of the schema that describes the failing value.

    Walks the error's schema path from the root (jsonschema inlines `$ref`s in that path,
    so we follow them too). The description resets whenever the walk moves to a child
    value, so a property never borrows its parent's words.
    """
    parts = list(schema_path)[:-1]  # the last part is the failing keyword
    node, why, i = root, _own_description(root, root), 0
    while i < len(parts):
        key = parts[i]
        while key not in node and "$ref" in node:
            node = _resolve(root, node["$ref"])
        if key in ("properties", "patternProperties", "$defs"):
            node, i = node[key][parts[i + 1]], i + 2
            why = _own_description(root, node)
        elif key in ("items", "additionalProperties"):
            node, i = node[key], i + 1
            why = _own_description(root, node)
        elif key in ("anyOf", "oneOf", "allOf"):
            node, i = node[key][parts[i + 1]], i + 2
            why = _own_description(root, node) or why
        else:
            node, i = node[key], i + 1
    return why


def _own_description(root: dict[str, Any], node: dict[str, Any]) -> str | None:
    """A schema's description, else that of the schema its `$ref` points to."""
    while "description" not in node and "$ref" in node:
        node = _resolve(root, node["$ref"])
    return node.get("description")


def _resolve(root: dict[str, Any], ref: str) -> dict[str, Any]:
    node: Any = root
    for part in ref.removeprefix("#/").split("/"):
        node = node[part]
    return node


def _as_list(types: str | list[str]) -> list[str]:
    return [types] if isinstance(types, str) else list(types)


def _types(types: str | list[str]) -> str:
    return " or ".join(_TYPE_WORDS.get(t, t) for t in _as_list(types))


def _show(value: Any) -> str:
    """A value as the user wrote it in YAML."""
    if value is None:
        return "nothing (an empty value)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, dict):
        return "a mapping" if value else "an empty mapping {}"
    if isinstance(value, list):
        return "a list"
    return str(value)


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
    instance = _instance(doc) if clean(issues, ("instance",)) and isinstance(data.get("instance"), dict) else None
    raw_tables = data.get("tables") if isinstance(data.get("tables"), list) else []
    tables = [_table(doc, i) if clean(issues, ("tables", i)) else None for i in range(len(raw_tables))]
    if instance is not None:
        problems += _check_instance(doc, instance, tables)
    problems += _check_table_ids(doc, raw_tables)
    for i, table in enumerate(tables):
        if table is not None:
            problems += _check_table(doc, ("tables", i), table)
    if problems or instance is None or None in tables:
        return None, instance, problems
    return Spec(path=file, instance=instance, tables=tuple(tables)), instance, []  # type: ignore[arg-type]


def _location(doc: YamlDocument, path: JsonPath) -> Location:
    line, column = doc.locate(path)
    return Location(doc.file, line, column)


def _instance(doc: YamlDocument) -> InstanceSpec:
    d = doc.data["instance"]
    return InstanceSpec(**{**d, "location": _location(doc, ("instance", "id"))})


def _table(doc: YamlDocument, i: int) -> TableSpec:
    d = doc.data["tables"][i]
    mapping = _mapping(d["mapping"]) if "mapping" in d else Mapping()
    return TableSpec(id=d["id"], source=_source(d["source"]), mapping=mapping,
                     location=_location(doc, ("tables", i, "id")))


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


def _source(d: dict[str, Any]) -> Source:
    return _build(Source, d, {
        "key": _key,
        "autoscaling": lambda a: _build(SourceAutoscaling, a, {"target_utilization": float}),
        "peak": _rate,
        "average": _rate,
        "item_size_kb": float,
        "storage_gb": float,
        "replicas": lambda rs: tuple(Replica(**r) for r in rs),
        "ttl": lambda t: Ttl(**t),
        "point_in_time_recovery": lambda p: PointInTimeRecovery(**p),
        "gsis": lambda gs: tuple(_build(Gsi, g, {"key": _key, "projection": _projection}) for g in gs),
        "lsis": lambda ls: tuple(_build(Lsi, s, {"sort": _key_attribute, "projection": _projection}) for s in ls),
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


# --- cross-checks -------------------------------------------------------------------------

def _check_instance(doc: YamlDocument, instance: InstanceSpec, tables: list[TableSpec | None]) -> list[Problem]:
    out: list[Problem] = []
    if why := ids.id_problem("instance", instance.id):
        out.append(doc.problem(("instance", "id"), why))
    out += _check_labels(doc, ("instance", "labels"), instance.labels)
    used = {r for t in tables if t is not None for r in t.source.regions}
    for region, key in instance.kms_keys.items():
        path = ("instance", "kms_keys", region)
        if why := region_problem(region):
            out.append(doc.problem(path, why, key=True))
        elif None not in tables and region not in used:
            out.append(doc.problem(path, f"no table of this instance runs in {region}; remove this key "
                                         f"or fix the region", key=True))
        if not KMS_KEY.match(key):
            out.append(doc.problem(path, f"expected a Cloud KMS key name like projects/P/locations/L/"
                                         f"keyRings/R/cryptoKeys/K, got {key!r}"))
    return out


def _check_labels(doc: YamlDocument, path: JsonPath, labels: dict[str, str]) -> list[Problem]:
    out: list[Problem] = []
    if len(labels) > ids.MAX_LABELS:
        out.append(doc.problem(path, f"{len(labels)} labels; GCP allows at most {ids.MAX_LABELS}"))
    for key, value in labels.items():
        if not ids.LABEL_KEY.match(key):
            out.append(doc.problem((*path, key), f"label key {key!r} is not a GCP label key: a lowercase letter, "
                                                 f"then up to 62 of a-z, 0-9, '_' or '-'", key=True))
        if not ids.LABEL_VALUE.match(value):
            out.append(doc.problem((*path, key), f"label value {value!r} is not a GCP label value: "
                                                 f"up to 63 of a-z, 0-9, '_' or '-'"))
    return out


def _check_table_ids(doc: YamlDocument, raw_tables: list[Any]) -> list[Problem]:
    out: list[Problem] = []
    seen: dict[str, int] = {}
    for i, raw in enumerate(raw_tables):
        table_id = raw.get("id") if isinstance(raw, dict) else None
        if not isinstance(table_id, str):
            continue
        if table_id in seen:
            out.append(doc.problem(("tables", i, "id"), f"table id {table_id!r} is already used by "
                                                        f"tables[{seen[table_id]}]; table ids are unique "
                                                        f"in an instance"))
        seen.setdefault(table_id, i)
    return out


def _check_table(doc: YamlDocument, p: JsonPath, table: TableSpec) -> list[Problem]:
    out: list[Problem] = []
    if why := ids.id_problem("table", table.id):
        out.append(doc.problem((*p, "id"), why))
    source = table.source
    sp = (*p, "source")
    out += _check_regions(doc, sp, source)
    out += _check_key_types(doc, p, table)
    out += _check_ttl(doc, sp, source)
    out += _check_indexes(doc, sp, source)
    out += _check_billing(doc, sp, source)
    out += _check_mapping(doc, p, table)
    return out


def _check_regions(doc: YamlDocument, sp: JsonPath, source: Source) -> list[Problem]:
    out: list[Problem] = []
    if why := region_problem(source.region):
        out.append(doc.problem((*sp, "region"), why))
    seen: dict[str, int] = {}
    for j, replica in enumerate(source.replicas):
        path = (*sp, "replicas", j, "region")
        if why := region_problem(replica.region):
            out.append(doc.problem(path, why))
        elif replica.region == source.region:
            out.append(doc.problem(path, f"replica region {replica.region} is the table's home region "
                                         f"(source.region); list only the other regions"))
        elif replica.region in seen:
            out.append(doc.problem(path, f"replica region {replica.region} is already listed at "
                                         f"replicas[{seen[replica.region]}]; keep one of them"))
        seen.setdefault(replica.region, j)
    return out


def _key_usages(sp: JsonPath, source: Source) -> list[tuple[KeyAttribute, JsonPath, str]]:
    """Every key attribute of the table and its indexes: (attribute, path, what it keys)."""
    uses = [(source.key.partition, (*sp, "key", "partition"), "the table's partition key")]
    if source.key.sort:
        uses.append((source.key.sort, (*sp, "key", "sort"), "the table's sort key"))
    for j, gsi in enumerate(source.gsis):
        uses.append((gsi.key.partition, (*sp, "gsis", j, "key", "partition"), f"the partition key of GSI {gsi.name}"))
        if gsi.key.sort:
            uses.append((gsi.key.sort, (*sp, "gsis", j, "key", "sort"), f"the sort key of GSI {gsi.name}"))
    for j, lsi in enumerate(source.lsis):
        uses.append((lsi.sort, (*sp, "lsis", j, "sort"), f"the sort key of LSI {lsi.name}"))
    return uses


def _check_key_types(doc: YamlDocument, p: JsonPath, table: TableSpec) -> list[Problem]:
    """An attribute has one type, whether it keys the table, an index, or is mapped."""
    out: list[Problem] = []
    first: dict[str, tuple[str, JsonPath]] = {}
    for attr, path, _ in _key_usages((*p, "source"), table.source):
        known = first.setdefault(attr.name, (attr.type, path))
        if known[0] != attr.type:
            out.append(doc.problem((*path, "type"), f"attribute {attr.name!r} is {attr.type} here but "
                                                    f"{known[0]} at {format_path(known[1])}; "
                                                    f"an attribute has one type"))
    for j, mapped in enumerate(table.mapping.attributes):
        if mapped.name in first and mapped.type is not None and mapped.type != first[mapped.name][0]:
            key_type, path = first[mapped.name]
            out.append(doc.problem((*p, "mapping", "attributes", j, "type"),
                                   f"{mapped.name!r} is a key attribute of type {key_type} "
                                   f"({format_path(path)}); declare it as {key_type} or leave the type out"))
    return out


def _check_ttl(doc: YamlDocument, sp: JsonPath, source: Source) -> list[Problem]:
    if source.ttl is None:
        return []
    for attr, _, role in _key_usages(sp, source):
        if attr.name == source.ttl.attribute:
            return [doc.problem((*sp, "ttl", "attribute"),
                                f"TTL attribute {attr.name!r} is {role}; the TTL must be a Number "
                                f"attribute (epoch seconds) that no key uses, such as expiresAt")]
    return []


def _check_indexes(doc: YamlDocument, sp: JsonPath, source: Source) -> list[Problem]:
    out: list[Problem] = []
    names: dict[str, str] = {}
    for kind, indexes in (("gsis", source.gsis), ("lsis", source.lsis)):
        for j, index in enumerate(indexes):
            where = f"{kind}[{j}]"
            if index.name in names:
                out.append(doc.problem((*sp, kind, j, "name"), f"index name {index.name!r} is already used by "
                                                               f"{names[index.name]}; index names are unique "
                                                               f"across GSIs and LSIs"))
            names.setdefault(index.name, where)
    if source.lsis and source.key.sort is None:
        out.append(doc.problem((*sp, "lsis"), "local secondary indexes need a table with a sort key "
                                              "(source.key.sort); make this index a GSI instead", key=True))
    return out


def _check_billing(doc: YamlDocument, sp: JsonPath, source: Source) -> list[Problem]:
    out: list[Problem] = []
    present = doc.value_at(sp)
    if source.billing == "provisioned":
        for field in ("reads", "writes"):
            if getattr(source, field) <= 0:
                unit = "RCU" if field == "reads" else "WCU"
                out.append(doc.problem((*sp, field), f"a provisioned table needs {field} > 0 (its {unit}); "
                                                     f"for an on-demand table write billing: on_demand and a peak",
                                       key=field not in present))
        for field in ("peak", "average"):
            if field in present:
                out.append(doc.problem((*sp, field), f"{field} is for on_demand tables; a provisioned table is "
                                                     f"sized from reads, writes and autoscaling", key=True))
        for j, gsi in enumerate(source.gsis):
            if not gsi.reads or not gsi.writes:
                out.append(doc.problem((*sp, "gsis", j), f"GSI {gsi.name} of a provisioned table needs its own "
                                                         f"reads and writes (RCU and WCU) > 0"))
    else:
        if source.peak is None:
            out.append(doc.problem((*sp, "peak"), "an on_demand table needs peak: {reads_per_second: ..., "
                                                  "writes_per_second: ...}, its peak RRU/WRU per second",
                                   key=True))
        for field in ("reads", "writes"):
            if field in present:
                out.append(doc.problem((*sp, field), f"an on_demand table has no provisioned {field}; put the "
                                                     f"rate in peak.{field}_per_second", key=True))
        if source.autoscaling is not None:
            out.append(doc.problem((*sp, "autoscaling"), "autoscaling is for provisioned tables; on_demand "
                                                         "tables scale by themselves", key=True))
    if source.autoscaling is not None:
        a = source.autoscaling
        for unit, low, high in (("reads", a.min_reads, a.max_reads), ("writes", a.min_writes, a.max_writes)):
            if low > high:
                out.append(doc.problem((*sp, "autoscaling", f"min_{unit}"),
                                       f"min_{unit} {low} is above max_{unit} {high}; swap them"))
    if source.peak is not None and source.average is not None:
        for unit in ("reads_per_second", "writes_per_second"):
            if getattr(source.average, unit) > getattr(source.peak, unit):
                out.append(doc.problem((*sp, "average", unit),
                                       f"average {unit} {getattr(source.average, unit):g} is above the peak "
                                       f"{getattr(source.peak, unit):g}; the peak is the highest rate"))
    return out


_FAMILY_LAYOUT_TYPES = ("SS", "NS", "BS", "M")


def _check_mapping(doc: YamlDocument, p: JsonPath, table: TableSpec) -> list[Problem]:
    m, mp = table.mapping, (*p, "mapping")
    out: list[Problem] = []
    if why := ids.id_problem("family", m.default_family):
        out.append(doc.problem((*mp, "default_family"), why))
    declared: dict[str, int] = {}
    for j, family in enumerate(m.families):
        path = (*mp, "families", j, "name")
        if why := ids.id_problem("family", family.name):
            out.append(doc.problem(path, why))
        if family.name in declared:
            out.append(doc.problem(path, f"family {family.name!r} is already declared at "
                                         f"families[{declared[family.name]}]; merge the two"))
        declared.setdefault(family.name, j)
    known = [m.default_family, *declared]

    def family_problem(name: str | None, path: JsonPath) -> list[Problem]:
        if name is None or name in known:
            return []
        hint = did_you_mean(name, known) or f"; declared: {', '.join(known)}"
        return [doc.problem(path, f"family {name!r} is not declared; add it to mapping.families "
                                  f"or use the default family {m.default_family!r}{hint}")]

    seen: dict[str, int] = {}
    for j, attr in enumerate(m.attributes):
        ap = (*mp, "attributes", j)
        if attr.name in seen:
            out.append(doc.problem((*ap, "name"), f"attribute {attr.name!r} is already mapped at "
                                                  f"attributes[{seen[attr.name]}]; merge the two"))
        seen.setdefault(attr.name, j)
        out += family_problem(attr.family, (*ap, "family"))
        out += _attribute_layout_problems(doc, ap, attr)
    if table.source.ttl and (ttl := next((a for a in m.attributes if a.name == table.source.ttl.attribute), None)):
        if ttl.type not in (None, "N"):
            out.append(doc.problem((*mp, "attributes", m.attributes.index(ttl), "type"),
                                   f"{ttl.name!r} is the TTL attribute, a Number of epoch seconds; declare it N"))
    for j, rule in enumerate(m.rules):
        out += family_problem(rule.family, (*mp, "rules", j, "family"))
        out += _rule_problems(doc, (*mp, "rules", j), rule, table.source)
        out += _shadow_problems(doc, (*mp, "rules", j), j, m.rules)
    return out


def _attribute_layout_problems(doc: YamlDocument, ap: JsonPath, attr: AttributeMapping) -> list[Problem]:
    if attr.layout == "family":
        if attr.family is None:
            return [doc.problem(ap, "layout: family stores members or keys as qualifiers of their own "
                                    "family; name it with `family:`")]
        if attr.type not in (None, *_FAMILY_LAYOUT_TYPES):
            return [doc.problem((*ap, "layout"), f"layout: family is for sets and maps "
                                                 f"({', '.join(_FAMILY_LAYOUT_TYPES)}), not {attr.type}")]
    if attr.layout == "timestamps" and attr.type not in (None, "L"):
        return [doc.problem((*ap, "layout"), f"layout: timestamps is for lists (L), not {attr.type}")]
    return []


def _rule_problems(doc: YamlDocument, rp: JsonPath, rule: MappingRule, source: Source) -> list[Problem]:
    out: list[Problem] = []
    for field in ("row_key", "qualifier", "value"):
        template = getattr(rule, field)
        if template is None:
            continue
        try:
            template_fields(template)
        except ValueError as exc:
            out.append(doc.problem((*rp, field), str(exc)))
    if rule.timestamp == "ttl" and source.ttl is None:
        out.append(doc.problem((*rp, "timestamp"), "timestamp: ttl needs source.ttl; name the attribute "
                                                   "holding the time instead, or write_time"))
    for field, key in (("sort_key_prefix", source.key.sort), ("partition_key_prefix", source.key.partition)):
        if getattr(rule, field) is None:
            continue
        if key is None:
            out.append(doc.problem((*rp, field), "the table has no sort key to match a prefix on"))
        elif key.type != "S":
            out.append(doc.problem((*rp, field), f"prefixes match text keys, but {key.name!r} is {key.type}"))
    return out


def _shadow_problems(doc: YamlDocument, rp: JsonPath, j: int, rules: tuple[MappingRule, ...]) -> list[Problem]:
    """A rule after a more general one never matches (the first matching rule wins)."""
    rule = rules[j]
    for k, earlier in enumerate(rules[:j]):
        covers = all(
            mine is not None and mine.startswith(theirs) if theirs is not None else True
            for theirs, mine in ((earlier.sort_key_prefix, rule.sort_key_prefix),
                                 (earlier.partition_key_prefix, rule.partition_key_prefix)))
        if covers:
            return [doc.problem(rp, f"this rule never matches: rules[{k}] comes first and matches every item "
                                    f"it would; put the more specific rule first")]
    return []
