"""A write's stream records go to Bigtable oldest change first. One write can carry two
records of its item (a PutItem of an item already expired: its INSERT, then its REMOVE by
TTL; a write meeting an expired item: the REMOVE, then its INSERT), each cell stamped with
Bigtable's server time. The emulator stamps each SetCell of a mutation as it applies it
(one MutateRow of 50 such cells: 6 rows of 200 stamped across two milliseconds,
2026-12-08), so a later change applied first can take the earlier millisecond and come
before the earlier one in the stream, ordered by commit time: a two-worker run with TTL
saw an item's REMOVE by TTL before the INSERT it removes (about one in 150 expired puts).
The write path sorts a mutation's cells in column order for the emulator's sake
(store.in_column_order), and a record's column is its change number inverted
(records.qualifier), so the newest record went first."""

from __future__ import annotations

from ddb2bigtable.codec.mutations import DeleteRow, RowMutation, SetCell
from ddb2bigtable.serve.store import client_mutations
from ddb2bigtable.serve.streams import records


def _record(number: int) -> SetCell:
    return SetCell(records.FAMILY, records.qualifier(number), f"record {number}".encode(), -1)


def test_a_writes_records_are_sent_oldest_change_first() -> None:
    row = RowMutation(b"row", (DeleteRow(), SetCell("cf", b"b", b"2", 7000), SetCell("cf", b"a", b"1", 7000),
                               _record(357), _record(358), _record(359)))
    sent = [m.message.set_cell for m in client_mutations(row, ("cf",)) if hasattr(m, "message")]
    stream = [records.number_of(c.column_qualifier) for c in sent if c.family_name == records.FAMILY]
    assert stream == [357, 358, 359]  # before: [359, 358, 357]
    assert [c.column_qualifier for c in sent if c.family_name == "cf"] == [b"a", b"b"]  # the item's in column order
