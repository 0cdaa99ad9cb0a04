"""What a mapping cannot give back on decode, in sentences the loader prints.

Nothing is lost silently: a rule that stores one value drops its items' other attributes,
a key that no template names cannot come back exactly, a cell time read back is rendered
in one canonical form. Each such case of a table's mapping is one sentence here. The
default mapping is lossless (numbers as keys come back in canonical form only).
"""

from __future__ import annotations

from collections.abc import Iterator

from .cell_values import COUNTER, MIXED
from .compiled import CompiledMapping
from .rules import RulePlan


def lossy_sentences(codec: CompiledMapping) -> Iterator[str]:
    key = codec.table.source.key
    numeric = [k.name for k in (key.partition, key.sort) if k is not None and k.type == "N"]
    if numeric:
        yield (f"number keys ({', '.join(numeric)}) come back as canonical plain decimal text "
               f"(1.50 as 1.5, 1E+2 as 100); the number is the same")
    counters = [n for n, t in codec.types.items() if t == COUNTER]
    if counters:
        yield (f"counters ({', '.join(counters)}) are stored as int64 and come back as plain integers "
               f"(a value written 3.0 comes back as 3)")
    for plan in codec.plans:
        if plan.index is not None:
            yield from _rule_sentences(codec, plan)
    yield from _shared_families(codec)


def _rule_sentences(codec: CompiledMapping, plan: RulePlan) -> Iterator[str]:
    """What one rule's mapping keeps of an item, part by part."""
    yield from _value_cell(codec, plan)
    yield from _implied(plan)
    yield from _times(codec, plan)
    yield from _templates(codec, plan)
    if not plan.is_value:
        yield (f"{plan.describe()}: an update rewrites the cells its new version has; attributes, set members or "
               f"map keys the new version no longer has stay in the row")


def _value_cell(codec: CompiledMapping, plan: RulePlan) -> Iterator[str]:
    if not plan.is_value:
        return
    at = plan.time_attribute
    column = f"{codec.value_family(plan)}:{codec.value_qualifier_text(plan)}"
    if plan.value_attr:
        kept = [plan.value_attr]
    else:
        assert plan.value_template is not None  # a value plan has a value attribute or a template
        kept = ["the value template's " + ", ".join(f"{{{f}}}" for f in plan.value_template.fields)]
    kept += [f for f in plan.addressing_fields if f not in kept and f not in plan.implied]
    if at:
        kept.append(f"{at} (as the cell time)")
    yield (f"{plan.describe()} writes one cell per item, {column}, holding {', '.join(kept)}; "
           f"any other attribute of its items is not stored")


def _implied(plan: RulePlan) -> Iterator[str]:
    """Key fields the rule implies (by a prefix, or from the other key) instead of storing."""
    d = plan.describe()
    names = list(plan.implied)
    for name, how in plan.implied.items():
        prefix = plan.prefixes.get(name)
        if how == "other":
            other = next(n for n in names if n != name)
            yield (f"{d}: {name} is not stored; it comes back as {prefix or ''!r} followed by what follows "
                   f"the prefix in {other} (exact when they are equal, as for an adjacency list's own item)")
        elif how == "prefix":
            shared = "several items keep one column as versions" if plan.versions_are_items else \
                "items that differ only there write the same cell, and the last one wins"
            yield (f"{d}: {name} is stored only as its prefix {prefix!r} (no template names {{{name}}}), so "
                   f"it comes back as {prefix!r}; {shared}")
        elif how == "absent":
            yield f"{d}: {name} is not stored (no template names {{{name}}}) and does not come back"


def _times(codec: CompiledMapping, plan: RulePlan) -> Iterator[str]:
    """What cell times hold: items as versions, a time attribute, the TTL."""
    d, at, family = plan.describe(), plan.time_attribute, codec.value_family(plan)
    if plan.versions_are_items:
        yield (f"{d}: items are versions of {family}:{codec.value_qualifier_text(plan)} at their {at}; two items "
               f"of one row with the same {at} keep only one, and an update that changes {at} leaves the old "
               f"version (its old time is not known)")
    if plan.is_value and at:
        if codec.stored(at) in ("N", COUNTER):
            yield (f"{d}: {at} becomes the cell time and comes back as epoch seconds to the millisecond "
                   f"(a value written in milliseconds comes back in seconds)")
        else:
            yield (f"{d}: {at} becomes the cell time and comes back as UTC text like 2023-09-10T15:21:48 "
                   f"(to the millisecond; a time zone offset or 'Z' is not kept)")
    ttl = codec.table.source.ttl
    if ttl and plan.is_value and ttl.attribute not in (plan.value_attr, at, *plan.addressing_fields):
        if plan.timestamp == "ttl" or (plan.timestamp is None and family in codec.ttl_families):
            yield (f"{d}: {ttl.attribute} comes back from the cell time (the expiry, to the millisecond); "
                   f"a TTL DynamoDB ignores (more than five years past, or not a number) does not come back")
        else:
            yield f"{d}: {ttl.attribute} is not stored"


def _templates(codec: CompiledMapping, plan: RulePlan) -> Iterator[str]:
    """Templates that cannot be split back, and placeholders that come back as text."""
    d = plan.describe()
    templates = [("row_key", plan.row if plan.strips else None), ("qualifier", plan.qualifier),
                 ("value", plan.value_template)]
    for field, template in templates:
        if template is None:
            continue
        if not template.decodable:
            yield (f"{d}: its {field} template has two placeholders with nothing between them, so a "
                   f"cell cannot be split back into {', '.join(template.fields)}")
        for name in template.fields:
            stored = codec.stored(name)
            if name not in plan.implied and stored not in ("S", "N", "B", COUNTER):
                yield (f"{d}: placeholder {{{name}}} is {stored}"
                       f"{'' if stored != MIXED else ' (its type varies)'}; it comes back as text")


def _shared_families(codec: CompiledMapping) -> Iterator[str]:
    mapping = codec.table.mapping
    catch_all = any(p.index is not None and all(v is None for v in p.prefixes.values()) for p in codec.plans)
    default_families = {codec.json_family(codec.plans[-1], a.name) for a in mapping.attributes}
    default_families.add(mapping.default_family)
    if mapping.rules and not catch_all:
        for plan in codec.plans[:-1]:
            family = codec.value_family(plan) if plan.is_value else plan.family
            if plan.is_value and family in default_families:
                yield (f"{plan.describe()} writes family {family}, which items that match no rule also use "
                       f"(default mapping); a row holding both cannot always be told apart")
    users: dict[str, list[str]] = {}
    for a in mapping.attributes:
        how, family = codec.layout.get(a.name, ("json", codec.json_family(codec.plans[-1], a.name)))
        users.setdefault(family, []).append(a.name if how == "json" else f"{a.name} ({how} layout)")
    for name, (how, family) in codec.layout.items():
        if how == "family" and (len(users[family]) > 1 or family == mapping.default_family):
            others = [u for u in users[family] if not u.startswith(name + " (")]
            if family == mapping.default_family:
                others.append("every unmapped attribute")
            yield (f"family {family} holds the members or keys of {name} and also {', '.join(others)}; "
                   f"decode cannot tell them apart: give {name} a family of its own")


def layout_notes(codec: CompiledMapping) -> Iterator[str]:
    """Layouts that cannot apply because the attribute's type is not settled (not lossy)."""
    for a in codec.table.mapping.attributes:
        if a.layout != "json" and a.name not in codec.layout:
            yield (f"{a.name}: layout {a.layout} needs a "
                   f"{'set or map' if a.layout == 'family' else 'list'} type, but its values are "
                   f"{codec.stored(a.name)}; it is stored as one self-describing cell instead")
