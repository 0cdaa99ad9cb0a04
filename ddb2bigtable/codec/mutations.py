"""What the item codec produces and reads: row mutations and cells, as plain values.

The local writer, the Beam pipeline and `verify` all speak these types, so none of them
imports the Bigtable client to talk about a row: the writer turns a `RowMutation` into
the client's mutations, and a read turns the client's cells into `Cell`s for `decode`.
Timestamps are always explicit microseconds, multiples of 1000 (Bigtable tables keep
millisecond granularity by default), so a rerun writes the very same versions.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..spec.errors import Ddb2BigtableError


class CodecError(Ddb2BigtableError):
    """An item that cannot be written (or a row that cannot be read back), with a reason a
    user understands: row key over 4 KiB, key attribute missing, counter not an int64, ..."""


# The codec makes one SetCell per attribute of every item (and reads make a Cell per cell
# version): a frozen dataclass's generated __init__ sets each field through
# object.__setattr__, half of what building one costs. These classes stay frozen and
# compare, hash and print as dataclasses; their __init__ fills the instance dict at once.

@dataclass(frozen=True, init=False)
class SetCell:
    family: str
    qualifier: bytes
    value: bytes
    timestamp_micros: int

    def __init__(self, family: str, qualifier: bytes, value: bytes, timestamp_micros: int):
        self.__dict__.update(family=family, qualifier=qualifier, value=value, timestamp_micros=timestamp_micros)


@dataclass(frozen=True)
class DeleteRow:
    """Delete every cell of the row."""


@dataclass(frozen=True)
class DeleteCells:
    """Delete the versions of one column; with a range, only those in [start, end)."""

    family: str
    qualifier: bytes
    start_micros: int | None = None
    end_micros: int | None = None


@dataclass(frozen=True)
class AddToCell:
    """Add `amount` to the int64 cell of an aggregate (int64 Sum) family; Bigtable merges
    every addition to one column and time into one cell, whichever cluster takes it."""

    family: str
    qualifier: bytes
    amount: int
    timestamp_micros: int

    @property
    def value(self) -> bytes:
        """The cell as this addition alone leaves it (from a deleted cell): 8-byte big-endian."""
        return self.amount.to_bytes(8, "big", signed=True)


Mutation = SetCell | DeleteRow | DeleteCells | AddToCell


@dataclass(frozen=True, init=False)
class RowMutation:
    """Mutations of one row, applied in order (deletes come before the sets they clear for)."""

    key: bytes
    mutations: tuple[Mutation, ...]

    def __init__(self, key: bytes, mutations: tuple[Mutation, ...]):  # fast: see SetCell
        self.__dict__.update(key=key, mutations=mutations)


# One SetCell as a plain tuple: (column, value, timestamp_micros), column = (family,
# qualifier). The compiled encoder makes one column tuple per attribute, once, so a writer
# may key what it derives from a column (its wire-format prefix) on it.
CellTuple = tuple[tuple[str, bytes], bytes, int]


@dataclass(frozen=True, init=False)
class RowCells:
    """A row written by SetCells alone, its cells as plain tuples: the compiled encoder's
    row for the loader (`Codec.parsed_cells`), which writes its protobuf bytes from the
    tuples (load/entry_bytes.py) without a `SetCell` per cell."""

    key: bytes
    cells: tuple[CellTuple, ...]

    def __init__(self, key: bytes, cells: tuple[CellTuple, ...]):  # fast: see SetCell
        self.__dict__.update(key=key, cells=cells)


@dataclass(frozen=True, init=False)
class Cell:
    """One cell version as a read returns it."""

    family: str
    qualifier: bytes
    value: bytes
    timestamp_micros: int

    def __init__(self, family: str, qualifier: bytes, value: bytes, timestamp_micros: int):  # fast: see SetCell
        self.__dict__.update(family=family, qualifier=qualifier, value=value, timestamp_micros=timestamp_micros)


@dataclass(frozen=True)
class Expired:
    """The item's TTL has passed: DynamoDB would delete it, so it is not written.

    `delete` is set for an incremental update (`encode(..., replace=True)`): the item's
    previous version may still be in Bigtable with a later expiry, and must go.
    """

    expiry_micros: int
    delete: RowMutation | None = None
