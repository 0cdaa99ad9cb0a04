"""Key conditions and parallel-scan segments as row ranges.

With the default mapping alone (no rules, a sort key), an item's row key is its partition
part, the delimiter, then its sort key as the last, unescaped part: S and B as their
bytes, N in the codec's ordered decimal form (codec/row_keys.py), so within a partition
byte order is DynamoDB's sort order. A Query's sort-key condition is then one row range,
and a page reads only its Limit of rows instead of the whole partition. Tables with
mapping rules keep a partition in few wide rows and are read whole (query_ops.py).

A Scan's Segment of TotalSegments is one contiguous row range (`segment_range`), so a
segment reads only its own rows. The ranges are cut at bounds that depend only on the
table's mapping and TotalSegments, never on its data, so every worker, every segment
and every page cuts the same ranges whatever is written meanwhile: they cover every
row key once, and an item is in exactly one segment on every page. (SampleRowKeys would
follow the data but moves: the emulator's picks random rows on each call, and Bigtable's
follows tablet splits, so two segments could overlap or miss rows.) With a salted row key
(`mapping.salt.buckets`, a CRC-32 of the partition key) the segments take equal shares of
the buckets, so they are even; otherwise the key space is cut evenly from its first
printable byte, and keys that share a leading text fall in few segments (still exactly once).
"""

from __future__ import annotations

from dataclasses import dataclass

from ...codec.items import AttributeValue
from ...codec.row_keys import bucket_prefix
from ..catalog import ServedTable, after_prefix

PRINTABLE = (0x20, 0x7F)  # the first bytes of readable row keys (codec/row_keys.py), where segments cut


@dataclass(frozen=True)
class RowRange:
    start: bytes
    end: bytes | None  # exclusive; None: the end of the table
    start_open: bool = False

    def holds(self, key: bytes) -> bool:
        return (key > self.start if self.start_open else key >= self.start) and (self.end is None or key < self.end)


def segment_range(salt: int | None, delimiter: str, segment: int, total: int) -> RowRange:
    """Segment `segment` of `total` of a table whose row keys carry `salt` buckets (None:
    unsalted): the rows from its bound to the next one's (the module doc)."""
    return RowRange(_bound(salt, delimiter, segment, total) or b"", _bound(salt, delimiter, segment + 1, total))


def _bound(salt: int | None, delimiter: str, segment: int, total: int) -> bytes | None:
    """Where segment `segment` starts: at the fraction segment/total of the buckets, and
    within a bucket of the printable bytes, as 8 bytes of fraction without trailing zeros
    (a key that is a prefix of a bound sorts before it). Strictly increasing in `segment`."""
    if segment == 0:
        return b""
    if segment == total:
        return None
    bucket, share = divmod(segment * (salt or 1), total)
    prefix = bucket_prefix(bucket, salt, delimiter) if salt else b""
    if share == 0:
        return prefix
    low, high = PRINTABLE
    point = (low << 56) + share * ((high - low) << 56) // total
    return prefix + point.to_bytes(8, "big").rstrip(b"\0")


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
