"""A table's mapping and its recorded types, made into lookups once.

The encoder (`codec.Codec`), the decoder (`decode.RowDecoder`) and the lossy notes
(`lossy`) all answer "where does this attribute go, in which form" from this one frozen
value, so they cannot disagree and none of them reaches into another's state.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..spec.families import TTL_RULE, counter_families, family_gc
from ..spec.mapping_checks import FAMILY_LAYOUT_TYPES
from ..spec.model import KeyAttribute, TableSpec
from .cell_values import COUNTER, MIXED
from .row_keys import KeyTemplate
from .rules import Fields, RulePlan, default_plan, rule_plan
from .type_inference import UNNAMED, AttributeTypes, declared_types


@dataclass(frozen=True)
class CompiledMapping:
    table: TableSpec
    declared: dict[str, str]  # the spec's own types (a value must match them)
    types: dict[str, str]  # every attribute's stored type: declared, else inferred
    unnamed_mixed: bool  # the table's record says attributes it does not name are mixed (type_inference.UNNAMED)
    typed_json: frozenset[str]  # attributes stored self-describing (typed DynamoDB JSON)
    default_family: str
    delimiter: str
    salt: int | None  # buckets, when the row key is salted
    pk: KeyAttribute
    keys: dict[str, KeyAttribute]  # the key attributes by name
    ttl: str | None  # the TTL attribute
    ttl_families: frozenset[str]  # families whose cells carry the item's expiry
    counter_families: frozenset[str]  # aggregate (int64 Sum) families: counters go in by AddToCell
    attribute_family: dict[str, str]  # attribute -> its own family (default mapping)
    layout: dict[str, tuple[str, str]]  # attribute -> (`family`|`timestamps`, family)
    member_family: dict[str, str]  # family -> the attribute whose members or entries it holds
    list_column: dict[tuple[str, bytes], str]  # (family, qualifier) -> list attribute kept as versions
    fields: Fields
    plans: tuple[RulePlan, ...]  # the rules in order, then the default mapping
    qualifiers: dict[int | None, KeyTemplate]  # attribute plans' qualifier templates by rule index

    def stored(self, name: str) -> str:
        """How an attribute's values are stored: its declared/inferred type, else `mixed`
        (what the table's record says of a name it does not name, once it says anything)."""
        return self.types.get(name, MIXED)

    def value_family(self, plan: RulePlan) -> str:
        return plan.family or self.default_family

    def marker_family(self, plan: RulePlan) -> str:
        """Where a keys-only item's marker cell goes (qualifier = empty attribute name)."""
        return plan.family if plan.index is not None and plan.family else self.default_family

    def json_family(self, plan: RulePlan, name: str) -> str:
        if plan.index is not None and plan.family:
            return plan.family
        return self.attribute_family.get(name, self.default_family)

    def value_qualifier_text(self, plan: RulePlan) -> str:
        assert plan.index is not None  # value plans come from rules (rule_plan sets the index)
        return self.table.mapping.rules[plan.index].qualifier or plan.value_attr or "value"


def compile_mapping(table: TableSpec, types: AttributeTypes) -> CompiledMapping:
    m = table.mapping
    key = table.source.key
    keys = {k.name: k for k in (key.partition, key.sort) if k is not None}
    declared = declared_types(table)
    stored = {**declared, **{name: kind for name, kind in types.items() if name != UNNAMED}}
    policies = {f.name: f.rule for f in family_gc(table)}
    layout: dict[str, tuple[str, str]] = {}
    for a in m.attributes:
        kind = stored.get(a.name, MIXED)
        if (a.layout == "family" and kind in FAMILY_LAYOUT_TYPES) or (a.layout == "timestamps" and kind == "L"):
            layout[a.name] = (a.layout, a.family or m.default_family)
    rules = [rule_plan(table, i, r, policies[r.family or m.default_family].max_versions != 1)
             for i, r in enumerate(m.rules)]
    plans = (*rules, default_plan(table))
    return CompiledMapping(
        table=table, declared=declared, types=stored, unnamed_mixed=types.get(UNNAMED) == MIXED,
        typed_json=frozenset(name for name, kind in stored.items() if kind == MIXED),
        default_family=m.default_family, delimiter=m.delimiter, salt=m.salt.buckets if m.salt else None,
        pk=key.partition, keys=keys, ttl=table.source.ttl.attribute if table.source.ttl else None,
        ttl_families=frozenset(name for name, rule in policies.items() if rule == TTL_RULE),
        counter_families=frozenset(counter_families(table)),
        attribute_family={a.name: a.family for a in m.attributes if a.family},
        layout=layout,
        member_family={fam: name for name, (how, fam) in layout.items() if how == "family"},
        list_column={(fam, name.encode()): name for name, (how, fam) in layout.items() if how == "timestamps"},
        fields=Fields(keys, stored),
        plans=plans,
        qualifiers={p.index: p.attribute_qualifier(m.delimiter) for p in plans if not p.is_value},
    )


def wanted_tags(mapping: CompiledMapping) -> dict[str, str | None]:
    """Attribute -> the one type tag its values may have, so the encoder's check is one
    lookup per attribute (None: no tag fits, the spec and the inference disagree; then
    the encoder says which). Attributes of any tag (mixed, undeclared) are not in it."""
    wanted: dict[str, str | None] = {}
    for name in {*mapping.declared, *mapping.types}:
        tags = {"N" if kind == COUNTER else kind
                for kind in (mapping.declared.get(name), mapping.stored(name)) if kind not in (None, MIXED)}
        if tags:
            wanted[name] = tags.pop() if len(tags) == 1 else None
    return wanted
