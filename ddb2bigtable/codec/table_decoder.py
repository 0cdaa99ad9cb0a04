"""The default mapping's decoder, compiled once per table: a row's cells back to its item
in one loop, each cell's attribute, family and reader looked up by its qualifier (#33).

`decode.RowDecoder` reads any mapping: it groups a row's cells by column, sorts each
column's versions, and asks every plan in turn whether it wrote the cell. For the default
mapping (no rules) every cell is one attribute of the row's one item, its qualifier the
attribute's name, so the newest version of each column is read by the reader its
recorded type names. Anything else (a cell this mapping does not write, a value its type
cannot read, a layout of its own, a salt that does not fit) is `None`: the general
decoder then says what is wrong, so `Codec.decode` answers the same as before;
tests/codec/test_compiled_tables.py compares the two.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .cell_values import decoder_for
from .compiled import CompiledMapping
from .items import AttributeValue, Item
from .mutations import Cell, CodecError
from .row_keys import key_part, salt_prefix, strip_salt

# attribute -> (its family, the reader of its cells, its stored type)
_Reader = tuple[str, Callable[[bytes, str], AttributeValue], str]


class TableDecoder:
    """`RowDecoder.decode` for a table whose mapping is the default one."""

    def __init__(self, mapping: CompiledMapping):
        """Use `compile`: it says whether this decoder can answer for the mapping."""
        self.mapping = mapping
        self._plan = mapping.plans[0]
        self._marker = ("", mapping.default_family)
        self._readers: dict[str, _Reader | None] = {name: self._reader(name) for name in mapping.types}

    @classmethod
    def compile(cls, mapping: CompiledMapping) -> TableDecoder | None:
        """The decoder of this mapping, or None: a mapping with rules or with attributes in
        a layout of their own (members, entries or list elements as cells)."""
        if len(mapping.plans) != 1 or mapping.plans[0].index is not None or mapping.layout:
            return None
        return cls(mapping)

    def _reader(self, name: str) -> _Reader | None:
        m = self.mapping
        if name in m.keys:
            return None
        stored = m.stored(name)
        return m.attribute_family.get(name, m.default_family), decoder_for(stored), stored

    def decode(self, key: bytes, cells: Iterable[Cell]) -> list[Item] | None:
        """What `RowDecoder.decode` returns for this row, or None when only it can say."""
        m = self.mapping
        newest = _newest(cells)
        if not newest:
            return None
        try:
            body = strip_salt(key, m.salt, m.delimiter)[1] if m.salt else key
            found = self._plan.row.match(body)
            if found is None:
                return None
            fields = m.fields.decode(self._plan, found, strip=False)
            item = m.fields.keys_back(self._plan, fields)
            readers = self._readers
            for (family, qualifier), cell in newest.items():
                name = qualifier.decode()
                if (name, family) == self._marker:
                    continue
                reader = readers[name] if name in readers else self._reader(name)
                if reader is None or reader[0] != family:
                    return None
                item[name] = reader[1](cell.value, reader[2])
        except (CodecError, ValueError, TypeError):  # the general path says which, in its own order
            return None
        for name, value in fields.items():
            item.setdefault(name, value)
        if m.salt and m.pk.name in item:
            part = key_part(item[m.pk.name], m.pk.type, m.pk.name)
            if not key.startswith(salt_prefix(part, m.salt, m.delimiter)):
                return None
        return [item]


def _newest(cells: Iterable[Cell]) -> dict[tuple[str, bytes], Any] | None:
    """Each column's newest version (the first of equal times, as a stable sort keeps it),
    columns in the order they come; None for a qualifier that is not bytes."""
    newest: dict[tuple[str, bytes], Any] = {}
    for cell in cells:
        if type(cell.qualifier) is not bytes:
            return None
        column = (cell.family, cell.qualifier)
        seen = newest.get(column)
        if seen is None or cell.timestamp_micros > seen.timestamp_micros:
            newest[column] = cell
    return newest
