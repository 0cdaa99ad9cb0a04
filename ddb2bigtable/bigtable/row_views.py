"""What the load's readers take of a table's rows: never the 24 hours of stream records a
served row can hold (docs/streams.md: each write through serve adds a record, images
included, in the reserved stream family, so a hot item's row holds thousands).

`verify` and `cutover check` (load/verify.RowReader) decode items and date each row's last
write (load/later_writes.py: the newest stream record dates a write through serve), so they
read the item families, the transaction family and the stream family's first column, its
newest record (serve numbers records inverted: serve/streams/records.qualifier), as serve's
own writers read (serve/store.writer_cells, made from `items_and_newest_record`; serve's
readers of items take `items_only`). The load's spot check asks only whether a row
is there: one cell, its value stripped. Families are named one by one (ColumnRangeFilter),
never by a regular expression, which the emulator compiles for every row it reads.
"""

from __future__ import annotations

from collections.abc import Iterable

from google.cloud.bigtable.data import row_filters as rf

from ..spec.families import STREAM_FAMILY, TXN_FAMILY

ONE_CELL = rf.RowFilterChain([rf.CellsRowLimitFilter(1), rf.StripValueTransformerFilter(True)])  # "is the row there"


def named(families: Iterable[str]) -> rf.RowFilter:
    """The cells of `families`, each named by a ColumnRangeFilter (one family: that filter alone)."""
    found: list[rf.RowFilter] = [rf.ColumnRangeFilter(f) for f in families]
    return found[0] if len(found) == 1 else rf.RowFilterUnion(found)


def items_only(families: Iterable[str]) -> rf.RowFilter:
    """The cells of `families` (a table's item families) and the transaction family (locks,
    token records), none of the stream's records (serve's reads of items)."""
    return named((*families, TXN_FAMILY))


def items_and_newest_record(families: Iterable[str]) -> rf.RowFilter:
    """`items_only` and the row's newest stream record, the family's first column."""
    return rf.RowFilterUnion([*(rf.ColumnRangeFilter(f) for f in (*families, TXN_FAMILY)),
                              rf.RowFilterChain([rf.ColumnRangeFilter(STREAM_FAMILY), rf.CellsRowLimitFilter(1)])])
