"""The item codec: one DynamoDB item <-> the cells of one Bigtable row, and back.

The local writer, the Beam pipeline and `verify` share this one transform: pure functions
and frozen values, no I/O, no Bigtable client. Its parts, each in its own module:

- `row_keys`: row keys (escaping, ordered numbers, salt) and `{attribute}` templates;
- `cell_values`: one value <-> cell bytes, by type (`value_forms`: plain and typed JSON);
  `type_inference`: those types;
- `timestamps`: write time, attribute times, TTL expiry, the far-future timestamp;
- `rules`: mapping rules made executable (which row, family, qualifier, time);
- `decode`: a row's cells back into items; `lossy`: what cannot come back.

TTL: an item whose TTL attribute (N, epoch seconds) is at or before `now` is `Expired` and
not written. Otherwise the cells of the families `spec/families.py` gives the TTL rule
(max_age 1s) carry its expiry as timestamp, or the far future without a valid TTL; every
other cell carries the write time (the export time: reruns write the same versions) or the
time a rule names. The TTL attribute itself is stored like any attribute, so it decodes.

Counters in a counter family (an aggregate family, int64 Sum) are written by
`cell_values.counter_write`: the cell deleted and the value added in one row mutation, at
one fixed time (0; the expiry in a TTL family), so reruns and replays set the number, and
an application's AddToCell through any app profile adds to that same cell.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..spec.model import TableSpec
from .cell_values import (
    COUNTER,
    COUNTER_TIME_MICROS,
    EXISTS_MARKER,
    MIXED,
    counter_number,
    counter_write,
    encode_value,
    layout_parts,
)
from .compiled import compile_mapping, wanted_tags
from .decode import RowDecoder
from .items import Item
from .limits import check_cell, check_row_key
from .lossy import layout_notes, lossy_sentences
from .mutations import (
    AddToCell,
    Cell,
    CodecError,
    DeleteCells,
    DeleteRow,
    Expired,
    Mutation,
    RowCells,
    RowMutation,
    SetCell,
)
from .row_keys import key_part, salt_prefix
from .rules import TAIL, RulePlan
from .table_encoder import TableEncoder
from .timestamps import FAR_FUTURE_MICROS, attribute_micros, millis, ttl_timestamp
from .type_inference import AttributeTypes
from .value_forms import check_value

__all__ = ["Codec", "CodecError", "Expired", "FAR_FUTURE_MICROS"]

_Times = tuple[int, int]  # (write time, expiry or far future), whole milliseconds


class Codec:
    """Encodes items into row mutations and decodes rows back, both by one compiled mapping;
    the mapping questions others ask (`plans`, `layout`, `stored`, ...) are answered by it."""

    def __init__(self, table: TableSpec, types: AttributeTypes):
        self.mapping = compile_mapping(table, types)
        self._decoder = RowDecoder(self.mapping)
        self.decode = self._decoder.decode
        self.cell_value = self._decoder.cell_value
        self.stored = self.mapping.stored
        self.value_family = self.mapping.value_family
        self.marker_family = self.mapping.marker_family
        self.json_family = self.mapping.json_family
        self.value_qualifier_text = self.mapping.value_qualifier_text
        self._wanted = wanted_tags(self.mapping)
        self._fast = TableEncoder.compile(self.mapping)
        self.lossy: tuple[str, ...] = tuple(lossy_sentences(self.mapping))
        self.notes: tuple[str, ...] = tuple(layout_notes(self.mapping))

    @property
    def table(self) -> TableSpec:
        return self.mapping.table

    @property
    def plans(self) -> tuple[RulePlan, ...]:
        return self.mapping.plans

    @property
    def ttl_families(self) -> frozenset[str]:
        return self.mapping.ttl_families

    @property
    def layout(self) -> dict[str, tuple[str, str]]:
        """Attributes stored in a layout of their own: name -> (`family`|`timestamps`, family)."""
        return self.mapping.layout

    @property
    def types(self) -> dict[str, str]:
        """Every attribute's stored type: declared, else inferred."""
        return self.mapping.types

    @property
    def typed_json(self) -> frozenset[str]:
        """Attributes stored self-describing (typed DynamoDB JSON), not in their own type."""
        return self.mapping.typed_json

    # --- encode ---------------------------------------------------------------------------

    def encode(self, item: Item, *, write_time_micros: int, now_micros: int,
               replace: bool = False, checked: bool = False) -> RowMutation | Expired:
        """The item's row mutation, or `Expired` when its TTL has passed. `replace` (incremental
        updates) first deletes what the previous version may have written: the whole row for
        the default mapping, the item's columns for rules; an expired replacement carries that
        delete in `Expired.delete`. `checked` says every value is already known to be a
        well-formed typed value (the export reader checks each one as it reads the line), so
        only its type is compared with the mapping's: walking the value again was a third
        of the encoding time. Items of the default mapping are encoded by the table's
        compiled encoder (`table_encoder`) when it can answer, the same rows faster."""
        if self._fast is not None:
            row = self._fast.encode(item, write_time_micros, now_micros, replace)
            if row is not None:
                return row
        self._check(item, checked)
        expiry = FAR_FUTURE_MICROS
        if self.mapping.ttl:
            found = ttl_timestamp(item, self.mapping.ttl, now_micros)
            if isinstance(found, Expired):
                return Expired(found.expiry_micros, self.delete(item)) if replace else found
            expiry = found
        plan = self.plan_for(item)
        key = self._row_key(plan, item)
        times = (millis(write_time_micros), expiry)
        writes = self._value_cells(plan, item, times) if plan.is_value else self._attribute_cells(plan, item, times)
        sets = [w for w in writes if isinstance(w, SetCell)]  # counters carry their own delete
        for cell in sets:
            check_cell(cell)
        deletes: list[Mutation] = []
        if replace:
            if plan.index is None:
                deletes.append(DeleteRow())
            elif not (plan.is_value and plan.versions_are_items):
                deletes += [DeleteCells(f, q) for f, q in dict.fromkeys((c.family, c.qualifier) for c in sets)]
        return RowMutation(key, (*deletes, *writes))

    def encode_parsed(self, item: object, *, write_time_micros: int, now_micros: int) -> RowMutation | None:
        """A full export's item as parsed from its DynamoDB JSON line, not yet checked (binary
        still base64 text): its row mutation when the compiled encoder can give it, checking
        as it encodes; this is what `encode` gives for the item the export reader's check
        returns. None otherwise (bad JSON, binary, expired, rules, ...): the caller then
        checks the item and calls `encode`, which say what is wrong or do the rest."""
        if self._fast is None:
            return None
        return self._fast.encode(item, write_time_micros, now_micros, False)

    def parsed_cells(self, item: object, *, write_time_micros: int, now_micros: int) -> RowCells | None:
        """`encode_parsed`'s row as the compiled encoder makes it, its cells plain tuples: for
        the loader, which writes their protobuf bytes without a `SetCell` per cell."""
        if self._fast is None:
            return None
        return self._fast.cells(item, write_time_micros, now_micros)

    @property
    def compiled(self) -> TableEncoder | None:
        """The table's compiled encoder, for a loop that calls its `cells` itself (the loader's)."""
        return self._fast

    def delete(self, keys: Item) -> RowMutation:
        """Incremental delete. `keys` may also be the item's old image, which a rule that keeps
        several items in one column or row needs to find its cells."""
        self._check(keys)
        plan = self.plan_for(keys)
        key = self._row_key(plan, keys)
        if plan.index is None:
            return RowMutation(key, (DeleteRow(),))
        if plan.is_value:
            family, qualifier = self.mapping.value_family(plan), self._value_qualifier(plan, keys)
            if not plan.versions_are_items:
                return RowMutation(key, (DeleteCells(family, qualifier),))
            at = plan.time_attribute
            if at not in keys:
                raise CodecError(f"{plan.describe()} keeps several items as versions of {family}:"
                                 f"{qualifier.decode(errors='replace')}; deleting one needs its {at} "
                                 f"(pass the item's old image)")
            ts = attribute_micros(keys[at], at)
            return RowMutation(key, (DeleteCells(family, qualifier, ts, ts + 1000),))
        if any(name not in self.mapping.keys for name in keys):
            columns = dict.fromkeys((f, q) for f, q, _, _ in self._attribute_parts(plan, keys))
            return RowMutation(key, tuple(DeleteCells(f, q) for f, q in columns))
        if plan.qualifier is None and all(k in plan.row.fields for k in self.mapping.keys):
            return RowMutation(key, (DeleteRow(),))
        raise CodecError(f"{plan.describe()} keeps several items in one row; deleting one needs its "
                         f"old image (its attributes)")

    def row_key(self, item_or_keys: Item) -> bytes:
        for name in self.mapping.keys:
            if name not in item_or_keys:
                raise CodecError(f"key attribute {name!r} is missing")
        return self._row_key(self.plan_for(item_or_keys), item_or_keys)

    def expected(self, item: Item, *, now_micros: int) -> Item | None:
        """What `decode` gives back for this item (None when expired): the item itself,
        except what `lossy` names. `verify` compares rows with this."""
        written = self.encode(item, write_time_micros=now_micros, now_micros=now_micros)
        if isinstance(written, Expired):
            return None
        cells = [Cell(m.family, m.qualifier, m.value, m.timestamp_micros)
                 for m in written.mutations if isinstance(m, SetCell | AddToCell)]
        (back,) = self.decode(written.key, cells)
        return back

    def _check(self, item: Item, checked: bool = False) -> None:
        if not isinstance(item, dict):
            raise CodecError(f"an item is a dict of typed values, not {type(item).__name__}")
        for name in self.mapping.keys:
            if name not in item:
                raise CodecError(f"key attribute {name!r} is missing")
        wanted = self._wanted
        for name, value in item.items():
            tag = next(iter(value)) if checked else check_value(value, name)
            if wanted.get(name, tag) == tag:  # the common case: one lookup per attribute
                continue
            declared, stored = self.mapping.declared.get(name), self.mapping.stored(name)
            if declared not in (None, MIXED) and tag != ("N" if declared == COUNTER else declared):
                raise CodecError(f"{name} is {tag} in this item, but the spec declares it {declared}")
            if stored != MIXED and tag != ("N" if stored == COUNTER else stored):
                raise CodecError(f"{name} is {tag} in this item, but the table's cells of {name} are {stored} (the "
                                 f"type recorded with the table, or inferred over this export): keep one type per "
                                 f"attribute, or reload the table with the new one")

    def plan_for(self, item: Item) -> RulePlan:
        """The mapping's plan that takes this item: the first rule it matches, else the default."""
        if len(self.mapping.plans) == 1:  # no rules: the default mapping takes every item
            return self.mapping.plans[0]
        return next(p for p in self.mapping.plans if p.index is None or p.matches(item))

    def _row_key(self, plan: RulePlan, item: Item) -> bytes:
        key = plan.row.render(self.mapping.fields.encode(plan, item, plan.row.fields, strip=plan.strips))
        if self.mapping.salt:
            part = key_part(item[self.mapping.pk.name], self.mapping.pk.type, self.mapping.pk.name)
            key = salt_prefix(part, self.mapping.salt, self.mapping.delimiter) + key
        check_row_key(key, plan.describe())
        return key

    def _time(self, plan: RulePlan, family: str, item: Item, times: _Times) -> int:
        write, expiry = times
        if family in self.mapping.counter_families:  # one cell that every AddToCell reaches
            return expiry if family in self.mapping.ttl_families else COUNTER_TIME_MICROS
        if plan.timestamp == "write_time":
            return write
        if plan.timestamp == "ttl":
            return expiry
        if plan.timestamp is None:
            return expiry if family in self.mapping.ttl_families else write
        value = item.get(plan.timestamp)
        if value is None:
            raise CodecError(f"{plan.describe()} takes its cell time from {plan.timestamp}, "
                             f"which this item does not have")
        return attribute_micros(value, plan.timestamp)

    def _value_qualifier(self, plan: RulePlan, item: Item) -> bytes:
        if plan.qualifier is None:
            return (plan.value_attr or "value").encode()
        return plan.qualifier.render(self.mapping.fields.encode(plan, item, plan.qualifier.fields))

    def _value_cells(self, plan: RulePlan, item: Item, times: _Times) -> list[Mutation]:
        family = self.mapping.value_family(plan)
        if plan.value_attr is not None:
            value = item.get(plan.value_attr)
            if value is None:
                raise CodecError(f"{plan.describe()} stores {plan.value_attr}, which this item does not have")
            stored = self.mapping.stored(plan.value_attr)
            if stored == COUNTER and family in self.mapping.counter_families:
                return list(counter_write(family, self._value_qualifier(plan, item), counter_number(value["N"]),
                                          self._time(plan, family, item, times), replace=True))
            data = encode_value(value, stored)
        else:
            template = plan.value_template
            assert template is not None  # a value plan has a value attribute or a value template
            data = template.render(self.mapping.fields.encode(plan, item, template.fields, for_value=True))
        return [SetCell(family, self._value_qualifier(plan, item), data, self._time(plan, family, item, times))]

    def _attribute_parts(self, plan: RulePlan, item: Item) -> Iterator[tuple[str, bytes, bytes, int]]:
        """(family, qualifier, value, milliseconds before the family's time) per cell."""
        template = self.mapping.qualifiers[plan.index]
        prefix = self.mapping.fields.encode(plan, item, template.fields)

        if template.fields == (TAIL,) and template.literals == (b"", b""):
            def qualifier(tail: bytes) -> bytes:  # no rule qualifier: the name or member itself
                return tail
        else:
            def qualifier(tail: bytes) -> bytes:
                return template.render({**prefix, TAIL: tail})

        m, written = self.mapping, False
        for name, value in item.items():
            if name in m.keys:
                continue
            written = True
            how, family = m.layout.get(name, ("json", ""))
            if how == "json":
                yield m.json_family(plan, name), qualifier(name.encode()), encode_value(value, m.stored(name)), 0
            else:
                yield from layout_parts(how, family, name, value, qualifier)
        if not written:  # a row exists only through its cells: keep a keys-only item visible
            yield self.mapping.marker_family(plan), qualifier(b""), EXISTS_MARKER, 0

    def _attribute_cells(self, plan: RulePlan, item: Item, times: _Times) -> list[Mutation]:
        cells: list[Mutation] = []
        base: dict[str, int] = {}
        for family, qualifier, data, before in self._attribute_parts(plan, item):
            if family not in base:
                base[family] = self._time(plan, family, item, times)
            ts = base[family] - before * 1000
            if ts < 0:
                raise CodecError("a list's elements would get timestamps before 1970")
            if family in self.mapping.counter_families:  # only counters go there (mapping_checks)
                if len(data) != 8:
                    raise CodecError(f"family {family} holds counters (an aggregate family); "
                                     f"{qualifier.decode(errors='replace')} is not one")
                cells += counter_write(family, qualifier, int.from_bytes(data, "big", signed=True), ts, replace=True)
            else:
                cells.append(SetCell(family, qualifier, data, ts))
        return cells

