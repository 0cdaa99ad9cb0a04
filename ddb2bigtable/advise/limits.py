"""Size checks after the mapping: each sampled item encoded by the load's own codec.

The codec already refuses what Bigtable would (row key over 4 KiB, qualifier over 16 KiB,
cell over 100 MiB); here those items are counted, and rows are summed per row key, since
a mapping that gathers many items in one row (the seeds' video and invoice designs) can
grow a row past the seeds' 100 MB. A cell holds one attribute of one item, and a DynamoDB
item is at most 400 KB, so the seeds' 10 MB per cell cannot be crossed and is not checked.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..codec.codec import Codec, CodecError
from ..codec.items import Item
from ..codec.mutations import Expired, SetCell
from .findings import ROW_KEYS, ROWS, Finding, percent

MB = 1_000_000
ROW_ADVISED = 100 * MB  # seeds, "Rows": keep a row's values below 100 MB
ROW_LIMIT = 256 * MB  # ... and never above 256 MB


@dataclass(frozen=True)
class RowSizes:
    """What encoding the sample gave: bytes and items per row key, and what failed."""

    rows: dict[bytes, tuple[int, int]]  # row key -> (bytes, items)
    failed: int
    first_error: str
    encoded: int


def row_sizes(codec: Codec, items: Iterable[Item], export_time_micros: int) -> RowSizes:
    rows: dict[bytes, tuple[int, int]] = {}
    failed = encoded = 0
    first = ""
    for item in items:
        try:
            written = codec.encode(item, write_time_micros=export_time_micros, now_micros=export_time_micros)
        except CodecError as error:
            failed += 1
            first = first or str(error)
            continue
        if isinstance(written, Expired):
            continue
        encoded += 1
        size = len(written.key) + sum(len(m.family) + len(m.qualifier) + len(m.value)
                                      for m in written.mutations if isinstance(m, SetCell))
        before, count = rows.get(written.key, (0, 0))
        rows[written.key] = (before + size, count + 1)
    return RowSizes(rows, failed, first, encoded)


def _mb(size: float) -> str:
    return f"{size / MB:,.1f} MB"


def size_findings(table_id: str, sizes: RowSizes, fraction: float) -> list[Finding]:
    """`item-not-writable` for what the codec refuses; `row-over-100mb` for a row the sample
    already fills past 100 MB (warning, error past 256 MB), or one that, scaled from the
    sample to the whole export, would (info: it assumes the sample is representative)."""
    found = []
    tried = sizes.failed + sizes.encoded
    if sizes.failed:
        found.append(Finding(
            "item-not-writable", "error", table_id,
            f"{sizes.failed:,} of {tried:,} sampled items ({percent(sizes.failed, tried)}) cannot be written "
            f"with this mapping; the first: {sizes.first_error}",
            ROW_KEYS,
            "change the mapping so each item fits Bigtable's limits (row key at most 4 KiB: a shorter row_key "
            "template), or fix the data; `load` would dead-letter these items"))
    if not sizes.rows:
        return found
    key, (size, count) = max(sizes.rows.items(), key=lambda row: row[1][0])
    shown = key[:40].decode("utf-8", "replace")
    if size >= ROW_ADVISED:
        found.append(Finding(
            "row-over-100mb", "error" if size >= ROW_LIMIT else "warning", table_id,
            f"row `{shown}` already holds {_mb(size)} from {count:,} sampled items",
            ROWS, _ROW_SUGGESTION))
        return found
    merged = [(k, s, c) for k, (s, c) in sizes.rows.items() if c > 1]
    if fraction < 1 and merged:
        key, size, count = max(merged, key=lambda row: row[1])
        projected = size / fraction
        if projected >= ROW_ADVISED:
            found.append(Finding(
                "row-over-100mb", "info", table_id,
                f"row `{key[:40].decode('utf-8', 'replace')}` holds {_mb(size)} from {count:,} sampled items; the "
                f"sample is {100 * fraction:.3g} % of the export, so the whole row may reach "
                f"{_mb(projected)}", ROWS, _ROW_SUGGESTION))
    return found


_ROW_SUGGESTION = ("split the row: keep the entity's own cells in it and move the many items (comments, events) "
                   "to rows keyed by entity and time, or cap them with the family's GC (max_versions or "
                   "max_age), as the seeds' video design keeps the newest comments only")
