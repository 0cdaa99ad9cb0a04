"""UpdateItem `ADD` on counter attributes as Bigtable AddToCell, with no read.

A `counter` attribute lives in an aggregate (int64 Sum) family (spec/families.py), where
Bigtable merges every addition into one cell. So an UpdateItem that only adds integers to
counters, with no condition and nothing to return, is AddToCells (`app_writes.counter_add`)
with no read, and concurrent increments all count, which is what DynamoDB's `ADD`
promises. They are written as a plain write without a read is (item_ops.update_item,
locked_rows.write_unless_locked): one CheckAndMutateRow through the table's transactional
profile, applied only while no transaction holds the row, whose intent, computed from
the counter as read before, would overwrite the addition (docs/transactions.md). Anything
else (a condition, ReturnValues, SET next to the ADD, a counter whose cell carries the
item's expiry, a locked row) takes the read-check-write path.
"""

from __future__ import annotations

import re

from ...codec.app_writes import counter_add
from ...codec.cell_values import COUNTER, counter_number
from ...codec.items import Item
from ...codec.mutations import CodecError, RowMutation
from ..catalog import ServedTable
from ..requests import UpdateItem

_ADDS = re.compile(r"\s*ADD\s+(#?\w+)\s+(:\w+)((?:\s*,\s*#?\w+\s+:\w+)*)\s*", re.IGNORECASE)
_MORE = re.compile(r"\s*,\s*(#?\w+)\s+(:\w+)")


def counter_adds(request: UpdateItem) -> RowMutation | None:
    """The one row mutation of AddToCells this UpdateItem is, or None when it is not only
    additions to counters (then it is a read-check-write)."""
    found = _ADDS.fullmatch(request.expression or "")
    if found is None or request.condition is not None or request.returns != "NONE":
        return None
    table, key = request.table, request.key
    names, values = request.names or {}, request.values or {}
    pairs = [(found.group(1), found.group(2)), *_MORE.findall(found.group(3))]
    amounts: dict[str, int] = {}
    for path, placeholder in pairs:
        name = names.get(path) if path.startswith("#") else path
        value = values.get(placeholder)
        if name is None or name in amounts or not isinstance(value, dict) or set(value) != {"N"}:
            return None
        if table.codec.mapping.stored(name) != COUNTER:
            return None
        try:
            amounts[name] = counter_number(value["N"])
        except CodecError:
            return None
    return _adds(table, key, amounts)


def _adds(table: ServedTable, key: Item, amounts: dict[str, int]) -> RowMutation | None:
    from ..store import now_micros

    rows = []
    for name, amount in amounts.items():
        try:
            row = counter_add(table.codec, key, name, amount, now_micros=now_micros())
        except CodecError:
            return None  # not placeable from the key alone (a TTL-stamped counter, another layout)
        if any(getattr(m, "timestamp_micros", 0) != 0 for m in row.mutations):
            return None  # its cell carries the item's expiry, which only a read knows
        rows.append(row)
    if len({r.key for r in rows}) != 1:
        return None
    return RowMutation(rows[0].key, tuple(m for r in rows for m in r.mutations))
