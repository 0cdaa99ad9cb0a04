"""A row's MutateRowsRequest.Entry written as protobuf wire bytes, straight from the codec's
plain cells (`RowCells`), for the encoder processes' chunks (issue #33).

Filling a protobuf message cell by cell (`writer.fill_entry`: four attribute sets per
cell, after a `SetCell` object per cell) cost nearly what checking and encoding the item
did: 7 of 16 µs a flat ~1 KB row (benchmarks/README.md, step 14).
But of a cell's bytes only the value and three lengths change from row to row: the
family, the qualifier and (at the load's write time) the timestamp are the column's. So
the bytes before a value are made once per column, time and value length, and a row is
the join of those heads and the values. Only SetCells are written here, in the order
protobuf serializes them (fields by number, proto3 defaults left out), so the bytes are
the ones `fill_entry` + `SerializeToString` give: tests/load/test_entry_bytes.py compares
them over random rows and tables. The writer parses each chunk with the protobuf library,
so what reaches Bigtable is still a message protobuf read.

The fields (https://github.com/googleapis/googleapis/blob/master/google/bigtable/v2/bigtable.proto
and .../v2/data.proto, read 2026-11-26; the test checks them against the installed client):
MutateRowsRequest.entries = 2; Entry.row_key = 1, Entry.mutations = 2; Mutation.set_cell =
1; SetCell.family_name = 1, column_qualifier = 2, timestamp_micros = 3 (int64 varint),
value = 4.
"""

from __future__ import annotations

from ..codec.mutations import RowCells

# Each field's tag byte: its number << 3 | its wire type (2: length-delimited, 0: varint).
_ENTRIES = b"\x12"  # MutateRowsRequest.entries
_ROW_KEY = b"\x0a"  # Entry.row_key
_MUTATIONS = b"\x12"  # Entry.mutations
_SET_CELL = b"\x0a"  # Mutation.set_cell
_FAMILY, _QUALIFIER, _TIMESTAMP, _VALUE = b"\x0a", b"\x12", b"\x18", b"\x22"  # SetCell's fields

# Heads kept before the cache starts over: bounds memory when every row has times of its
# own (a TTL family's cells carry each item's expiry) or values of ever new lengths.
MAX_HEADS = 16_384

_SMALL = [bytes((n,)) for n in range(128)]  # one-byte varints
_INT64 = (1 << 64) - 1


def varint(n: int) -> bytes:
    """A non-negative integer as a protobuf varint (7 bits a byte, low first)."""
    if n < 128:
        return _SMALL[n]
    out = bytearray()
    while n > 127:
        out.append(n & 127 | 128)
        n >>= 7
    out.append(n)
    return bytes(out)


def _field(tag: bytes, data: bytes) -> bytes:
    """A length-delimited field; proto3 leaves an empty one out."""
    return tag + varint(len(data)) + data if data else b""


class EntryBytes:
    """Writes rows of cells as entries' wire bytes. A cell is its head (everything before
    its value: the Mutation's and SetCell's lengths, family, qualifier, timestamp, the
    value's length) and its value. The head is made once per column, timestamp length and
    value length around the timestamp, and kept whole per column, time and value length
    when the column's time is the one it had before: the write time, not an item's expiry
    (a TTL family's cells), whose heads would not be met again. Both kept up to MAX_HEADS."""

    def __init__(self) -> None:
        self._heads: dict[tuple[tuple[str, bytes], int], dict[int, bytes]] = {}
        self._around: dict[tuple[tuple[str, bytes], int, int], tuple[bytes, bytes]] = {}
        self._times: dict[tuple[str, bytes], int] = {}  # each column's time at its last head made
        self._kept = 0  # heads and their parts kept
        self._time, self._stamp = 0, b""  # the last timestamp field made (a row's cells share one)

    def add(self, parts: list[bytes], row: RowCells) -> int:
        """Appends the row as one element of MutateRowsRequest.entries (tag, length, entry):
        a request that holds only entries serializes as the join of its elements. Returns
        the entry's length (its ByteSize, which the writer's batcher asks for)."""
        entry = self.entry(row)
        n = len(entry)
        parts += (_ENTRIES + (_SMALL[n] if n < 128 else varint(n)), entry)
        return n

    def entry(self, row: RowCells) -> bytes:
        """The row's Entry message, serialized."""
        heads = self._heads
        key = row.key
        n = len(key)
        out = [_ROW_KEY, _SMALL[n] if n < 128 else varint(n), key] if n else []
        for place, value, time in row.cells:
            n = len(value)
            try:
                head = heads[place, time][n]
            except KeyError:
                head = self._head(place, time, n)
            out += (head, value)
        return b"".join(out)

    def _head(self, place: tuple[str, bytes], time: int, n: int) -> bytes:
        if self._kept >= MAX_HEADS:
            self._heads, self._around, self._times, self._kept = {}, {}, {}, 0
        if time != self._time:
            self._time, self._stamp = time, _stamp(time)
        stamp = self._stamp
        shape = (place, len(stamp), n)
        around = self._around.get(shape)
        if around is None:
            around = self._around[shape] = _around(place, len(stamp), n)
            self._kept += 1
        head = around[0] + stamp + around[1]
        if self._times.get(place) == time:
            self._heads.setdefault((place, time), {})[n] = head
            self._kept += 1
        else:
            self._times[place] = time
        return head


def _stamp(time: int) -> bytes:
    """SetCell's timestamp field (int64: a negative time as its two's complement)."""
    return _TIMESTAMP + varint(time & _INT64) if time else b""


def _around(place: tuple[str, bytes], stamp: int, n: int) -> tuple[bytes, bytes]:
    """A cell's head before and after a timestamp field of `stamp` bytes, for a value of `n`."""
    family, qualifier = place
    before = _field(_FAMILY, family.encode()) + _field(_QUALIFIER, qualifier)
    after = _VALUE + varint(n) if n else b""
    set_cell = len(before) + stamp + len(after) + n
    before = _SET_CELL + varint(set_cell) + before
    return _MUTATIONS + varint(len(before) + stamp + len(after) + n) + before, after
