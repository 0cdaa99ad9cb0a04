"""Attribute types for the codec: declared in the spec, or inferred from the export.

Bigtable stores bytes, so the codec must know each attribute's type to write a value in a
form it can read back (DESIGN.md: "types come from the mapping, declared or inferred
from the export like the Spanner migration tool does, never from tags inside values").

`infer_types` streams over every item once, keeping one entry per attribute name
(O(attributes) memory):

- declared types win: the table's key schema (and index keys), and `mapping.attributes`
  with a `type` (`counter` included);
- an undeclared attribute gets the type it has in every item; seen with two types, it is
  `mixed` and stored self-describing (typed DynamoDB JSON);
- an M or L that holds a set or binary anywhere (or an NS/number whose text is not plain
  JSON) is `mixed` too, declared or not: plain JSON would read a set back as a list and
  binary as text, and the decision must be by type, not by looking at a value's bytes.
"""

from __future__ import annotations

from collections.abc import Iterable

from .cell_values import MIXED
from .items import Item, value_type
from .spec import TableSpec
from .value_forms import fits_plain

AttributeTypes = dict[str, str]  # attribute -> "S", "N", ..., "counter", or "mixed"


def declared_types(table: TableSpec) -> AttributeTypes:
    """Types the spec states: key attributes (table, GSIs, LSIs), then mapped attributes."""
    source = table.source
    declared: AttributeTypes = {}
    keys = [source.key.partition, source.key.sort]
    for gsi in source.gsis:
        keys += [gsi.key.partition, gsi.key.sort]
    keys += [lsi.sort for lsi in source.lsis]
    for key in keys:
        if key is not None:
            declared.setdefault(key.name, key.type)
    for attr in table.mapping.attributes:
        if attr.type is not None:
            declared.setdefault(attr.name, attr.type)
    return declared


def infer_types(items: Iterable[Item], table: TableSpec) -> AttributeTypes:
    """Every attribute's stored type (see the module docstring)."""
    declared = declared_types(table)
    seen: AttributeTypes = {}
    not_plain: set[str] = set()
    for item in items:
        for name, value in item.items():
            tag = value_type(value)
            previous = seen.setdefault(name, tag)
            if previous != tag:
                seen[name] = MIXED
            if tag in ("M", "L", "NS") and name not in not_plain and not fits_plain(value):
                not_plain.add(name)
    types: AttributeTypes = {}
    for name in [*declared, *(n for n in seen if n not in declared)]:
        stated = declared.get(name)
        if stated is not None:
            types[name] = MIXED if stated in ("M", "L", "NS") and name in not_plain else stated
        else:
            types[name] = MIXED if name in not_plain else seen[name]
    return types


def merge_types(a: AttributeTypes, b: AttributeTypes) -> AttributeTypes:
    """Two partial inferences as one: an attribute two parts disagree on is `mixed`.

    `infer_types` per data file, merged with this, gives what it gives over the whole
    export (a type differs across items, or an M/L/NS is not plain JSON somewhere)."""
    merged = dict(a)
    for name, stored in b.items():
        if merged.setdefault(name, stored) != stored:
            merged[name] = MIXED
    return merged
