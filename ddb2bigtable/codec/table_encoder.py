"""The default mapping's encoder, compiled once per table: an item straight to its row's
cells in one flat loop, each value checked as it is encoded (issue #33).

`Codec.encode` answers every mapping and explains every refusal, and pays for it per item:
the export reader walks each value to check it is DynamoDB JSON, the codec looks up each
attribute's type, family, time and form, and walks maps and lists again to write them as
plain JSON. Here each attribute's cell is made by a maker chosen once (by its stored
type), with its family, qualifier and time, and a map or list is checked and converted in
the same walk. The same loop gives the cells as `SetCell`s in a `RowMutation` (`encode`, what
every caller but the loader takes) or as plain tuples (`cells`: the loader writes their
protobuf bytes from them, load/entry_bytes.py).

It only answers what it answers exactly as the general path would, for an item as the
export reader parses it (binary still base64 text) or as the codec holds it: anything
else (a value that is not well-formed DynamoDB JSON, a type the mapping does not expect,
binary, a counter, a layout of its own, an expired TTL, a cell over Bigtable's limits) is
`None`, and the caller takes the general path, which gives the located message or the
special row. So what is written, dead-lettered or refused does not change;
tests/load/test_fast_path.py compares the two paths over random export lines.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from .cell_values import COUNTER, EXISTS_MARKER, FALSE, MIXED, NULL_BYTES, TRUE
from .compiled import CompiledMapping, wanted_tags
from .limits import CELL_VALUE_MAX, QUALIFIER_MAX
from .mutations import CodecError, DeleteRow, Expired, RowCells, RowMutation, SetCell
from .row_key_maker import row_key_maker
from .scalars import is_number
from .timestamps import FAR_FUTURE_MICROS, millis, ttl_timestamp
from .value_forms import plain_number


class _Unfit(Exception):
    """Not this encoder's to answer: the general path decides (and explains)."""


# --- checked and converted in one walk -----------------------------------------------------

def _plain_number(text: Any) -> orjson.Fragment:
    """A DynamoDB number that is also a JSON number (so a valid one), as its exact text."""
    if type(text) is str and plain_number(text):
        return orjson.Fragment(text)
    raise _Unfit


def _plain_map(inner: Any) -> dict[str, Any]:
    """An M's entries as plain JSON values (`value_forms.plain_json`), each checked as the
    export reader checks it; sets and binary have no plain form. A one-entry dict's S is
    read by `get` in the loop itself (most of a document), much faster than unpacking it."""
    if type(inner) is not dict:
        raise _Unfit
    out: dict[str, Any] = {}
    for k, v in inner.items():
        if type(v) is not dict or len(v) != 1:
            raise _Unfit
        x = v.get("S")
        out[k] = x if type(x) is str else _plain_value(v)
    return out


def _plain_list(inner: Any) -> list[Any]:
    if type(inner) is not list:
        raise _Unfit
    out: list[Any] = []
    for v in inner:
        if type(v) is not dict or len(v) != 1:
            raise _Unfit
        x = v.get("S")
        out.append(x if type(x) is str else _plain_value(v))
    return out


def _plain_value(v: dict[str, Any]) -> Any:
    """A one-entry typed value other than S (or S not holding text, which is refused)."""
    x = v.get("N")
    if x is not None:
        return _plain_number(x)
    x = v.get("L")
    if x is not None:
        return _plain_list(x)
    (t, x), = v.items()
    return _plain_other(t, x)


def _plain_other(tag: str, inner: Any) -> Any:
    if tag == "M":
        return _plain_map(inner)
    if tag == "L":
        return _plain_list(inner)
    if tag == "BOOL" and type(inner) is bool:
        return inner
    if tag == "NULL" and inner is True:
        return None
    raise _Unfit


def _typed(value: Any) -> None:
    """A whole typed value, checked as the export reader checks one (non-empty sets, ...);
    binary is refused: its export form (base64 text) is not the codec's (bytes)."""
    if type(value) is not dict or len(value) != 1:
        raise _Unfit
    (tag, inner), = value.items()
    if tag == "M" and type(inner) is dict:
        for v in inner.values():
            _typed(v)
    elif tag == "L" and type(inner) is list:
        for v in inner:
            _typed(v)
    elif not _SCALAR_OK.get(tag, _never)(inner):
        raise _Unfit


def _never(_: Any) -> bool:
    return False


def _set_of(member: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda inner: type(inner) is list and len(inner) > 0 and all(member(x) for x in inner)


def _is_str(inner: Any) -> bool:
    return type(inner) is str


_SCALAR_OK: dict[str, Callable[[Any], bool]] = {
    "S": _is_str,
    "N": is_number,
    "BOOL": lambda inner: type(inner) is bool,
    "NULL": lambda inner: inner is True,
    "SS": _set_of(_is_str),
    "NS": _set_of(is_number),
}


# --- one cell per attribute, by its stored type -------------------------------------------

def _s_cell(inner: Any) -> bytes:
    if type(inner) is not str:
        raise _Unfit
    return inner.encode()


def _n_cell(inner: Any) -> bytes:
    if not is_number(inner):
        raise _Unfit
    return inner.encode()


def _bool_cell(inner: Any) -> bytes:
    if type(inner) is not bool:
        raise _Unfit
    return TRUE if inner else FALSE


def _null_cell(inner: Any) -> bytes:
    if inner is not True:
        raise _Unfit
    return NULL_BYTES


def _ss_cell(inner: Any) -> bytes:
    if type(inner) is not list or not inner or not all(type(x) is str for x in inner):  # `_SCALAR_OK["SS"]`
        raise _Unfit
    return orjson.dumps(inner)


def _ns_cell(inner: Any) -> bytes:
    if type(inner) is not list or not inner or not all(type(x) is str and plain_number(x) for x in inner):
        raise _Unfit
    return b"[" + b",".join(x.encode() for x in inner) + b"]"


# stored type -> the cell of a value's inner part (the value's tag is that type)
_MAKERS: dict[str, Callable[[Any], bytes]] = {
    "S": _s_cell,
    "N": _n_cell,
    "BOOL": _bool_cell,
    "NULL": _null_cell,
    "SS": _ss_cell,
    "NS": _ns_cell,
    "M": lambda inner: orjson.dumps(_plain_map(inner)),
    "L": lambda inner: orjson.dumps(_plain_list(inner)),
}

# How one attribute's cell is made: the tag its values must have (None: any tag, stored
# self-describing), the maker (None: stored whole as typed JSON), its column (family,
# qualifier: one tuple, made once), and whether the family carries the item's expiry.
_Column = tuple[str | None, Callable[[Any], bytes] | None, tuple[str, bytes], bool]


class TableEncoder:
    """`Codec.encode` for a table whose mapping is the default one (no rules): the row key
    from the key attributes, one cell per other attribute, qualifier = its name."""

    def __init__(self, mapping: CompiledMapping):
        """Use `compile`: it says whether this encoder can answer for the mapping."""
        self.mapping = mapping
        self._wanted = wanted_tags(mapping)
        self._key_names = frozenset(mapping.keys)
        row_key = row_key_maker(mapping)
        if row_key is None:
            raise _Unfit
        self._row_key = row_key
        self._marker = (mapping.default_family, EXISTS_MARKER)  # a keys-only item's column
        self._marker_time = mapping.default_family in mapping.ttl_families  # the expiry, else the write time
        self._columns = {name: self._column(name) for name in mapping.types if name not in mapping.keys}

    @classmethod
    def compile(cls, mapping: CompiledMapping) -> TableEncoder | None:
        """The encoder of this mapping, or None when it would answer no item: a mapping with
        rules, a recorded attribute it does not make cells for (binary, a counter, a layout
        of its own), keys of another type than the key schema's (the codec refuses them)."""
        if len(mapping.plans) != 1 or mapping.plans[0].index is not None \
                or mapping.default_family in mapping.counter_families:
            return None
        wanted = wanted_tags(mapping)
        if any(wanted.get(name, k.type) != k.type for name, k in mapping.keys.items()):
            return None
        try:
            encoder = cls(mapping)
        except (UnicodeEncodeError, _Unfit):  # an attribute name that is not text; a key named twice
            return None
        return encoder if None not in encoder._columns.values() else None

    def _column(self, name: str) -> _Column | None:
        m = self.mapping
        stored = m.stored(name)
        family = m.attribute_family.get(name, m.default_family)
        qualifier = name.encode()
        if (name in self._wanted and self._wanted[name] is None) or name in m.layout or stored == COUNTER \
                or family in m.counter_families or len(qualifier) > QUALIFIER_MAX:
            return None
        expires = family in m.ttl_families
        if stored == MIXED:
            return self._wanted.get(name), None, (family, qualifier), expires
        maker = _MAKERS.get(stored)
        return None if maker is None else (stored, maker, (family, qualifier), expires)

    def encode(self, item: Any, write_time_micros: int, now_micros: int, replace: bool) -> RowMutation | None:
        """What `Codec.encode` returns for this item, or None when only it can say."""
        found = self._encoded(item, write_time_micros, now_micros, True)
        if found is None:
            return None
        key, cells = found
        return RowMutation(key, (DeleteRow(), *cells) if replace else tuple(cells))

    def cells(self, item: Any, write_time_micros: int, now_micros: int) -> RowCells | None:
        """`encode`'s row (but for a replacement's DeleteRow) as plain cells, for the loader,
        which writes their protobuf bytes itself; None when only `Codec.encode` can say."""
        found = self._encoded(item, write_time_micros, now_micros, False)
        return None if found is None else RowCells(found[0], tuple(found[1]))

    def _encoded(self, item: Any, write_time_micros: int, now_micros: int,
                 objects: bool) -> tuple[bytes, list[Any]] | None:
        """The row key and the cells, as SetCells (`objects`) or as plain `CellTuple`s: one
        loop for both forms, so they cannot differ."""
        if type(item) is not dict:
            return None
        try:
            key = self._row_key(item)
            # no call for a table without TTL (most): its cells are never past their expiry
            expiry = FAR_FUTURE_MICROS if key is None or self.mapping.ttl is None else self._expiry(item, now_micros)
            write = millis(write_time_micros)
            if key is None or write < 0 or expiry < 0:
                return None
            columns, keys = self._columns, self._key_names
            cells: list[Any] = []
            for name, value in item.items():
                if name in keys:
                    continue
                column = columns.get(name) or self._column(name)  # none of its columns is None (`compile`)
                if column is None or type(value) is not dict or len(value) != 1:
                    return None
                want, maker, place, expires = column
                if maker is None:  # stored self-describing: the typed value as it is (no binary)
                    if want is not None and want not in value:
                        return None
                    _typed(value)
                    data = orjson.dumps(value)
                else:
                    inner = value.get(want)
                    if inner is None:  # another tag (or null, which no tag takes)
                        return None
                    # text (most cells) without the call: what `_s_cell` does
                    data = inner.encode() if maker is _s_cell and type(inner) is str else maker(inner)
                if len(data) > CELL_VALUE_MAX:
                    return None
                time = expiry if expires else write
                cells.append(SetCell(place[0], place[1], data, time) if objects else (place, data, time))
        except (_Unfit, CodecError, UnicodeEncodeError, orjson.JSONEncodeError):
            return None
        if not cells:  # keys only: the marker cell keeps the row visible
            place, time = self._marker, expiry if self._marker_time else write
            cells.append(SetCell(place[0], place[1], EXISTS_MARKER, time) if objects else (place, EXISTS_MARKER, time))
        return key, cells

    def _expiry(self, item: dict[str, Any], now_micros: int) -> int:
        ttl = self.mapping.ttl
        if ttl is None or ttl not in item:
            return FAR_FUTURE_MICROS
        _typed(item[ttl])  # ttl_timestamp reads it as a well-formed value
        found = ttl_timestamp(item, ttl, now_micros)
        if isinstance(found, Expired):
            raise _Unfit
        return found
