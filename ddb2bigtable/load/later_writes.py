"""What `verify` tells of an item the export does not explain: written after the export, or not.

In a live migration the table keeps changing after its export: `serve` takes the
application's writes, `replicate` applies the stream from the export's time. An item the
table holds beyond the export, or one that differs from it, is then expected, not a fault
of the load; one that no later write explains (a row left from another export, a stray
write dated before the export) is. The judge is the row's cells: the load writes every
cell whose time is the write time at the export's time (the manifest's `exportTime`; an
incremental's own `WriteTimestampMicros`), serve at the moment of the write, replicate at
the stream record's time, so a write-time cell later than `exportTime` is a later write.

Not every cell carries its write time: a TTL family's cells carry the item's expiry, a
rule's `timestamp:` an attribute's time, counters a fixed time (codec/timestamps.py). On a
table with a stream, serve's write adds its change's record to the same row mutation, a
cell of the reserved stream family at Bigtable's commit time (serve/streams/records.py,
SERVER_TIME): that cell dates the write even where every item cell carries the expiry (a
TTL table's, issue #53). A row with no cell of a dated family cannot be dated at all; such
a row beyond the export is not explained (docs/data-load.md says so and points to
`cutover check`, which compares the live table itself).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..codec.codec import Codec
from ..codec.rules import NOT_ATTRIBUTE_TIMES
from ..spec.families import STREAM_FAMILY, family_names
from .chain import iso


def dated_families(codec: Codec) -> frozenset[str]:
    """The table's families whose cells are stamped with their write time: not a TTL
    family, not a counter family, and no rule writes there at another time; and serve's
    stream family, whose records a write adds at its commit time. A rule with an
    attribute's or the TTL's time and no family of its own may write any attribute family,
    so those are left out too."""
    mapping = codec.mapping
    other_time = [rule for rule in codec.table.mapping.rules if rule.timestamp not in NOT_ATTRIBUTE_TIMES
                  or rule.timestamp == "ttl"]
    undated = {rule.family or mapping.default_family for rule in other_time}
    if any(rule.family is None for rule in other_time):
        undated |= set(mapping.attribute_family.values()) | {family for _, family in mapping.layout.values()}
    return frozenset(name for name in family_names(codec.table)
                     if name not in mapping.ttl_families and name not in mapping.counter_families
                     and name not in undated) | {STREAM_FAMILY}  # serve's records: at the write's commit time


def written_micros(cells: Iterable[Any], dated: frozenset[str]) -> int | None:
    """When a row was last written, from its cells (Bigtable's or the codec's, anything with
    `family` and `timestamp_micros`): the newest cell of a dated family, None without one."""
    times = [cell.timestamp_micros for cell in cells if cell.family in dated]
    return max(times) if times else None


def after_export(written: int | None, export_time_micros: int | None) -> bool:
    """Whether a row written at `written` was written after the export: the load writes at
    the export's time to the millisecond, so only a later millisecond is a later write."""
    return written is not None and export_time_micros is not None and written // 1000 > export_time_micros // 1000


def why_not_after(written: int | None, export_time_micros: int, export_time: str) -> str:
    """Why an item beyond the export is not explained by a later write, as reports say it."""
    if written is None:
        return ("its cells carry no write time (a TTL family's carry the expiry, a rule's timestamp an "
                "attribute's time), so whether it was written after the export cannot be told; on a live table "
                "`cutover check` compares with DynamoDB itself")
    if written // 1000 == export_time_micros // 1000:
        return (f"written at the export's very time ({export_time}), as only a load writes (replicate stamps "
                f"its writes at least a millisecond after it): loaded from another export of the same time?")
    return f"written {iso(written)}, not after the export's {export_time}: loaded from another export?"
