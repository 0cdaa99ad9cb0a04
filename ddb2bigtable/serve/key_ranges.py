"""Key conditions as row ranges, where the row key keeps DynamoDB's order.

With the default mapping alone (no rules, a sort key), an item's row key is its partition
part, the delimiter, then its sort key as the last, unescaped part: S and B as their
bytes, N in the codec's ordered decimal form (codec/row_keys.py), so within a partition
byte order is DynamoDB's sort order. A Query's sort-key condition is then one row range,
and a page reads only its Limit of rows instead of the whole partition. Tables with
mapping rules keep a partition in few wide rows and are read whole (query_ops.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..codec.items import AttributeValue
from .tables import ServedTable, after_prefix


@dataclass(frozen=True)
class RowRange:
    start: bytes
    end: bytes | None  # exclusive; None: the end of the table
    start_open: bool = False


def ordered(table: ServedTable) -> bool:
    """Whether the table's rows are one item each, keyed partition + delimiter + sort key."""
    plans = table.codec.plans
    if len(plans) != 1 or len(table.keys) != 2:
        return False
    row = plans[0].row
    return row.fields == table.keys and row.literals[0] == b"" and row.literals[-1] == b""


def sort_range(table: ServedTable, partition: AttributeValue, op: str | None,
               bounds: list[AttributeValue]) -> RowRange:
    """The rows of the partition whose sort key meets `op bounds` (no op: all of them).
    Only for `ordered` tables."""
    ((prefix, end),) = table.partition_ranges(partition) or [(b"", None)]
    if op is None:
        return RowRange(prefix, end)
    plan, m, sk = table.codec.plans[0], table.codec.mapping, table.keys[1]
    low, *rest = [prefix + m.fields.encode(plan, {sk: b}, (sk,))[sk] for b in bounds]
    just_after = low + b"\x00"  # the first key after exactly `low`
    return {
        "EQ": RowRange(low, just_after),
        "GT": RowRange(low, end, start_open=True),
        "GE": RowRange(low, end),
        "LT": RowRange(prefix, low),
        "LE": RowRange(prefix, just_after),
        "BETWEEN": RowRange(low, rest[0] + b"\x00" if rest else just_after),
        "BEGINS_WITH": RowRange(low, after_prefix(low)),
    }[op]


def resumed(found: RowRange, start_key: bytes | None, reverse: bool) -> RowRange:
    """The range left after ExclusiveStartKey's row, in the query's direction."""
    if start_key is None:
        return found
    if reverse:
        return RowRange(found.start, start_key if found.end is None or start_key < found.end else found.end,
                        found.start_open)
    if start_key >= found.start:
        return RowRange(start_key, found.end, start_open=True)
    return found
