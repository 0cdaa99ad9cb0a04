"""The guard of a conditional write (store.unchanged_filter) is made as the protobuf message
the client sends (store.RawFilter: the client's filter classes took 2.4 ms for a row of 7
cells). It must say exactly what the filter made with the client's own classes says: the
same message, byte for byte, for values with RE2's special characters, NUL and high bytes
(each value a closed range from itself to itself),
long values compared by column and time alone, times inside a millisecond, cells stamped by
the server (matched at any time), with a writer's view and without."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest
from google.cloud.bigtable.data import row_filters as rf

from ddb2bigtable.codec.mutations import Cell
from ddb2bigtable.codec.timestamps import moment_of
from ddb2bigtable.serve.guards import SERVER_TIME, VALUE_BUDGET, VALUE_CELL_MAX, unchanged_filter
from ddb2bigtable.serve.store import writer_cells


def _clients(cells: list[Cell], view: rf.RowFilter | None) -> rf.RowFilter:
    """The guard as the client's filter classes make it (serve's before RawFilter)."""
    budget, columns = VALUE_BUDGET, {}
    for cell in cells:
        at = moment_of(cell.timestamp_micros)
        parts: list[rf.RowFilter] = [rf.TimestampRangeFilter(at, at + timedelta(microseconds=1))] \
            if cell.timestamp_micros != SERVER_TIME else []  # the server's time, unknown: any
        if len(cell.value) <= min(VALUE_CELL_MAX, budget):
            budget -= len(cell.value)
            parts.append(rf.ValueRangeFilter(cell.value, cell.value))
        columns.setdefault((cell.family, cell.qualifier), []).append(
            rf.PassAllFilter(True) if not parts else parts[0] if len(parts) == 1 else rf.RowFilterChain(parts))
    union = lambda fs: fs[0] if len(fs) == 1 else rf.RowFilterUnion(fs)  # noqa: E731
    matchers = [rf.RowFilterChain([rf.ColumnRangeFilter(f, q, q), union(v)]) for (f, q), v in columns.items()]
    all_there = rf.RowFilterChain([union(matchers), rf.CellsRowOffsetFilter(len(cells) - 1)])
    exactly = rf.ConditionalRowFilter(all_there, rf.ConditionalRowFilter(
        rf.CellsRowOffsetFilter(len(cells)), rf.BlockAllFilter(True), rf.PassAllFilter(True)), rf.BlockAllFilter(True))
    return rf.RowFilterChain([view, exactly]) if view is not None else exactly


def _bytes(made: rf.RowFilter) -> bytes:
    message = made._to_pb()
    return type(message).pb(message).SerializeToString(deterministic=True)


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("view", [None, writer_cells(("cf", "other"))])
def test_the_guard_is_the_clients_filter_byte_for_byte(seed, view) -> None:
    rng = random.Random(seed)
    cells = [Cell(rng.choice(["cf", "other", "_ddb2bigtable_txn"]), bytes(rng.randrange(256) for _ in range(4)),
                  bytes(rng.randrange(256) for _ in range(rng.choice([0, 3, 40, 600]))),
                  rng.randrange(10**15, 10**16)) for _ in range(rng.randrange(1, 30))]
    cells += [Cell("cf", b"same", b"a.b*c\x00\xff(", 1_700_000_000_000_001), Cell("cf", b"same", b"", 1_700_000_000_000_000)]
    # a stream record the worker wrote itself (items/known_rows.py): short, and long (column alone)
    cells += [Cell("_ddb2bigtable_stream", b"\xff" * 8, bytes(rng.randrange(256) for _ in range(n)), SERVER_TIME)
              for n in rng.sample([0, 40, 600], 1)]
    assert _bytes(unchanged_filter(cells, view)) == _bytes(_clients(cells, view))
