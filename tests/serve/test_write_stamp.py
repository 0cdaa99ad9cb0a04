"""The row's write stamp (store.stamped): what lets a conditional write's guard tell two
writes apart when their long values share column and time (tests/serve/test_long_values_guard.py
shows the lost writes without it, on serve and the emulator)."""

from __future__ import annotations

from ddb2bigtable.codec.mutations import Cell, DeleteRow, RowMutation, SetCell
from ddb2bigtable.serve.guards import raw_of, unchanged_filter
from ddb2bigtable.serve.items.known_rows import after_write
from ddb2bigtable.serve.store import client_mutations
from ddb2bigtable.spec.families import STREAM_FAMILY, TXN_FAMILY, TXN_WRITE_COLUMN

FAMILIES = ("cf",)
LONG = b"x" * 600


def _stamps(cells: tuple[Cell, ...] | None) -> list[bytes]:
    assert cells is not None
    return [c.value for c in cells if (c.family, c.qualifier) == (TXN_FAMILY, TXN_WRITE_COLUMN)]


def _put(key: bytes = b"k") -> RowMutation:
    return RowMutation(key, (DeleteRow(), SetCell("cf", b"doc", LONG, 1_000)))


def test_every_item_write_leaves_a_stamp_of_its_own() -> None:
    first = after_write((), client_mutations(_put(), FAMILIES))
    second = after_write(first or (), client_mutations(_put(), FAMILIES))
    assert len(_stamps(first)) == len(_stamps(second)) == 1  # one version: a write replaces the last
    assert _stamps(first) != _stamps(second) and len(_stamps(first)[0]) == 8
    same_cells = [c for c in first or () if c.family == "cf"] == [c for c in second or () if c.family == "cf"]
    assert same_cells  # the item's cells alike, column, value and time: only the stamp tells them apart


def test_a_write_that_leaves_no_item_takes_its_stamp_away() -> None:
    written = after_write((), client_mutations(_put(), FAMILIES))
    assert after_write(written or (), client_mutations(RowMutation(b"k", (DeleteRow(),)), FAMILIES)) == ()


def test_the_guard_compares_the_stamp_even_past_its_value_budget() -> None:
    cells = list(after_write((), client_mutations(_put(), FAMILIES)) or ())
    values = [b"%04d" % i * 64 for i in range(60)]  # 15 KB, past the 8 KB the guard compares
    wide = [Cell("cf", b"c%05d" % i, v, 1_000) for i, v in enumerate(values)] + cells  # the stamp read last
    sent = raw_of(unchanged_filter(wide)).SerializeToString()
    assert values[-1] not in sent  # values past the budget go uncompared
    assert _stamps(tuple(cells))[0] in sent


def test_serve_own_rows_are_not_stamped() -> None:
    registry_write = client_mutations(RowMutation(b"Movies", (SetCell("r", b"d", b"{}", 0),)))
    assert _stamps(after_write((), registry_write)) == []


def test_a_delete_with_its_stream_record_takes_the_stamp_away() -> None:
    written = after_write((), client_mutations(_put(), FAMILIES))
    record = SetCell(STREAM_FAMILY, b"\xff", b"{}", 2_000)  # the REMOVE's record, written with the delete
    assert _stamps(after_write(written or (), client_mutations(RowMutation(b"k", (DeleteRow(), record)), FAMILIES))) == []
