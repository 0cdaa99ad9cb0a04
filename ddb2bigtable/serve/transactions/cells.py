"""The protocol's cells in Bigtable (docs/transactions.md, "Cells"): the reserved family,
a lock written as cells and read back, a row read as a View, and the filters that make a
CheckAndMutateRow hold only while a row holds a given lock, or any.

An intent is stored as the Bigtable mutations themselves (serialized protocol buffers), so
whoever rolls a transaction forward applies exactly what its owner decided, with no codec.
A single-item write's intent is never stored (it is written in the one CheckAndMutateRow
that checks the row), so it stays a plain list of mutations (`Mutations`): packing a wide
item's 20,000 cells and reading them back took 0.6 s.
A row deleted by an intent is deleted family by family, never whole: DeleteAllFromRow
would take the row's lock and token cells with it.

The lock's cells, its guards and an intent read back are made as the raw protobuf messages
the lean calls send as they are (`RawMutation`, point_calls.py), not with the client's mutation and
filter classes, whose proto-plus messages cost about 0.5 ms of a 3-item transaction's CPU
(2026-12-07: 58 us to make one lock's guard, 31 us its three cells; 23 and 13 us now).
tests/serve/transactions/test_lock_cells.py checks they are the client's, byte for byte.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, cast

from google.cloud.bigtable.data import mutations as bt
from google.cloud.bigtable.data import row_filters as rf
from google.cloud.bigtable_v2.types import CheckAndMutateRowRequest
from google.cloud.bigtable_v2.types import data as data_pb

from ...codec.mutations import Cell
from ...spec.families import TXN_FAMILY, TXN_LOCK_COLUMN
from ..guards import RawFilter
from ..point_calls import RawMutation, delete_column_message, delete_family_message, set_cell_message
from .steps import LOCK_VERSION, Lock, LockState, RowRef, View

FAMILY = TXN_FAMILY  # every table's reserved family (plan/gc_rules.py); the codec never writes it
LOCK, TXN, INTENT = TXN_LOCK_COLUMN, b"txn", b"intent"
TOKEN = b"token:"  # + ClientRequestToken: the answer of a committed TransactWriteItems
# The name a lock gives serve's token table (items/lock_tables.py), whose row keyed by a
# ClientRequestToken holds its record: a name no DynamoDB table can have (':' is not allowed
# in one), so no user table or key reaches it
TOKENS = "ddb2bigtable:tokens"
FIXED_MICROS = 0  # lock cells keep one fixed time, so a new value replaces the old (max_versions 1)
_MUTATION, _FILTER = data_pb.Mutation.pb(), data_pb.RowFilter.pb()  # the raw protobuf classes
_PACKED = CheckAndMutateRowRequest.pb()  # an intent's stored form: the request's true_mutations


def is_locked(cells: Iterable[Any]) -> bool:
    """Whether a row as read holds a lock (a ReadRow returns its cells with the data's)."""
    return any(c.family == FAMILY and c.qualifier == LOCK for c in cells)


class RowCells:
    """Cells shaped as the data client's row (`row_key`, iterable), for what decodes rows."""

    def __init__(self, key: bytes, data: Iterable[Any]):
        self.row_key, self.data = key, tuple(data)

    def __iter__(self) -> Any:
        return iter(self.data)


@dataclass(frozen=True, eq=False)
class Mutations:
    """An intent as the mutations a single-item write sends, as they are (each row delete
    already made family by family), and what the caller wants back once it is written
    (`about`: the item before and after). The one list a caller appends a cell to that the
    same write must carry."""

    mutations: list[bt.Mutation]
    about: Any = None


def lock_value(txn: str, state: LockState) -> bytes:
    return f"{txn}:{state.value}".encode()


def pack_intent(mutations: list[bt.Mutation]) -> bytes:
    packed = _PACKED()
    packed.true_mutations.extend(_raw(m) for m in mutations)
    return bytes(packed.SerializeToString())


def unpack_intent(packed: bytes | None) -> list[bt.Mutation]:
    if not packed:
        return []
    return [RawMutation(m) for m in _PACKED.FromString(packed).true_mutations]


def _raw(m: bt.Mutation) -> Any:
    made = m._to_pb()
    return made if isinstance(made, _MUTATION) else data_pb.Mutation.pb(made)


def without_row_delete(mutations: list[bt.Mutation], families: Iterable[str]) -> list[bt.Mutation]:
    """The row's mutations with a whole-row delete made family by family (the item's families)."""
    out: list[bt.Mutation] = []
    for m in mutations:
        out += [_delete_family(f) for f in families] if _deletes_row(m) else [m]
    return out


def _deletes_row(m: bt.Mutation) -> bool:
    """A whole-row delete, built here or read back from an intent (RawMutation keeps the message)."""
    return isinstance(m, bt.DeleteAllFromRow) or (isinstance(m, RawMutation) and m.message.HasField("delete_from_row"))


def _delete_family(family: str) -> RawMutation:
    return RawMutation(delete_family_message(family))


def _set(qualifier: bytes, value: bytes) -> RawMutation:
    return RawMutation(set_cell_message(FAMILY, qualifier, value, FIXED_MICROS))


def _delete_column(qualifier: bytes) -> RawMutation:
    return RawMutation(delete_column_message(FAMILY, qualifier))  # every version


def replaced(qualifier: bytes, value: bytes, micros: int) -> list[bt.Mutation]:
    """A reserved cell written anew at `micros`, its older versions gone (a token's record)."""
    made = _set(qualifier, value)
    made.message.set_cell.timestamp_micros = micros
    return [_delete_column(qualifier), made]


def split_row(row: RowRef) -> tuple[str, bytes]:
    """A row on Bigtable: (DynamoDB table name, row key)."""
    return cast(tuple[str, bytes], row)


def _ref(row: RowRef) -> list[str]:
    table, key = split_row(row)
    return [table, base64.b64encode(key).decode()]


def _row(ref: list[str]) -> RowRef:
    return ref[0], base64.b64decode(ref[1])


def lock_cells(lock: Lock) -> list[bt.Mutation]:
    """A lock as the cells prewrite sets (and commit sets again, committed)."""
    about = {"v": LOCK_VERSION, "primary": _ref(lock.primary), "expires": lock.expires_micros,
             "secondaries": [_ref(s) for s in lock.secondaries]}
    return [_set(LOCK, lock_value(lock.txn, lock.state)), _set(TXN, json.dumps(about).encode()),
            _set(INTENT, lock.intent or b"")]


def unlock_cells() -> list[bt.Mutation]:
    return [_delete_column(q) for q in (LOCK, TXN, INTENT)]


def view_of(row: RowRef, read: Any) -> View:
    """A row as read (None: no row): its data (every cell but the lock's, in the order read,
    for the unchanged check) and its lock."""
    if read is None:
        return View(row, (), None)
    data, mine = [], {}
    for c in read:
        if c.family == FAMILY and c.qualifier in (LOCK, TXN, INTENT):
            mine[bytes(c.qualifier)] = bytes(c.value)
        else:
            data.append(Cell(c.family, bytes(c.qualifier), bytes(c.value), c.timestamp_micros))
    return View(row, tuple(data), _lock(mine) if LOCK in mine else None)


def _lock(cells: dict[bytes, bytes]) -> Lock:
    txn, _, stored = cells[LOCK].decode().rpartition(":")
    about = json.loads(cells.get(TXN) or b"{}")
    primary = _row(about["primary"]) if "primary" in about else None
    version = int(about.get("v", 0))
    state = next((s for s in LockState if s.value == stored), None)
    if state is None:  # a state this release does not know: a newer release's lock, never acted on
        state, version = LockState.PREPARED, max(version, LOCK_VERSION + 1)
    return Lock(txn, primary, state, int(about.get("expires", 0)), cells.get(INTENT) or None,
                tuple(_row(s) for s in about.get("secondaries", ())), version)


def holds_lock(lock: Lock) -> rf.RowFilter:
    """Yields a cell only while the row holds `lock` (same transaction, same state)."""
    made = _FILTER()
    made.chain.filters.add().CopyFrom(_LOCK_COLUMN)
    made.chain.filters.add().value_regex_filter = _exactly(lock_value(lock.txn, lock.state))
    return RawFilter(made)


def holds_any_lock() -> rf.RowFilter:
    return RawFilter(_LOCK_COLUMN)  # (sent as it is, never changed)


def _exactly(value: bytes) -> bytes:
    """An RE2 pattern matching `value` only (every byte escaped)."""
    return b"".join(map(_ESCAPED.__getitem__, value))


_ESCAPED = [b"\\x%02x" % b for b in range(256)]
_LOCK_COLUMN = _FILTER()  # the lock's column: the reserved family's `lock`
_LOCK_COLUMN.chain.filters.add().family_name_regex_filter = FAMILY
_LOCK_COLUMN.chain.filters.add().column_qualifier_regex_filter = _exactly(LOCK)
