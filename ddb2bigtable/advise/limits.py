"""Size checks after the mapping: each sampled item encoded by the load's own codec.

The codec already refuses what Bigtable would (row key over 4 KiB, qualifier over 16 KiB,
cell over 100 MiB); here those items are counted, and rows are summed per row key, since
a mapping that gathers many items in one row (the seeds' video and invoice designs) can
grow a row past the seeds' 100 MB. A cell holds one attribute of one item, and a DynamoDB
item is at most 400 KB, so the seeds' 10 MB per cell cannot be crossed and is not checked.

The same pass counts what the seeds' "Columns" and "Column families" sections weigh: the
cells a row keeps (after its families' GC: versions past max_versions do not count) and
the bytes each family's name adds to the cells written to it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..codec.codec import Codec, CodecError
from ..codec.items import Item
from ..codec.mutations import AddToCell, Expired, SetCell
from ..spec.families import family_gc, family_names
from ..spec.model import TableSpec
from .findings import COLUMNS, FAMILIES, ROW_KEYS, ROWS, Finding, Severity, percent

MB = 1_000_000
LONG_FAMILY = 16  # characters: longer than Google's own examples (`stats_summary`, `UserComments`)
ROW_ADVISED = 100 * MB  # seeds, "Rows": keep a row's values below 100 MB
ROW_LIMIT = 256 * MB  # ... and never above 256 MB


@dataclass(frozen=True)
class RowSizes:
    """What encoding the sample gave: bytes and items per row key, and what failed."""

    rows: dict[bytes, tuple[int, int]]  # row key -> (bytes, items)
    failed: int
    first_error: str
    encoded: int
    # row key -> (cells its families' GC keeps, columns); cells of one column past the
    # family's max_versions are not counted (GC drops them)
    cells: dict[bytes, tuple[int, int]] = field(default_factory=dict)
    # family -> (cells, bytes written to it), for the families named longer than LONG_FAMILY
    families: dict[str, tuple[int, int]] = field(default_factory=dict)


def row_sizes(codec: Codec, items: Iterable[Item], export_time_micros: int) -> RowSizes:
    """Sizes, cells and family bytes of the rows the sample makes. Columns are only kept
    per row when rules can gather several items in one row; under the default mapping a
    row is one item and its count is final at once (memory stays the sample's)."""
    rows: dict[bytes, tuple[int, int]] = {}
    cells: dict[bytes, tuple[int, int]] = {}
    gathered: dict[bytes, Counter[tuple[str, bytes]]] = {}
    families: dict[str, tuple[int, int]] = {}
    keeps = {f.name: f.rule.max_versions for f in family_gc(codec.table)}
    long_names = {name for name in family_names(codec.table) if len(name) > LONG_FAMILY}
    merging = len(codec.plans) > 1
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
        sets = [m for m in written.mutations if isinstance(m, SetCell | AddToCell)]
        columns = [(m.family, m.qualifier) for m in sets]
        size = len(written.key) + sum(len(m.family) + len(m.qualifier) + len(m.value) for m in sets)
        for m in sets:
            if m.family in long_names:
                count, data = families.get(m.family, (0, 0))
                families[m.family] = (count + 1, data + len(m.family) + len(m.qualifier) + len(m.value))
        before, count = rows.get(written.key, (0, 0))
        rows[written.key] = (before + size, count + 1)
        if merging:
            gathered.setdefault(written.key, Counter()).update(columns)
        else:
            distinct = len(set(columns))
            cells[written.key] = (distinct if distinct == len(columns) else _kept(Counter(columns), keeps), distinct)
    for key, counted in gathered.items():
        cells[key] = (_kept(counted, keeps), len(counted))
    return RowSizes(rows, failed, first, encoded, cells, families)


def _kept(columns: Counter[tuple[str, bytes]], keeps: dict[str, int | None]) -> int:
    return sum(min(n, keeps.get(family) or n) for (family, _), n in columns.items())


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
                   "max_age), as Google's video example keeps the newest comments only")


MANY_CELLS = 1_000  # the seeds give no figure; a row read then returns as many cells as 1,000 one-cell rows


def many_cells(table: TableSpec, sizes: RowSizes, fraction: float) -> list[Finding]:
    """`many-columns`: a sampled row whose families keep 1,000 cells or more (warning), or
    a row gathered from several items that would, scaled to the whole export (info)."""
    if not sizes.cells:
        return []
    key, (kept, columns) = max(sizes.cells.items(), key=lambda row: row[1][0])
    items = sizes.rows[key][1]
    shown = key[:40].decode("utf-8", "replace")
    if kept >= MANY_CELLS:
        evidence = (f"row `{shown}` keeps {kept:,} cells in {columns:,} columns from {items:,} sampled "
                    f"item{'s' if items > 1 else ''}")
        severity: Severity = "warning"
    else:
        merged = [(k, c) for k, c in sizes.cells.items() if sizes.rows[k][1] > 1]
        if fraction >= 1 or not merged:
            return []
        key, (kept, columns) = max(merged, key=lambda row: row[1][0])
        if kept / fraction < MANY_CELLS:
            return []
        evidence = (f"row `{key[:40].decode('utf-8', 'replace')}` keeps {kept:,} cells from "
                    f"{sizes.rows[key][1]:,} sampled items; the sample is {100 * fraction:.3g} % of the export, "
                    f"so the whole row may keep {kept / fraction:,.0f}")
        severity = "info"
    spread = [a.name for a in table.mapping.attributes if a.layout == "family"]
    return [Finding(
        "many-columns", severity, table.id, evidence, COLUMNS,
        "Bigtable processes every cell of a row on each read of it, and each cell carries its family, qualifier "
        "and timestamp: keep small values together in one cell (a map in its default JSON layout, not a column "
        "per member), or split the row (rows keyed by entity and time), as Google advises",
        "attributes:\n" + "".join(f"  - {{name: {name}, layout: json}}   # one cell for the whole value\n"
                                  for name in spread).rstrip("\n") if spread else "")]


NAME_SHARE = 0.05  # the name takes this share of the bytes written to its family


def long_family_names(table: TableSpec, families: dict[str, tuple[int, int]] | None) -> list[Finding]:
    """Family names over 16 characters; with a sample, only those whose name takes 5 % or
    more of the bytes written to the family (with big values a long name costs nothing)."""
    found = []
    for name in family_names(table):
        if len(name) <= LONG_FAMILY:
            continue
        if families is None:
            evidence = (f"family `{name}` is named with {len(name)} characters, sent with every cell written to "
                        f"it (spec only: give --export to weigh it against the data)")
        else:
            cells, data = families.get(name, (0, 0))
            if not cells or len(name) * cells < NAME_SHARE * data:
                continue
            evidence = (f"family `{name}` ({len(name)} characters) is {percent(len(name) * cells, data)} of the "
                        f"{data:,} bytes the sample writes to it ({cells:,} cells)")
        found.append(Finding(
            "long-family-name", "info", table.id, evidence, FAMILIES,
            "name families short (`cf`, `stats`): the name travels with every cell of every write request",
            f"default_family: {_short(name)}   # was {name}" if name == table.mapping.default_family else
            f"families:\n  - name: {_short(name)}   # was {name}; rules and attributes name it the same way"))
    return found


def _short(name: str) -> str:
    words = [w for w in name.replace("-", "_").replace(".", "_").split("_") if w]
    return "".join(w[0] for w in words).lower() if len(words) > 1 else name[:4].lower()
