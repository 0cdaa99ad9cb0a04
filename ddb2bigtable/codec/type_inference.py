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

import msgspec
import orjson
from msgspec import UNSET, Raw, Struct, UnsetType

from ..spec.errors import InputError, Problem
from ..spec.model import TableSpec
from ..spec.yaml_source import format_path
from .cell_values import MIXED
from .items import ALL_TYPES, Item, value_type
from .scalars import PLAIN_JSON_NUMBER
from .value_forms import fits_plain, plain_number

AttributeTypes = dict[str, str]  # attribute -> "S", "N", ..., "counter", or "mixed"
# In a table's record (bigtable/table_types.py), this key holding `mixed` says every attribute
# the record does not name is stored `mixed`: serve or replicate wrote such attributes. No
# DynamoDB attribute has an empty name.
UNNAMED = ""


def declared_types(table: TableSpec) -> AttributeTypes:
    """Types the spec states: key attributes (table, GSIs, LSIs), then mapped attributes."""
    declared: AttributeTypes = {}
    for name, kind, _ in table.type_declarations():
        declared.setdefault(name, kind)
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
    the inference pass validates only the few that do not (exports/reader.scan_items),
    and `known_items` says the same of an item still in its JSON text, without parsing it
    into Python objects."""

    def __init__(self) -> None:
        self.seen: AttributeTypes = {}
        self.not_plain: set[str] = set()
        self._changes = 0  # how often `seen` or `not_plain` changed
        self._asked = 0  # items `news` saw since `known_items` last built its type
        self._known: Any = None
        self._known_at = 0  # `_changes` when `_known` was built

    def add(self, item: Item) -> None:
        seen, not_plain = self.seen, self.not_plain
        for name, value in item.items():
            tag = value_type(value)
            previous = seen.get(name)
            if previous != tag and previous != MIXED:
                seen[name] = tag if previous is None else MIXED
                self._changes += 1
            if tag in ("M", "L", "NS") and name not in not_plain and not fits_plain(value):
                not_plain.add(name)
                self._changes += 1

    def news(self, raw: Any) -> bool:
        """False only when `add(raw)` would change nothing, were raw valid: every attribute
        has a one-tag value with the tag seen before (or the attribute is already mixed),
        and each M, L or NS not yet known to need the typed form is plain. An invalid
        item it turns down is one the load dead-letters: it must not count either. Errs
        towards True (then the item is validated and added as usual)."""
        self._asked += 1
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

    def known_items(self) -> Any:
        """`news` as a msgspec type (decode with `strict=False`): a JSON object that decodes
        as it is an item `news` turns down, were it parsed; one that does not may still be
        (then ask `news`). None until an item was added. In C, without building the item:
        each attribute seen is an optional field of a Struct that forbids others, its value
        a Struct of its one tag (any tag for a mixed attribute), and an M, L or NS not yet
        known to need the typed form decodes only if plain JSON holds it (`_Plain`). Built
        again once the types changed, but only after as many items as there are attributes
        went to `news` since the last build (a build costs ~5 µs an attribute: an export
        whose every item brings a new attribute would otherwise pay one per item). None past
        KNOWN_AT_MOST attributes, and an attribute whose name msgspec cannot take as a
        field's (a quote, a backslash or a control character in it) is left out: its items
        go to `news`."""
        if self._changes != self._known_at and self._asked >= len(self.seen):
            self._known = _known_item(self.seen, self.not_plain) if len(self.seen) <= KNOWN_AT_MOST else None
            self._known_at, self._asked = self._changes, 0
        return self._known

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


# msgspec finds a field by a scan of the Struct's fields: a 10-attribute line decodes in
# 1.2 µs against 64 fields, 2.2 against 256, 3.6 against 512, as slow as `news` (3.6).
KNOWN_AT_MOST = 256
_NO_FIELD_NAME = re.compile(r'[\\"\x00-\x1f]')  # msgspec refuses these in a field's name


class _Plain(Struct, forbid_unknown_fields=True, gc=False):
    """A value inside an M or L that plain JSON holds exactly (`_fits_plain_nested`): a
    set or binary tag is an unknown field; decoded with `strict=False`, an N's text is
    read as a float, which takes exactly the JSON numbers (and `inf`, `nan`, which are no
    DynamoDB number: such an item is invalid and counts for nothing anyway; a number past
    a float's range, `1e400`, fails and goes to `news`). Property-tested against `news`
    and `add` (tests/exports/test_export_types.py)."""

    S: Raw | UnsetType = UNSET
    N: float | UnsetType = UNSET
    BOOL: Raw | UnsetType = UNSET
    NULL: Raw | UnsetType = UNSET
    M: dict[str, _Plain] | UnsetType = UNSET
    L: list[_Plain] | UnsetType = UNSET


def _tagged(tag: str, inner: Any) -> Any:
    return msgspec.defstruct(f"Tagged{tag}", [(tag, inner)], forbid_unknown_fields=True, gc=False)


_PLAIN_INSIDE: dict[str, Any] = {"M": dict[str, _Plain], "L": list[_Plain], "NS": list[float]}
_ANY_OF_TAG = {tag: _tagged(tag, Raw) for tag in ALL_TYPES}  # one tag, anything inside
_PLAIN_OF_TAG = {**_ANY_OF_TAG, **{tag: _tagged(tag, inner) for tag, inner in _PLAIN_INSIDE.items()}}
# A mixed attribute not yet known to need the typed form: any one tag, its M, L or NS
# plain (`add` would record one that is not); two tags at once make the item invalid.
_PLAIN_ANY_TAG = msgspec.defstruct("PlainAnyTag", [(tag, _PLAIN_INSIDE.get(tag, Raw) | UnsetType, UNSET)
                                                   for tag in ALL_TYPES], forbid_unknown_fields=True, gc=False)


def _known_item(seen: AttributeTypes, not_plain: set[str]) -> Any:
    """TypeScan.known_items' Struct for these types."""
    fields, names = [], {}
    for i, (name, tag) in enumerate(seen.items()):
        if _NO_FIELD_NAME.search(name):
            continue
        if tag == MIXED:
            kind = Raw if name in not_plain else _PLAIN_ANY_TAG
        else:
            kind = _ANY_OF_TAG[tag] if name in not_plain else _PLAIN_OF_TAG[tag]
        fields.append((f"a{i}", kind | UnsetType, UNSET))
        names[f"a{i}"] = name
    return msgspec.defstruct("KnownItem", fields, rename=names, forbid_unknown_fields=True, gc=False)


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
    export, the first load after serve or replicate wrote new attributes): each attribute
    the table already holds keeps the form its cells are in (`held_types`), so a row reads
    back with one type per attribute whichever writer wrote it; attributes new to the table
    take this export's inference (the spec's declared types, else the data's), unless the
    record says the attributes it does not name are `mixed` (UNNAMED): serve or replicate
    may have written any of them self-describing, so they stay so. A value that does not
    fit its attribute's recorded type is then a dead letter that says so, never a cell in a
    form nothing can read back."""
    held = held_types(table, recorded)
    if UNNAMED in held:
        inferred = {name: MIXED if name not in held else kind for name, kind in inferred.items()}
    return {**inferred, **held}


def held_types(table: TableSpec, held: AttributeTypes,
               holder: str = "the table's record of its types") -> AttributeTypes:
    """The one rule between the spec's declared types and the types a table's cells hold
    (its record, bigtable/table_types.py, with the work folder's): the table is the
    authority, since its cells can only be read back in the form they were written in,
    and a declaration that disagrees is bad input, never a silent pick either way. A
    declared M, L or NS agrees with `mixed` (inference stores one that holds sets or
    binary self-describing: `TypeScan.types`). An attribute the record does not name is
    `mixed` once the record says so (UNNAMED), else takes the declaration. Load, the Beam
    and Dataflow loads, replicate, verify and serve all call this before they write or read
    a row; InputError at the declaration's line naming the attribute, both types and what
    to do."""
    problems = []
    seen: set[str] = set()
    for name, declared, path in table.type_declarations():
        if name in seen:
            continue
        seen.add(name)
        stored = held.get(name, held.get(UNNAMED))
        if stored is None or stored == declared or (stored == MIXED and declared in ("M", "L", "NS")):
            continue
        where = table.location
        keep = ("drop its type here (they are self-describing: any type reads back)" if stored == MIXED else
                f"declare {name} as {stored} here (or drop its type)")
        holds = f"holds it as {stored}" if name in held else (
            "names no type for it and holds every attribute it does not name as mixed (serve or replicate wrote "
            "attributes no load recorded)")
        problems.append(Problem.at(table.type_locations.get(path), where.file if where else "spec",
                                   format_path(("tables", table.id, *path)), (
            f"declares {name} as {declared}, but {holder} {holds}: the table's cells of {name} are "
            f"{stored} (written by an earlier load, replicate or serve); {keep} to keep them, or, to store {name} "
            f"as {declared}, delete the table and its row in that record and load it again")))
    if problems:
        raise InputError(problems)
    return held
