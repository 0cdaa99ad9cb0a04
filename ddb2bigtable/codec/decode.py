"""Reading a row back: which plan wrote each cell, and the items the cells make.

A row's cells are claimed plan by plan, in the mapping's order (the rules, then the
default mapping), exactly as `encode` picks the first matching rule: a plan claims a
cell when its row-key template parses the row key and its family and qualifier template
fit the cell. A value plan's column is one item, or, when its family keeps versions and
its items differ only in their time (the seeds' comments), one item per version; an
attribute plan's cells with the same qualifier prefix are one item.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..spec.model import KeyAttribute
from .cell_values import EMPTY_MARKER, MIXED, decode_value, element_from_value, member_from_qualifier
from .items import AttributeValue, Item
from .mutations import Cell, CodecError
from .row_keys import KeyTemplate, key_part, salt_prefix, strip_salt
from .rules import TAIL, Fields, RulePlan
from .timestamps import FAR_FUTURE_MICROS, epoch_seconds, time_attribute


class RowDecoder:
    """`Codec.decode` and its helpers. The compiled mapping they read is declared here and
    built by `Codec.__init__` (the encoder reads the same state)."""

    _types: dict[str, str]  # attribute -> stored type (declared, else inferred)
    _default_family: str
    _attribute_family: dict[str, str]
    _delimiter: str
    _salt: int | None
    _pk: KeyAttribute
    _keys: dict[str, KeyAttribute]
    _ttl: str | None
    _ttl_families: frozenset[str]
    _layout: dict[str, tuple[str, str]]
    _member_family: dict[str, str]
    _list_column: dict[tuple[str, bytes], str]
    _fields: Fields
    _plans: list[RulePlan]
    _qualifiers: dict[int | None, KeyTemplate]

    def stored(self, name: str) -> str:
        """How an attribute's values are stored: its declared/inferred type, else `mixed`."""
        return self._types.get(name, MIXED)

    def value_family(self, plan: RulePlan) -> str:
        return plan.family or self._default_family

    def marker_family(self, plan: RulePlan) -> str:
        """Where a keys-only item's marker cell goes (qualifier = empty attribute name)."""
        return plan.family if plan.index is not None and plan.family else self._default_family

    def json_family(self, plan: RulePlan, name: str) -> str:
        if plan.index is not None and plan.family:
            return plan.family
        return self._attribute_family.get(name, self._default_family)

    def decode(self, key: bytes, cells: Iterable[Cell]) -> list[Item]:
        """The items one row holds (one for the default mapping; several for rule designs)."""
        body = strip_salt(key, self._salt, self._delimiter)[1] if self._salt else key
        columns: dict[tuple[str, bytes], list[Cell]] = {}
        for cell in cells:
            columns.setdefault((cell.family, bytes(cell.qualifier)), []).append(cell)
        row_fields: dict[int, dict[str, AttributeValue] | None] = {}
        groups: dict[tuple, dict] = {}
        items: list[Item] = []
        for (family, qualifier), versions in columns.items():
            versions.sort(key=lambda c: -c.timestamp_micros)
            for pos, plan in enumerate(self._plans):
                fields = self._row_fields(pos, plan, body, row_fields)
                if fields is None:
                    continue
                if plan.is_value:
                    found = self._value_claim(plan, family, qualifier)
                    if found is not None:
                        items += self._value_items(plan, {**found, **fields}, family, versions)
                        break
                else:
                    claim = self._attribute_claim(plan, family, qualifier)
                    if claim is not None:
                        found, how, name, tail = claim
                        group = groups.setdefault((pos, repr(sorted(found.items(), key=lambda kv: kv[0]))),
                                                  {"plan": plan, "fields": {**found, **fields}, "parts": []})
                        group["parts"].append((how, name, tail, versions))
                        break
            else:
                raise CodecError(f"cell {family}:{qualifier!r} of row {key!r} is not one this mapping writes")
        items += [self._attribute_item(g["plan"], g["fields"], g["parts"]) for g in groups.values()]
        if self._salt:
            for item in items:
                if self._pk.name in item:
                    part = key_part(item[self._pk.name], self._pk.type, self._pk.name)
                    if not key.startswith(salt_prefix(part, self._salt, self._delimiter)):
                        raise CodecError(f"row {key!r}: the salt prefix does not belong to its partition key")
        return items

    def cell_value(self, name: str, data: bytes) -> AttributeValue:
        """One attribute's cell read with its recorded type. The bytes come from the table,
        which other writers (or a load with other types) may have filled, so a failure
        names the attribute, the form it was read as and why."""
        stored = self.stored(name)
        try:
            return decode_value(data, stored)
        except (CodecError, ValueError) as error:  # ValueError: base64 of a BS cell
            raise CodecError(f"attribute {name}: its cell cannot be read as {stored} (the type recorded for "
                             f"it): {error}") from None

    def _row_fields(self, pos: int, plan: RulePlan, body: bytes,
                    cache: dict[int, dict[str, AttributeValue] | None]) -> dict[str, AttributeValue] | None:
        if pos not in cache:
            found = plan.row.match(body)
            try:
                cache[pos] = None if found is None else self._fields.decode(plan, found, strip=plan.strips)
            except CodecError:
                cache[pos] = None
        return cache[pos]

    def _value_claim(self, plan: RulePlan, family: str, qualifier: bytes) -> dict[str, AttributeValue] | None:
        if family != self.value_family(plan):
            return None
        if plan.qualifier is None:
            return {} if qualifier == (plan.value_attr or "value").encode() else None
        found = plan.qualifier.match(qualifier)
        try:
            return None if found is None else self._fields.decode(plan, found)
        except CodecError:
            return None

    def _value_items(self, plan: RulePlan, fields: dict[str, AttributeValue], family: str,
                     versions: list[Cell]) -> list[Item]:
        items = []
        for cell in versions if plan.versions_are_items else versions[:1]:
            found = dict(fields)
            if plan.value_template is not None:
                parts = plan.value_template.match(cell.value)
                if parts is None:
                    raise CodecError(f"{plan.describe()}: cell value {cell.value!r} does not fit its value template")
                found.update(self._fields.decode(plan, parts, for_value=True))
            item = self._fields.keys_back(plan, found)
            item.update((n, v) for n, v in found.items() if n not in self._keys)
            if plan.value_attr is not None:
                item[plan.value_attr] = self.cell_value(plan.value_attr, cell.value)
            at = plan.time_attribute
            if at and at not in item:
                item[at] = time_attribute(cell.timestamp_micros, self.stored(at))
            carries_expiry = plan.timestamp == "ttl" or (plan.timestamp is None and family in self._ttl_families)
            if self._ttl and self._ttl not in item and carries_expiry and cell.timestamp_micros < FAR_FUTURE_MICROS:
                item[self._ttl] = epoch_seconds(cell.timestamp_micros)
            items.append(item)
        return items

    def _attribute_claim(self, plan: RulePlan, family: str, qualifier: bytes):
        found = self._qualifiers[plan.index].match(qualifier)
        if found is None:
            return None
        tail = found.pop(TAIL)
        try:
            fields = self._fields.decode(plan, found)
            if family in self._member_family:
                return fields, "member", self._member_family[family], tail
            name = tail.decode()
        except (CodecError, UnicodeDecodeError):
            return None
        if (family, tail) in self._list_column:
            return fields, "list", name, tail
        if name == "" and family == self.marker_family(plan):
            return fields, "exists", name, tail
        if name not in self._keys and name not in self._layout and self.json_family(plan, name) == family:
            return fields, "json", name, tail
        return None

    def _attribute_item(self, plan: RulePlan, fields: dict[str, AttributeValue], parts: list) -> Item:
        item = self._fields.keys_back(plan, fields)
        members: dict[str, list[tuple[bytes, Cell]]] = {}
        for how, name, tail, versions in parts:
            if how == "exists":
                continue
            if how == "json":
                item[name] = self.cell_value(name, versions[0].value)
            elif how == "list":
                ordered = sorted(versions, key=lambda c: c.timestamp_micros)
                empty = len(ordered) == 1 and ordered[0].value == EMPTY_MARKER
                item[name] = {"L": [] if empty else [element_from_value(c.value) for c in ordered]}
            else:
                members.setdefault(name, []).append((tail, versions[0]))
        for name, found in members.items():
            tag = self.stored(name)
            found.sort(key=lambda pair: pair[0])
            if tag == "M":
                item[name] = {"M": {t.decode(): element_from_value(c.value) for t, c in found
                                    if not (t == b"" and c.value == EMPTY_MARKER)}}
            else:
                item[name] = {tag: [member_from_qualifier(tag, t) for t, _ in found]}
        for name, value in fields.items():
            item.setdefault(name, value)
        return item
