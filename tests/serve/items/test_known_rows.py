"""What a worker knows of a row after its own write (serve/items/known_rows.py), pure: the
cells a writer's read would see (the item's new cells, the transaction family as read, the
newest record alone, stamped by the server), nothing when a mutation's outcome is the
server's to decide (AddToCell), and the bounds on what is kept."""

from __future__ import annotations

from google.cloud.bigtable.data import mutations as bt

from ddb2bigtable.codec.mutations import Cell
from ddb2bigtable.serve.guards import SERVER_TIME
from ddb2bigtable.serve.items import known_rows
from ddb2bigtable.serve.point_calls import RawMutation, set_cell_message
from ddb2bigtable.serve.streams import records
from ddb2bigtable.spec.families import STREAM_FAMILY, TXN_FAMILY

AT = 1_733_600_000_123_000
TOKEN = Cell(TXN_FAMILY, b"token:abc", b"{}", 0)


def _record(number: int, at: int) -> Cell:
    return Cell(STREAM_FAMILY, records.qualifier(number), f"record {number}".encode(), at)


def test_a_write_leaves_its_cells_the_kept_families_and_its_own_record_as_newest() -> None:
    before = (Cell("cf", b"v", b"old", AT - 5000), Cell("cf", b"gone", b"x", AT - 5000), TOKEN, _record(4, AT - 5000))
    mutations = [bt.DeleteAllFromFamily("cf"), RawMutation(set_cell_message("cf", b"v", b"new", AT)),
                 RawMutation(set_cell_message(STREAM_FAMILY, records.qualifier(5), b"record 5", SERVER_TIME))]
    after = known_rows.after_write(before, mutations)
    assert after == (Cell("_ddb2bigtable_stream", records.qualifier(5), b"record 5", SERVER_TIME),
                     TOKEN, Cell("cf", b"v", b"new", AT))
    # a write that records nothing (an identical put) keeps the row's newest record as read
    again = known_rows.after_write(after, [bt.DeleteAllFromFamily("cf"), RawMutation(set_cell_message("cf", b"v", b"new",
                                                                                               AT + 1000))])
    assert again is not None and [c for c in again if c.family == STREAM_FAMILY] == [after[0]]


def test_a_column_delete_and_a_counter() -> None:
    before = (Cell("cf", b"a", b"1", AT - 2000), Cell("cf", b"a", b"2", AT - 1000))
    assert known_rows.after_write(before, [bt.DeleteRangeFromColumn("cf", b"a", AT - 1500)]) == (before[0],)
    assert known_rows.after_write(before, [bt.AddToCell("counters", b"n", 1, 0)]) is None  # the server's sum


def test_the_guard_would_hold_to_the_millisecond_and_a_record_at_any_time() -> None:
    known = (Cell("cf", b"v", b"x", AT + 400), Cell(STREAM_FAMILY, b"q", b"r", SERVER_TIME))
    assert known_rows.would_hold(known, (Cell("cf", b"v", b"x", AT), Cell(STREAM_FAMILY, b"q", b"r", AT + 7000)))
    assert not known_rows.would_hold(known, (Cell("cf", b"v", b"x", AT + 1000), Cell(STREAM_FAMILY, b"q", b"r", AT)))
    assert not known_rows.would_hold(known, (Cell("cf", b"v", b"y", AT), Cell(STREAM_FAMILY, b"q", b"r", AT)))
    assert not known_rows.would_hold(known, known[:1])


def test_rows_are_kept_within_bounds(monkeypatch) -> None:
    monkeypatch.setattr(known_rows, "_known", type(known_rows._known)())
    monkeypatch.setattr(known_rows, "_held", [0])
    monkeypatch.setattr(known_rows, "MAX_ROWS", 2)
    cells = (Cell("cf", b"v", b"x", AT),)
    for n in range(3):
        known_rows.remember(("T", b"%d" % n), cells)
    assert known_rows.known(("T", b"0")) is None and known_rows.known(("T", b"2")) == cells  # the oldest went
    monkeypatch.setattr(known_rows, "MAX_AGE", -1.0)
    assert known_rows.known(("T", b"2")) is None  # too old to trust
    assert known_rows._held == [len(b"x") + len(b"v") + 48]  # ("T", b"1") only
