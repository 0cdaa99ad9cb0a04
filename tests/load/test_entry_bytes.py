"""The encoders' chunks are byte for byte what they were before the wire-format writer (#33).

`Packer` writes the compiled encoder's rows (`RowCells`) as protobuf wire bytes of its own
making (load/entry_bytes.py). What it wrote before, and still writes for every other row:
each row filled into a MutateRowsRequest.Entry by `fill_entry`, the request serialized by
the protobuf library. Here both are compared, on random rows (every family, qualifier,
value and time, lengths either side of each varint's byte boundary, columns met again
with other lengths and times, other mutations in between) and on random export lines
routed as the loader routes them (tables with TTL, salt, families, declared, mixed and
inferred types, unicode attribute names, keys-only items, large values), against today's
path (the checked route, its RowMutations filled and serialized). The writer parses the
chunks with the protobuf library: the same bytes, the same rows in Bigtable.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ddb2bigtable.codec.codec import Codec
from ddb2bigtable.codec.mutations import AddToCell, DeleteCells, DeleteRow, RowCells, RowMutation
from ddb2bigtable.exports.reader import read_records
from ddb2bigtable.load import entry_bytes
from ddb2bigtable.load.buckets import route
from ddb2bigtable.load.entry_bytes import EntryBytes, varint
from ddb2bigtable.load.state import FileCounts
from ddb2bigtable.load.writer import _ENTRY, _REQUEST, Packer, Source, fill_entry, row_entry
from ddb2bigtable.spec.model import AttributeMapping

from ..codec.test_codec import table
from .one_file_export import one_file_export, with_lines
from .test_fast_path import CODECS, NOW, OF_TYPE, item_lines, row_mutation

BOUNDARIES = (0, 1, 127, 128, 16_383, 16_384, 2_097_151, 2_097_152)
# lengths around the one- to two- and two- to three-byte varints, less a cell's overhead
lengths = st.one_of(st.integers(0, 3), st.integers(100, 140), st.integers(16_330, 16_400))
chars = st.sampled_from(["a", "\u00e9", "\u65e5", "\U0001f600"])  # 1 to 4 bytes in UTF-8
big_texts = st.builds(lambda n, c: c * (n // len(c.encode())), lengths, chars)
times = st.one_of(st.sampled_from([0, 1_000, NOW, 253_402_300_799_000_000, 2**63 - 1, *BOUNDARIES]),
                  st.integers(0, 2**63 - 1))
places = st.tuples(st.one_of(st.sampled_from(["cf", "d", "\u00e9t\u00e9", "x" * 200]), st.text(max_size=4)),
                   st.one_of(st.sampled_from([b"", b"q", b"\xff" * 130]), st.binary(max_size=6),
                             st.text(max_size=4).map(str.encode)))
values = st.one_of(st.binary(max_size=8), big_texts.map(str.encode))


def before(rows: list[RowMutation | RowCells]) -> bytes:
    """Today's chunk: every row filled into the request by `fill_entry`, then serialized."""
    request = _REQUEST()
    for row in rows:
        fill_entry(request.entries.add(), row_mutation(row) if isinstance(row, RowCells) else row)
    return request.SerializeToString()


def packed(rows: list[RowMutation | RowCells], packer: Packer) -> bytes:
    for i, row in enumerate(rows):
        packer.add(row, i)
    chunk, lines, sizes = packer.take()
    assert lines == list(range(len(rows)))
    assert sizes == [entry.ByteSize() for entry in _REQUEST.FromString(chunk).entries]  # what the batcher asks
    return chunk


@st.composite
def cell_rows(draw) -> RowCells:
    columns = draw(st.lists(places, min_size=1, max_size=4))  # a row's cells share them, as the encoder's do
    row_time = draw(times)
    cells = draw(st.lists(st.tuples(st.sampled_from(columns), values, st.one_of(st.just(row_time), times)),
                          max_size=6))
    return RowCells(draw(st.one_of(st.binary(min_size=1, max_size=8), big_texts.map(str.encode))), tuple(cells))


other_rows = st.sampled_from([
    RowMutation(b"k", (DeleteRow(),)),
    RowMutation(b"k", (DeleteCells("cf", b"q", 1_000, None), AddToCell("counters", b"n", -5, 0))),
    RowMutation(b"k", (DeleteRow(), DeleteCells("cf", b""))),
])


@settings(max_examples=300, deadline=None, derandomize=True)
@given(rows=st.lists(st.one_of(cell_rows(), cell_rows(), cell_rows(), other_rows), max_size=8),
       keep=st.sampled_from([1, 3, entry_bytes.MAX_HEADS]))
def test_packed_rows_are_the_bytes_protobuf_writes(rows, keep):
    """Any rows, any columns and lengths, the heads kept or started over (MAX_HEADS)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(entry_bytes, "MAX_HEADS", keep)
        cells = EntryBytes()
        assert packed(rows, Packer(cells)) == before(rows)
        assert packed(rows, Packer(cells)) == before(rows)  # again, from the heads kept


def test_varints_either_side_of_each_byte_boundary():
    for n in BOUNDARIES[1:] + (2**63 - 1, 2**64 - 1):  # 0 is not written (proto3's default)
        cell = _ENTRY().mutations.add().set_cell
        cell.timestamp_micros = n if n < 2**63 else n - 2**64
        assert b"\x18" + varint(n) == cell.SerializeToString(), n


def test_a_value_past_two_mebibytes_and_a_negative_time():
    """Three-byte lengths (a cell may hold up to 100 MiB); a time before 1970 as int64."""
    rows = [RowCells(b"k", ((("cf", b"q"), b"v" * 2_097_200, 1_000), (("cf", b"q"), b"", -1_000)))]
    assert packed(rows, Packer()) == before(rows)


def test_beam_writes_the_same_entry():
    """Beam's writer takes the compiled encoder's rows too (`row_entry`)."""
    row = RowCells(b"k", ((("cf", b"q"), b"v", 1_000), (("cf", b""), b"", 0)))
    source = Source("data/a.json.gz", 3)
    assert row_entry(row, source, EntryBytes())._to_pb() == row_entry(row_mutation(row), source)._to_pb()


# --- through the loader: export lines routed and packed, against the checked route --------------

UNICODE = (table(attributes=[AttributeMapping("na\u00efve", "S"), AttributeMapping("\u65e5\u672c", "N")]),
           {"\U0001f600": "M", "q" * 200: "S", "body": "S", "tags": "SS"})
TABLES = {**CODECS, "unicode": UNICODE}


@pytest.fixture(scope="module")
def export(tmp_path_factory) -> Path:
    return one_file_export(tmp_path_factory.mktemp("wire"), 8)


def large_lines(codec: Codec):
    """Items whose S attributes hold values of lengths near the varint boundaries."""
    keys = {k.name: OF_TYPE[k.type] for k in (codec.mapping.pk, codec.table.source.key.sort) if k is not None}
    texts = {name: big_texts.map(lambda s: {"S": s}) for name, kind in codec.types.items()
             if kind in ("S", "mixed") and name not in codec.mapping.keys}
    items = st.builds(lambda k, rest: {**k, **rest}, st.fixed_dictionaries(keys),
                      st.fixed_dictionaries({}, optional=texts))
    return items.map(lambda item: json.dumps({"Item": item}).encode())


@pytest.mark.parametrize("name", sorted(TABLES))
@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.large_base_example])
@given(data=st.data())
def test_loaded_lines_pack_to_the_bytes_of_the_checked_route(export, name, data):
    codec = Codec(*TABLES[name])
    body = data.draw(st.lists(st.one_of(item_lines(codec), large_lines(codec)), min_size=1, max_size=8))
    write_time = data.draw(st.sampled_from([0, 1_000, NOW - 1]))
    manifest, data_file = with_lines(export, body)
    chunks = []
    for check in (True, False):
        routed = [route(r, codec, write_time, NOW, None, FileCounts()).row
                  for r in read_records(manifest, data_file, check=check)]
        chunks.append([row for row in routed if row is not None])
    checked, fused = chunks
    assert not any(isinstance(row, RowCells) for row in checked)
    assert packed(fused, Packer()) == before(checked)
