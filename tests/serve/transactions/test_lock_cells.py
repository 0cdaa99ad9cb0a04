"""The lock's cells, guards and intents as cells.py makes them (raw protobuf, sent as they
are) are the messages the client's own mutation and filter classes make, byte for byte, so
Bigtable sees exactly the calls it saw before they were made raw (pure: no server)."""

from __future__ import annotations

import json

import pytest
from google.cloud.bigtable.data import mutations as bt
from google.cloud.bigtable.data import row_filters as rf
from google.cloud.bigtable_v2.types import CheckAndMutateRowRequest

from ddb2bigtable.serve.point_calls import raw
from ddb2bigtable.serve.transactions import cells
from ddb2bigtable.serve.transactions.steps import COMMITTED, LOCK_VERSION, PREPARED, Lock


def _bytes(made: list[bt.Mutation]) -> list[bytes]:
    return [raw(m._to_pb()).SerializeToString() for m in made]


def _filter_bytes(made: rf.RowFilter) -> bytes:
    return raw(made._to_pb()).SerializeToString()


def _client_lock_column() -> rf.RowFilter:
    return rf.RowFilterChain([rf.FamilyNameRegexFilter(cells.FAMILY),
                              rf.ColumnQualifierRegexFilter(cells._exactly(cells.LOCK))])


LOCKS = [
    Lock("0123abcd.0", ("Movies", b"\x00k\xff"), PREPARED, 1_700_000_000_000_000, b"\x0a\x02ab",
         (("Movies", b"a"), (cells.TOKENS, b"tok"))),
    Lock("ffee.3", (cells.TOKENS, b"a token"), COMMITTED, 5, None),
]


@pytest.mark.parametrize("lock", LOCKS)
def test_a_locks_cells_and_guard_are_the_clients(lock: Lock) -> None:
    about = {"v": LOCK_VERSION, "primary": cells._ref(lock.primary), "expires": lock.expires_micros,
             "secondaries": [cells._ref(s) for s in lock.secondaries]}
    client = [bt.SetCell(cells.FAMILY, cells.LOCK, cells.lock_value(lock.txn, lock.state), cells.FIXED_MICROS),
              bt.SetCell(cells.FAMILY, cells.TXN, json.dumps(about).encode(), cells.FIXED_MICROS),
              bt.SetCell(cells.FAMILY, cells.INTENT, lock.intent or b"", cells.FIXED_MICROS)]
    assert _bytes(cells.lock_cells(lock)) == _bytes(client)
    guard = rf.RowFilterChain([_client_lock_column(),
                               rf.ValueRegexFilter(cells._exactly(cells.lock_value(lock.txn, lock.state)))])
    assert _filter_bytes(cells.holds_lock(lock)) == _filter_bytes(guard)
    assert _filter_bytes(cells.holds_any_lock()) == _filter_bytes(_client_lock_column())
    assert _bytes(cells.unlock_cells()) == _bytes([bt.DeleteRangeFromColumn(cells.FAMILY, q)
                                                   for q in (cells.LOCK, cells.TXN, cells.INTENT)])


def test_a_tokens_record_is_the_clients() -> None:
    made = cells.replaced(b"token:abc", b'{"hash":"x"}', 1_700_000_000_123_000)
    assert _bytes(made) == _bytes([bt.DeleteRangeFromColumn(cells.FAMILY, b"token:abc"),
                                   bt.SetCell(cells.FAMILY, b"token:abc", b'{"hash":"x"}', 1_700_000_000_123_000)])


def test_an_intent_is_stored_and_read_back_as_the_client_made_it() -> None:
    """Packed as the client's CheckAndMutateRowRequest packs it (what earlier releases stored and
    read), and read back to the same mutations, a whole-row delete made family by family."""
    mutations = [bt.DeleteAllFromRow(), bt.SetCell("cf", b"balance", b"7", 1_000),
                 bt.DeleteRangeFromColumn("cf", b"old", 5, 10), bt.AddToCell("cf", b"n", 2, 3_000)]
    packed = cells.pack_intent(mutations)
    assert packed == CheckAndMutateRowRequest.serialize(CheckAndMutateRowRequest(
        true_mutations=[m._to_pb() for m in mutations]))
    back = cells.unpack_intent(packed)
    assert _bytes(back) == _bytes(mutations)
    assert _bytes(cells.without_row_delete(back, ("cf", "dd"))) == _bytes(
        [bt.DeleteAllFromFamily("cf"), bt.DeleteAllFromFamily("dd"), *mutations[1:]])
    assert cells.unpack_intent(None) == [] and cells.unpack_intent(b"") == []
    assert back[1]._to_pb().set_cell.value == b"7"
