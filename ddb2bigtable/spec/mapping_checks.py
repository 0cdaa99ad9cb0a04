"""Mapping cross-checks: what a JSON Schema cannot say about how items become rows.

Family ids and declarations, attribute layouts and the families they own, rule templates
and prefixes, and rules an earlier one always catches. Each check gets a mapping the
schema found sound and returns located problems; none raises.
"""

from __future__ import annotations

from . import ids
from .errors import Problem
from .families import counter_families
from .mapping_syntax import template_fields
from .model import AttributeMapping, MappingRule, Source, TableSpec
from .schema_check import did_you_mean
from .yaml_source import JsonPath, YamlDocument

FAMILY_LAYOUT_TYPES = ("SS", "NS", "BS", "M")


def check_mapping(doc: YamlDocument, p: JsonPath, table: TableSpec) -> list[Problem]:
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
    out += _shared_member_family_problems(doc, mp, table)
    out += _counter_family_problems(doc, mp, table)
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
        if attr.type not in (None, *FAMILY_LAYOUT_TYPES):
            return [doc.problem((*ap, "layout"), f"layout: family is for sets and maps "
                                                 f"({', '.join(FAMILY_LAYOUT_TYPES)}), not {attr.type}")]
    if attr.layout == "timestamps" and attr.type not in (None, "L"):
        return [doc.problem((*ap, "layout"), f"layout: timestamps is for lists (L), not {attr.type}")]
    return []


def _shared_member_family_problems(doc: YamlDocument, mp: JsonPath, table: TableSpec) -> list[Problem]:
    """A `layout: family` family holds one attribute's members or keys as its qualifiers, so
    the decoder reads every cell in it as one of them: another attribute's column there (or
    any attribute without `family:`, when it is the default family) would come back as a
    member, bent. One such family per attribute, and nothing else in it."""
    m = table.mapping
    out: list[Problem] = []
    for j, attr in enumerate(m.attributes):
        family = attr.family
        if attr.layout != "family" or family is None:
            continue
        fix = f"give {attr.name!r} a family of its own (declare one in mapping.families)"
        if family == m.default_family:
            out.append(doc.problem((*mp, "attributes", j, "family"),
                                   f"{attr.name!r} (layout: family) would keep its members in the default family "
                                   f"{family!r}, beside every other attribute's column; {fix}"))
            continue
        others = [a.name for a in m.attributes if a is not attr and a.family == family]
        others += [f"rules[{i}]" for i, r in enumerate(m.rules) if r.family == family]
        if others:
            out.append(doc.problem((*mp, "attributes", j, "family"),
                                   f"family {family!r} keeps the members of {attr.name!r} (layout: family), so it "
                                   f"cannot also hold {', '.join(others)}: they would be read back as members; "
                                   f"{fix}"))
    return out


def _counter_family_problems(doc: YamlDocument, mp: JsonPath, table: TableSpec) -> list[Problem]:
    """A family holding counters is an aggregate (int64 Sum) family: Bigtable refuses any
    other write there, and every AddToCell must reach one cell at one fixed time (0, or
    the item's expiry on a TTL table). So counters get a family of their own, nothing else
    goes in it, a counter rule takes no time from an attribute, and no max_age collects
    them. A counter rule's `write_time` (the video example had it before counter families)
    is ignored with a plan warning, `counter-time`, so such a spec still plans and diffs."""
    m = table.mapping
    counters = {a.name for a in m.attributes if a.type == "counter"}
    families = counter_families(table)
    stored = {r.value for r in m.rules if r.value in counters}
    out: list[Problem] = []

    def holds(family: str) -> str:
        return (f"family {family!r} holds counters ({families[family]}), so it is an aggregate (int64 Sum) "
                f"family that takes nothing but AddToCell")

    if m.default_family in families:
        where = families[m.default_family]
        out.append(doc.problem((*mp, *_path(where), "family" if where.startswith("attributes") else "value"),
                               f"{holds(m.default_family)}, and it is the default family, where every other "
                               f"attribute goes; give the counters a family of their own (declare one in "
                               f"mapping.families)"))
    for j, a in enumerate(m.attributes):
        if a.name in counters and a.family is None and a.name not in stored:
            out.append(doc.problem((*mp, "attributes", j), f"counter {a.name!r} would share the default family "
                                   f"{m.default_family!r} with every other attribute; counters live in an aggregate "
                                   f"(int64 Sum) family of their own: add `family: <name>` (declared in "
                                   f"mapping.families)"))
        elif a.name not in counters and a.family in families and a.family != m.default_family:
            out.append(doc.problem((*mp, "attributes", j, "family"),
                                   f"{holds(a.family)}; give {a.name!r} another family"))
    for j, r in enumerate(m.rules):
        if r.value in counters and r.timestamp not in (None, "ttl", "write_time"):
            out.append(doc.problem((*mp, "rules", j, "timestamp"),
                                   f"{r.value!r} is a counter: every AddToCell adds to one cell at one fixed time "
                                   f"(0, or the item's expiry with TTL), so its time cannot come from "
                                   f"{r.timestamp!r}; remove the timestamp"))
        elif r.value not in counters and r.family in families and r.family != m.default_family:
            out.append(doc.problem((*mp, "rules", j, "family"),
                                   f"{holds(r.family)}; this rule writes other cells: give it another family"))
    for j, f in enumerate(m.families):
        if f.name in families and f.gc is not None and f.gc.max_age_seconds is not None:
            out.append(doc.problem((*mp, "families", j, "gc"),
                                   f"{holds(f.name)}; its cells keep one fixed time, so max_age would collect the "
                                   f"counters: keep max_versions only"))
    return out


def _path(where: str) -> JsonPath:
    """`rules[1]` -> ("rules", 1)."""
    name, index = where.rstrip("]").split("[")
    return (name, int(index))


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
