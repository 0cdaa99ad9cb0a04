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

import re
from collections.abc import Iterable
from typing import Any

import orjson

from ..spec.model import TableSpec
from .cell_values import MIXED
from .items import Item, value_type
from .scalars import PLAIN_JSON_NUMBER
from .value_forms import fits_plain, plain_number

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
    scan = TypeScan()
    for item in items:
        scan.add(item)
    return scan.types(table)


# Inside an M or L written by orjson (no spaces; every quote inside a string escaped), what
# plain JSON cannot hold: a set or binary tag, or a number whose text is not a JSON number
# (the lookahead is the plain-number rule of numbers.py, then the closing quote).
_NOT_PLAIN_INSIDE = re.compile(rb'"(?:SS|NS|BS|B)":|"N":"(?!' + PLAIN_JSON_NUMBER.encode() + rb'")')


class TypeScan:
    """`infer_types` one item at a time, plus `news`: whether an item not yet validated
    could change the result. Most items of an export repeat the types already seen, so
    the inference pass validates only the few that do not (exports/reader.scan_items)."""

    def __init__(self) -> None:
        self.seen: AttributeTypes = {}
        self.not_plain: set[str] = set()

    def add(self, item: Item) -> None:
        seen, not_plain = self.seen, self.not_plain
        for name, value in item.items():
            tag = value_type(value)
            previous = seen.setdefault(name, tag)
            if previous != tag:
                seen[name] = MIXED
            if tag in ("M", "L", "NS") and name not in not_plain and not fits_plain(value):
                not_plain.add(name)

    def news(self, raw: Any) -> bool:
        """False only when `add(raw)` would change nothing, were raw valid: every attribute
        has a one-tag value with the tag seen before (or the attribute is already mixed),
        and each M, L or NS not yet known to need the typed form is plain. An invalid
        item it turns down is one the load dead-letters: it must not count either. Errs
        towards True (then the item is validated and added as usual)."""
        if type(raw) is not dict:
            return True
        seen, not_plain = self.seen, self.not_plain
        for name, value in raw.items():
            if type(value) is not dict or len(value) != 1:
                return True
            tag = next(iter(value))
            known = seen.get(name)
            if known != tag and known != MIXED:
                return True
            if name in not_plain:
                continue
            if tag in ("M", "L"):
                if _NOT_PLAIN_INSIDE.search(orjson.dumps(value)):
                    return True
            elif tag == "NS":
                inner = value[tag]
                if type(inner) is not list or not all(type(x) is str and plain_number(x) for x in inner):
                    return True
        return False

    def types(self, table: TableSpec) -> AttributeTypes:
        declared = declared_types(table)
        seen, not_plain = self.seen, self.not_plain
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


def with_recorded(inferred: AttributeTypes, recorded: AttributeTypes, table: TableSpec) -> AttributeTypes:
    """The types to encode a later export of a table with (an incremental after its full
    export): each attribute the table already holds keeps the form its cells are in, so a
    row reads back with one type per attribute whichever export wrote it; attributes new
    to the table take this export's inference, and the spec's declared types win over both.
    A value that does not fit its attribute's recorded type is then a dead letter that
    says so, never a cell in a form nothing can read back."""
    declared = declared_types(table)
    return {**inferred, **{name: stored for name, stored in recorded.items() if name not in declared}}
