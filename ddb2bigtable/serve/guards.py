"""The guard of serve's conditional writes (`unchanged_filter`: the row still holds exactly
the cells a writer read; store.py's module doc), and its filters made as the protobuf
messages the client sends (RawFilter), which every conditional write builds anew: made with
the client's filter classes, the guard of a row of 7 cells took 2.4 ms (1.4 ms to make and
size it, 1.0 ms more when the call converted it again; 2026-12-07, this project's 2-core
machine), here about 0.25 ms. tests/serve/items/test_write_guard.py checks it is the
client's filter, byte for byte.

A value is compared as a closed range from the value to itself (ValueRangeFilter), not as a
quoted regular expression (LiteralValueFilter): the same cells match, and neither side
compiles a pattern for every cell of every write (the emulator takes about 0.2 ms less a
value, 2026-12-07).
"""

from __future__ import annotations

from typing import Any

from google.cloud.bigtable.data import row_filters as rf
from google.cloud.bigtable_v2.types import data as data_pb

from ..codec.mutations import Cell
from ..spec.families import TXN_FAMILY, TXN_WRITE_COLUMN
from .errors import unsupported

SERVER_TIME = -1  # a cell stamped by Bigtable's clock (a stream record as written): matched at any time
VALUE_BUDGET = 8 * 1024  # value bytes compared inside one CheckAndMutate predicate
VALUE_CELL_MAX = 512  # a longer value is matched by column and timestamp only (and the write stamp)
FILTER_BYTES = 19 * 1024  # below Bigtable's 20 KB per filter, with room for the request around it


def unchanged_filter(cells: list[Cell], view: rf.RowFilter | None = None) -> rf.RowFilter:
    """True (yields a cell) only while the row, seen through `view` (a writer's: `writer_cells`;
    None: the whole row), holds exactly `cells` (see the module doc). For an empty read, the
    caller writes in the false branch of the view itself (`Store.any_cell`). A cell stamped
    SERVER_TIME (a stream record a worker wrote itself, whose commit time it never learns:
    items/known_rows.py) is matched at any time, by its column and its value when short. A row
    so wide that even the values-free filter passes Bigtable's 20 KB is refused: its items
    cannot be written atomically. Made as the protobuf message the client sends (RawFilter)."""
    seen = raw_of(view) if view is not None else None
    for budget in (VALUE_BUDGET, 0):
        built = _unchanged(cells, budget, seen)
        if built.ByteSize() <= FILTER_BYTES:
            return RawFilter(built)
    raise unsupported(f"an atomic write to a row of {len(cells):,} cells",
                      "the check that the row did not change would pass Bigtable's 20 KB filter limit")


_FILTER = data_pb.RowFilter.pb()  # the raw protobuf class


class RawFilter(rf.RowFilter):
    """A filter made straight as the protobuf message (as store.RawSetCell), sent as it is."""

    __slots__ = ("message",)

    def __init__(self, message: Any):
        self.message = message

    def _to_pb(self) -> Any:
        return data_pb.RowFilter.wrap(self.message)

    def _to_dict(self) -> dict[str, Any]:
        return type(data_pb.RowFilter.wrap(self.message)).to_dict(data_pb.RowFilter.wrap(self.message))


def raw_of(made: rf.RowFilter) -> Any:
    """A filter's protobuf message (the client's classes converted once)."""
    return made.message if isinstance(made, RawFilter) else data_pb.RowFilter.pb(made._to_pb())


def _unchanged(cells: list[Cell], budget: int, view: Any) -> Any:
    """The guard's message, each part made in place in its parent (a message added to a
    repeated field is copied, so a tree built bottom up is copied once per level)."""
    columns: dict[tuple[str, bytes], list[tuple[int, bytes | None]]] = {}
    for cell in cells:
        compared = len(cell.value) <= min(VALUE_CELL_MAX, budget) or _is_stamp(cell)
        budget -= len(cell.value) if compared else 0
        columns.setdefault((cell.family, cell.qualifier), []).append(
            (cell.timestamp_micros, cell.value if compared else None))
    top = _FILTER()
    if view is not None:
        top.chain.filters.append(view)
        exactly = top.chain.filters.add()
    else:
        exactly = top
    condition = exactly.condition
    all_there = condition.predicate_filter.chain.filters
    union = all_there.add()
    for (family, qualifier), versions in columns.items():
        matcher = union.interleave.filters.add() if len(columns) > 1 else union
        column = matcher.chain.filters.add().column_range_filter
        column.family_name = family
        column.start_qualifier_closed = column.end_qualifier_closed = qualifier
        either = matcher.chain.filters.add()
        for at, value in versions:
            _version(either.interleave.filters.add() if len(versions) > 1 else either, at, value)
    all_there.add().cells_per_row_offset_filter = len(cells) - 1
    more = condition.true_filter.condition
    more.predicate_filter.cells_per_row_offset_filter = len(cells)
    more.true_filter.block_all_filter = True
    more.false_filter.pass_all_filter = True
    condition.false_filter.block_all_filter = True
    return top


def _is_stamp(cell: Cell) -> bool:
    """The row's write stamp (store.stamped), compared by value whatever the budget: it is
    what tells apart two writes whose long values share their column and time."""
    return cell.qualifier == TXN_WRITE_COLUMN and cell.family == TXN_FAMILY


def _version(into: Any, at: int, value: bytes | None) -> None:
    """One cell's match: its time to the millisecond ([at, at + 1 µs) as the client's
    TimestampRangeFilter sends it: whole ms; any time for SERVER_TIME) and its value when
    compared, as a closed range from the value to itself (no pattern for the server to compile)."""
    timed = at != SERVER_TIME
    if not timed and value is None:
        into.pass_all_filter = True
        return
    both = timed and value is not None
    first, second = (into.chain.filters.add(), into.chain.filters.add()) if both else (into, into)
    if timed:
        first.timestamp_range_filter.start_timestamp_micros = at // 1000 * 1000
        first.timestamp_range_filter.end_timestamp_micros = -(-(at + 1) // 1000) * 1000
    if value is not None:
        second.value_range_filter.start_value_closed = second.value_range_filter.end_value_closed = value
