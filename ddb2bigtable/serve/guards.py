"""The guard of serve's conditional writes (`unchanged_filter`: the row still holds exactly
the cells a writer read; store.py's module doc), and its filters made as the protobuf
messages the client sends (RawFilter), which every conditional write builds anew: made with
the client's filter classes, the guard of a row of 7 cells took 2.4 ms (1.4 ms to make and
size it, 1.0 ms more when the call converted it again; 2026-12-07, this project's 2-core
machine), here about 0.25 ms. tests/serve/items/test_write_guard.py checks it is the
client's filter, byte for byte.
"""

from __future__ import annotations

import re
from typing import Any

from google.cloud.bigtable.data import row_filters as rf
from google.cloud.bigtable_v2.types import data as data_pb

from ..codec.mutations import Cell
from .errors import unsupported

VALUE_BUDGET = 8 * 1024  # value bytes compared inside one CheckAndMutate predicate
VALUE_CELL_MAX = 512  # a longer value is matched by column and timestamp only
FILTER_BYTES = 19 * 1024  # below Bigtable's 20 KB per filter, with room for the request around it


def unchanged_filter(cells: list[Cell], view: rf.RowFilter | None = None) -> rf.RowFilter:
    """True (yields a cell) only while the row, seen through `view` (a writer's: `writer_cells`;
    None: the whole row), holds exactly `cells` (see the module doc). For an empty read, the
    caller writes in the false branch of the view itself (`Store.any_cell`). A row
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
_NOT_LITERAL = re.compile(rb"[^a-zA-Z0-9_\x80-\xff]")  # what RE2's QuoteMeta escapes (as LiteralValueFilter)


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
    columns: dict[tuple[str, bytes], list[Any]] = {}
    for cell in cells:
        at = cell.timestamp_micros  # [at, at + 1 µs) as the client's TimestampRangeFilter sends it: whole ms
        version = _FILTER()
        version.timestamp_range_filter.start_timestamp_micros = at // 1000 * 1000
        version.timestamp_range_filter.end_timestamp_micros = -(-(at + 1) // 1000) * 1000
        if len(cell.value) <= min(VALUE_CELL_MAX, budget):
            budget -= len(cell.value)
            value = _FILTER(value_regex_filter=_NOT_LITERAL.sub(_quoted, cell.value))
            version = _raw_chain([version, value])
        columns.setdefault((cell.family, cell.qualifier), []).append(version)
    matchers = []
    for (family, qualifier), versions in columns.items():
        column = _FILTER()
        column.column_range_filter.family_name = family
        column.column_range_filter.start_qualifier_closed = qualifier
        column.column_range_filter.end_qualifier_closed = qualifier
        matchers.append(_raw_chain([column, _raw_union(versions)]))
    all_there = _raw_chain([_raw_union(matchers), _FILTER(cells_per_row_offset_filter=len(cells) - 1)])
    more = _FILTER()
    more.condition.predicate_filter.cells_per_row_offset_filter = len(cells)
    more.condition.true_filter.block_all_filter = True
    more.condition.false_filter.pass_all_filter = True
    exactly = _FILTER()
    exactly.condition.predicate_filter.CopyFrom(all_there)
    exactly.condition.true_filter.CopyFrom(more)
    exactly.condition.false_filter.block_all_filter = True
    return _raw_chain([view, exactly]) if view is not None else exactly


def _quoted(found: re.Match[bytes]) -> bytes:
    return b"\\x00" if found.group() == b"\x00" else b"\\" + found.group()


def _raw_chain(filters: list[Any]) -> Any:
    return _raw_combined("chain", filters)


def _raw_union(filters: list[Any]) -> Any:
    return _raw_combined("interleave", filters)


def _raw_combined(kind: str, filters: list[Any]) -> Any:
    """`filters` in a chain or an interleave (a union); one filter as itself."""
    if len(filters) == 1:
        return filters[0]
    made = _FILTER()
    getattr(made, kind).filters.extend(filters)
    return made
