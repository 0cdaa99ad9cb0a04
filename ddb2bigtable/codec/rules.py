"""Mapping rules compiled for the codec: which row, family, qualifier and time an item gets.

A *plan* is one `MappingRule` made executable, or the default mapping (row key
partition#sort, one cell per attribute, qualifier = attribute name). Two kinds:

- a **value plan** (the rule names `value`) writes exactly one cell per item: the seeds'
  `Video:Formats @ UploadDate`, `Stats:Likes`, `UserComments:Content @ PostedAt`,
  `Invoice:Details`, `Payment:{SK}`;
- an **attribute plan** (the default mapping, or a rule without `value`) writes every
  non-key attribute as its own cell; a rule's `qualifier` template then prefixes each
  qualifier (`<qualifier><delimiter><attribute>`), so several items can share a row.

Keys inside a rule: a placeholder holds the key without the rule's prefix. A key that no
template names is *implied* on decode: the other key's suffix when both keys carry the
same prefix (the adjacency list's own item: PK = SK = `Invoice-0123`), else the prefix
itself (`Video`, `VideoStatsLikes`), else it does not come back. `lossy` says so.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..spec.model import KeyAttribute, MappingRule, TableSpec
from .items import AttributeValue, Item, value_type
from .mutations import CodecError
from .row_keys import KeyTemplate, key_part, key_value, number_from_key, number_key

TAIL = "\x00tail"  # the attribute name or member at the end of an attribute plan's qualifier
NOT_ATTRIBUTE_TIMES = (None, "write_time", "ttl")


@dataclass(frozen=True)
class RulePlan:
    index: int | None  # rules[index]; None for the default mapping
    prefixes: dict[str, str | None]  # key attribute -> the rule's prefix for it
    row: KeyTemplate
    strips: bool  # template placeholders hold keys without the prefix (rules' templates)
    family: str | None  # the rule's family (value plans: where the one cell goes)
    qualifier: KeyTemplate | None
    value_attr: str | None
    value_template: KeyTemplate | None
    timestamp: str | None
    implied: dict[str, str]  # key attribute -> field | other | prefix | absent
    versions_are_items: bool = False

    @property
    def is_value(self) -> bool:
        return self.value_attr is not None or self.value_template is not None

    @property
    def time_attribute(self) -> str | None:
        return None if self.timestamp in NOT_ATTRIBUTE_TIMES else self.timestamp

    @property
    def addressing_fields(self) -> tuple[str, ...]:
        return self.row.fields + (self.qualifier.fields if self.qualifier else ())

    def describe(self) -> str:
        if self.index is None:
            return "the default mapping"
        shown = [f"{k} prefix {p!r}" for k, p in self.prefixes.items() if p is not None]
        return f"rules[{self.index}]" + (f" ({', '.join(shown)})" if shown else "")

    def matches(self, item: Item) -> bool:
        for name, prefix in self.prefixes.items():
            if prefix is None:
                continue
            value = item.get(name)
            if value is None or value_type(value) != "S" or not value["S"].startswith(prefix):
                return False
        return True

    def attribute_qualifier(self, delimiter: str) -> KeyTemplate:
        """Attribute plans: the qualifier of each attribute cell, its last field the name or member."""
        if self.qualifier is None:
            return KeyTemplate((b"", b""), (TAIL,))
        q = self.qualifier
        return KeyTemplate((*q.literals[:-1], q.literals[-1] + delimiter.encode(), b""), (*q.fields, TAIL))


def default_plan(table: TableSpec) -> RulePlan:
    key = table.source.key
    names = [key.partition.name] + ([key.sort.name] if key.sort else [])
    literals = (b"", table.mapping.delimiter.encode(), b"") if key.sort else (b"", b"")
    return RulePlan(index=None, prefixes={n: None for n in names}, row=KeyTemplate(literals, tuple(names)),
                strips=False, family=None, qualifier=None, value_attr=None, value_template=None,
                timestamp=None, implied={n: "field" for n in names})


def rule_plan(table: TableSpec, index: int, rule: MappingRule, keeps_versions: bool) -> RulePlan:
    """`keeps_versions`: the rule's family GC keeps more than one version per column."""
    key = table.source.key
    keys = [key.partition] + ([key.sort] if key.sort else [])
    prefixes = {key.partition.name: rule.partition_key_prefix}
    if key.sort:
        prefixes[key.sort.name] = rule.sort_key_prefix
    row = KeyTemplate.parse(rule.row_key) if rule.row_key else default_plan(table).row
    qualifier = KeyTemplate.parse(rule.qualifier) if rule.qualifier is not None else None
    value_attr = value_template = None
    if rule.value is not None:
        parsed = KeyTemplate.parse(rule.value)
        if parsed.fields:
            value_template = parsed
        else:
            value_attr = rule.value
    named = set(row.fields) | set(qualifier.fields if qualifier else ()) | set(
        value_template.fields if value_template else ())
    if value_attr:
        named.add(value_attr)
    implied = {k.name: _implied(k, keys, named, prefixes) for k in keys}
    plan = RulePlan(index=index, prefixes=prefixes, row=row, strips=rule.row_key is not None, family=rule.family,
                qualifier=qualifier, value_attr=value_attr, value_template=value_template,
                timestamp=rule.timestamp, implied=implied)
    shared = any(v in ("prefix", "absent") for v in implied.values())
    if plan.is_value and plan.time_attribute and shared and keeps_versions:
        plan = replace(plan, versions_are_items=True)
    return plan


def _implied(k: KeyAttribute, keys: list[KeyAttribute], named: set[str], prefixes: dict[str, str | None]) -> str:
    if k.name in named:
        return "field"
    for other in keys:
        if other.name != k.name and other.name in named and other.type == k.type \
                and prefixes[other.name] == prefixes[k.name]:
            return "other"
    return "prefix" if prefixes[k.name] is not None else "absent"


# --- placeholder values -------------------------------------------------------------------

class Fields:
    """Placeholder values of one table: keys by the key schema, other attributes by type."""

    def __init__(self, keys: dict[str, KeyAttribute], stored: dict[str, str]):
        self.keys = keys
        self.stored = stored

    def encode(self, plan: RulePlan, item: Item, names: tuple[str, ...], *, for_value: bool = False,
               strip: bool = True) -> dict[str, bytes]:
        out: dict[str, bytes] = {}
        for name in names:
            if name == TAIL or name in out:
                continue
            value = item.get(name)
            if value is None:
                raise CodecError(f"{plan.describe()} needs {{{name}}}, which this item does not have")
            out[name] = self._bytes(plan, name, value, for_value, strip)
        return out

    def _bytes(self, plan: RulePlan, name: str, value: AttributeValue, for_value: bool, strip: bool) -> bytes:
        key = self.keys.get(name)
        if key is not None:
            prefix = plan.prefixes.get(name) if strip else None
            if prefix:
                value = {"S": value["S"][len(prefix):]}
            if for_value and key.type == "N":
                return value["N"].encode()
            return key_part(value, key.type, name)
        tag = value_type(value)
        if tag == "S":
            return value["S"].encode()
        if tag == "N":
            return value["N"].encode() if for_value else number_key(value["N"]).encode()
        if tag == "B":
            return bytes(value["B"])
        raise CodecError(f"{plan.describe()}: placeholder {{{name}}} is {tag}; placeholders take strings, "
                         f"numbers or binary")

    def decode(self, plan: RulePlan, found: dict[str, bytes], *, for_value: bool = False,
               strip: bool = True) -> dict[str, AttributeValue]:
        """Placeholder values back; key attributes whole again (the rule's prefix put back)."""
        out: dict[str, AttributeValue] = {}
        for name, data in found.items():
            if name == TAIL:
                continue
            key = self.keys.get(name)
            stored = key.type if key is not None else self.stored.get(name, "S")
            stored = "N" if stored == "counter" else stored
            try:
                if stored == "B":
                    out[name] = {"B": data}
                elif stored == "N":
                    out[name] = {"N": data.decode() if for_value else number_from_key(data.decode())}
                elif key is not None:
                    prefix = (plan.prefixes.get(name) or "") if strip else ""
                    out[name] = {"S": prefix + key_value(data, "S")["S"]}
                else:
                    out[name] = {"S": data.decode()}
            except UnicodeDecodeError as exc:
                raise CodecError(f"{plan.describe()}: {{{name}}} in the row is not UTF-8 text") from exc
        return out

    def keys_back(self, plan: RulePlan, fields: dict[str, AttributeValue]) -> Item:
        """The item's key attributes from decoded placeholders, prefixes and implications."""
        keys: Item = {}
        for name, how in plan.implied.items():
            prefix = plan.prefixes.get(name) or ""
            if how == "field" and name in fields:
                keys[name] = fields[name]
            elif how == "other":
                other = next(n for n in plan.implied if n != name)
                value = fields.get(other)
                if value is not None and "S" in value:
                    keys[name] = {"S": prefix + value["S"][len(plan.prefixes.get(other) or ""):]}
                elif value is not None:
                    keys[name] = value
            elif how == "prefix":
                keys[name] = {"S": prefix}
        return keys
