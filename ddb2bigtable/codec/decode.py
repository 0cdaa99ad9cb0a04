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

from ..spec.families import RESERVED_FAMILIES
from .cell_values import EMPTY_MARKER, decode_value, element_from_value, member_from_qualifier
from .compiled import CompiledMapping
from .items import AttributeValue, Item
from .mutations import Cell, CodecError
from .row_keys import key_part, salt_prefix, strip_salt
from .rules import TAIL, RulePlan
from .table_decoder import TableDecoder
from .timestamps import FAR_FUTURE_MICROS, epoch_seconds, time_attribute


class RowDecoder:
    """A row's cells back into the items they hold, by the compiled mapping that wrote them."""

    def __init__(self, mapping: CompiledMapping):
        self.mapping = mapping
        self._fast = TableDecoder.compile(mapping)

    def decode(self, key: bytes, cells: Iterable[Cell]) -> list[Item]:
        """The items one row holds (one for the default mapping; several for rule designs).
        The default mapping's rows are read by the table's compiled decoder
        (`table_decoder`) when it can answer, the same items faster. Cells of serve's
        transaction family (locks, intents, ClientRequestToken records) and of its stream
        family (a change's record) are no item's."""
        cells = [c for c in cells if c.family not in RESERVED_FAMILIES]
        if not cells:  # a row of reserved cells alone (a token's record) holds no item, whatever its key
            return []
        if self._fast is None:
            return self._claimed(key, cells)
        items = self._fast.decode(key, cells)
        return items if items is not None else self._claimed(key, cells)

    def _claimed(self, key: bytes, cells: Iterable[Cell]) -> list[Item]:
        """Every cell claimed by the plan that wrote it, then the items the claims make."""
        body = strip_salt(key, self.mapping.salt, self.mapping.delimiter)[1] if self.mapping.salt else key
        columns: dict[tuple[str, bytes], list[Cell]] = {}
        for cell in cells:
            columns.setdefault((cell.family, bytes(cell.qualifier)), []).append(cell)
        row_fields: dict[int, dict[str, AttributeValue] | None] = {}
        groups: dict[tuple, dict] = {}
        items: list[Item] = []
        for (family, qualifier), versions in columns.items():
            versions.sort(key=lambda c: -c.timestamp_micros)
            for pos, plan in enumerate(self.mapping.plans):
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
                        _group(groups, pos, plan, found, fields)["parts"].append((how, name, tail, versions))
                        break
            else:
                raise CodecError(f"cell {family}:{qualifier!r} of row {key!r} is not one this mapping writes")
        items += [self._attribute_item(g["plan"], g["fields"], g["parts"]) for g in groups.values()]
        if self.mapping.salt:
            for item in items:
                if self.mapping.pk.name in item:
                    part = key_part(item[self.mapping.pk.name], self.mapping.pk.type, self.mapping.pk.name)
                    if not key.startswith(salt_prefix(part, self.mapping.salt, self.mapping.delimiter)):
                        raise CodecError(f"row {key!r}: the salt prefix does not belong to its partition key")
        return items

    def cell_value(self, name: str, data: bytes) -> AttributeValue:
        """One attribute's cell read with its recorded type. The bytes come from the table,
        which other writers (or a load with other types) may have filled, so a failure
        names the attribute, the form it was read as and why."""
        stored = self.mapping.stored(name)
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
                cache[pos] = None if found is None else self.mapping.fields.decode(plan, found, strip=plan.strips)
            except CodecError:
                cache[pos] = None
        return cache[pos]

    def _value_claim(self, plan: RulePlan, family: str, qualifier: bytes) -> dict[str, AttributeValue] | None:
        if family != self.mapping.value_family(plan):
            return None
        if plan.qualifier is None:
            return {} if qualifier == (plan.value_attr or "value").encode() else None
        found = plan.qualifier.match(qualifier)
        try:
            return None if found is None else self.mapping.fields.decode(plan, found)
        except CodecError:
            return None

    def _value_items(self, plan: RulePlan, fields: dict[str, AttributeValue], family: str,
                     versions: list[Cell]) -> list[Item]:
        m = self.mapping
        items = []
        for cell in versions if plan.versions_are_items else versions[:1]:
            found = dict(fields)
            if plan.value_template is not None:
                parts = plan.value_template.match(cell.value)
                if parts is None:
                    raise CodecError(f"{plan.describe()}: cell value {cell.value!r} does not fit its value template")
                found.update(self.mapping.fields.decode(plan, parts, for_value=True))
            item = self.mapping.fields.keys_back(plan, found)
            item.update((n, v) for n, v in found.items() if n not in self.mapping.keys)
            if plan.value_attr is not None:
                item[plan.value_attr] = self.cell_value(plan.value_attr, cell.value)
            at = plan.time_attribute
            if at and at not in item:
                item[at] = time_attribute(cell.timestamp_micros, self.mapping.stored(at))
            carries_expiry = plan.timestamp == "ttl" or (plan.timestamp is None and family in m.ttl_families)
            if m.ttl and m.ttl not in item and carries_expiry and cell.timestamp_micros < FAR_FUTURE_MICROS:
                item[m.ttl] = epoch_seconds(cell.timestamp_micros)
            items.append(item)
        return items

    def _attribute_claim(self, plan: RulePlan, family: str, qualifier: bytes):
        found = self.mapping.qualifiers[plan.index].match(qualifier)
        if found is None:
            return None
        tail = found.pop(TAIL)
        try:
            fields = self.mapping.fields.decode(plan, found)
            if family in self.mapping.member_family:
                return fields, "member", self.mapping.member_family[family], tail
            name = tail.decode()
        except (CodecError, UnicodeDecodeError):
            return None
        if (family, tail) in self.mapping.list_column:
            return fields, "list", name, tail
        if name == "" and family == self.mapping.marker_family(plan):
            return fields, "exists", name, tail
        m = self.mapping
        if name not in m.keys and name not in m.layout and m.json_family(plan, name) == family:
            return fields, "json", name, tail
        return None

    def _attribute_item(self, plan: RulePlan, fields: dict[str, AttributeValue], parts: list) -> Item:
        item = self.mapping.fields.keys_back(plan, fields)
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
            tag = self.mapping.stored(name)
            found.sort(key=lambda pair: pair[0])
            if tag == "M":
                item[name] = {"M": {t.decode(): element_from_value(c.value) for t, c in found
                                    if not (t == b"" and c.value == EMPTY_MARKER)}}
            else:
                item[name] = {tag: [member_from_qualifier(tag, t) for t, _ in found]}
        for name, value in fields.items():
            item.setdefault(name, value)
        return item


def _group(groups: dict[tuple, dict], pos: int, plan: RulePlan, found: dict[str, AttributeValue],
           fields: dict[str, AttributeValue]) -> dict:
    """The item an attribute plan's cell belongs to: one per plan and qualifier fields (none
    for the default mapping, whose every cell is one item's), made on its first cell."""
    key = (pos, repr(sorted(found.items(), key=lambda kv: kv[0])) if found else "[]")
    group = groups.get(key)
    if group is None:
        group = groups[key] = {"plan": plan, "fields": {**found, **fields}, "parts": []}
    return group
