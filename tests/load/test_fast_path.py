"""The loader's fused path gives the buckets the checked path gives, line for line (#33).

The encoder processes and the Beam pipeline read full exports unchecked
(`read_records(check=False)`) and let the codec's compiled encoder check each item as it
encodes it; what it cannot answer goes the old way (the reader's check, then
`Codec.encode`). Over random lines, well-formed or not, and tables with TTL, salt,
families, declared, mixed and inferred types, every line must get the same row (bytes,
cells, times: the fused path's `RowCells` made into the `RowMutation` it stands for), the
same dead letter (reason and kept text), the same expiry and the same counts either way.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import asdict
from pathlib import Path
from unittest.mock import patch

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ddb2bigtable.codec.codec import Codec
from ddb2bigtable.codec.mutations import RowCells, RowMutation, SetCell
from ddb2bigtable.exports.manifests import ExportError, open_export
from ddb2bigtable.exports.reader import read_records
from ddb2bigtable.load import encoder
from ddb2bigtable.load.buckets import Routed, loaded_cells, route
from ddb2bigtable.load.encoder import EncodeJob
from ddb2bigtable.load.entry_bytes import EntryBytes
from ddb2bigtable.load.state import FileCounts
from ddb2bigtable.spec.model import AttributeMapping, FamilyMapping, GcRule

from ..codec.test_codec import table
from ..conftest import ROOT
from .one_file_export import data_path, one_file_export, with_lines
from .test_fuzz_export_lines import TABLE as MOVIES
from .test_fuzz_export_lines import lines as damaged_lines

NOW = 1_800_000_000 * 1_000_000

numbers = st.sampled_from(["0", "7", "2013", "6.2", "-1", "1e5", "1E+2", "0.10", "1" * 38, "1800000001",
                           "1900000000", "-0", "007", ".5", "1.", "+3", "1E+400"])
texts = st.text(max_size=8)
good_scalars = st.one_of(
    texts.map(lambda s: {"S": s}),
    numbers.map(lambda n: {"N": n}),
    st.booleans().map(lambda b: {"BOOL": b}),
    st.just({"NULL": True}),
    st.lists(texts, min_size=1, max_size=3).map(lambda m: {"SS": m}),
    st.lists(numbers, min_size=1, max_size=3).map(lambda m: {"NS": m}),
)
bad_scalars = st.one_of(
    st.sampled_from(["\u0663", "", "x", "1e", "--1", 5]).map(lambda n: {"N": n}),
    st.sampled_from([{"NULL": False}, {"S": 5}, {"B": "AAEC"}, {"B": "not base64!"}, {"X": "y"}, {},
                     {"S": "a", "N": "1"}, "text", None, {"BOOL": 1}, {"SS": []}, {"NS": []}, {"BS": ["AQ=="]},
                     {"SS": [1]}, {"M": []}, {"L": {}}]),
)


def documents(leaves):
    return st.recursive(leaves, lambda inner: st.one_of(
        st.dictionaries(st.one_of(st.sampled_from(["M", "L", "S"]), texts), inner, max_size=3).map(lambda m: {"M": m}),
        st.lists(inner, max_size=3).map(lambda m: {"L": m})), max_leaves=6)


plain_values = documents(st.one_of(texts.map(lambda s: {"S": s}), numbers.map(lambda n: {"N": n}),
                                   st.booleans().map(lambda b: {"BOOL": b}), st.just({"NULL": True})))
any_values = documents(st.one_of(good_scalars, good_scalars, good_scalars, good_scalars, bad_scalars))
# a value of each stored type, mostly well-formed (so the fused path answers and its rows are compared)
OF_TYPE = {
    "S": texts.map(lambda s: {"S": s}), "N": numbers.map(lambda n: {"N": n}),
    "BOOL": st.booleans().map(lambda b: {"BOOL": b}), "NULL": st.just({"NULL": True}),
    "SS": st.lists(texts, min_size=1, max_size=3).map(lambda m: {"SS": m}),
    "NS": st.lists(numbers, min_size=1, max_size=3).map(lambda m: {"NS": m}),
    "M": plain_values.filter(lambda v: "M" in v), "L": plain_values.filter(lambda v: "L" in v),
    "B": st.just({"B": "AAEC"}), "mixed": any_values,
}
ODD_KEYS = st.sampled_from([{"S": "a#b"}, {"S": "\\%"}, {"S": ""}, {"S": "x" * 5000}, {"N": "1E+400"}, {"N": 1}])


def item_lines(codec: Codec):
    """Export lines of items of this codec's table: its attributes mostly of their stored
    types, now and then anything; keys now and then odd or missing; a tenth damaged lines
    (`test_fuzz_export_lines`' own)."""
    keys = [k for k in (codec.mapping.pk, codec.table.source.key.sort) if k is not None]
    values = {name: st.one_of(*[OF_TYPE[kind]] * 8, any_values)
              for name, kind in codec.types.items() if name not in codec.mapping.keys}
    key_values = {k.name: st.one_of(*[OF_TYPE[k.type]] * 8, ODD_KEYS) for k in keys}
    items = st.builds(lambda k, rest, extra, drop: {n: v for n, v in {**k, **rest, **extra}.items() if n not in drop},
                      st.fixed_dictionaries(key_values), st.fixed_dictionaries({}, optional=values),
                      st.dictionaries(st.sampled_from(["other", "more"]), any_values, max_size=1),
                      st.sets(st.sampled_from([k.name for k in keys] + ["-"] * 6), max_size=1))
    good = items.map(lambda item: json.dumps({"Item": item}).encode())
    damaged = damaged_lines().filter(lambda line: len(line) < 1 << 16)  # the reader's limit: its own tests
    return st.one_of(*[good] * 9, damaged)


# (table, types) pairs: types as a load records them after inference (or none)
CODECS = {
    "movies": (MOVIES, {}),
    "declared": (table(attributes=[AttributeMapping("doc", "M"), AttributeMapping("n", "N"),
                                   AttributeMapping("tags", "SS")]),
                 {"flag": "BOOL", "nums": "NS", "x": "mixed", "exp": "N", "note": "S"}),
    "inferred": (table(), {"doc": "L", "n": "N", "flag": "NULL", "tags": "SS", "nums": "NS", "x": "S",
                           "note": "mixed", "exp": "mixed"}),
    "ttl_salt_families": (table(ttl="exp", salt=4, families=[FamilyMapping("kept", GcRule(max_versions=3))],
                                attributes=[AttributeMapping("note", "S", family="kept")]),
                          {"doc": "M", "n": "N", "flag": "BOOL", "tags": "mixed", "nums": "NS", "x": "mixed",
                           "exp": "N"}),
    "number_key": (table(pk="N", sk=None), {"doc": "mixed", "n": "N"}),
    "binary": (table(), {"blob": "B", "n": "N"}),  # no compiled encoder: everything the general way
    # nothing stored as typed JSON: the encoder loop's one call takes its rows (`loaded_cells`)
    "plain_ttl_salt": (table(ttl="exp", salt=4), {"doc": "M", "n": "N", "note": "S", "tags": "SS", "exp": "N"}),
}


@pytest.fixture(scope="module")
def export(tmp_path_factory) -> Path:
    return one_file_export(tmp_path_factory.mktemp("fast"), 6)  # as many items as a test writes lines


def row_mutation(row: RowCells) -> RowMutation:
    """The RowMutation a row of plain cells stands for."""
    return RowMutation(row.key, tuple(SetCell(f, q, v, t) for (f, q), v, t in row.cells))


def as_mutation(routed: Routed) -> Routed:
    """The same bucket, its row as a RowMutation (the compiled encoder gives `RowCells`)."""
    if isinstance(routed.row, RowCells):
        return Routed(row_mutation(routed.row), routed.dead, routed.expired, routed.raw)
    return routed


def _both_ways(folder: Path, body: list[bytes], codec: Codec) -> tuple[list, list]:
    manifest, data_file = with_lines(folder, body)
    results = []
    for check in (True, False):
        counts = FileCounts()
        routed = [(r.line, as_mutation(route(r, codec, NOW - 1, NOW, None, counts)))
                  for r in read_records(manifest, data_file, check=check)]
        results.append((routed, asdict(counts)))
    return results[0], results[1]


@pytest.mark.parametrize("name", sorted(CODECS))
@settings(max_examples=150, deadline=5000, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_unchecked_lines_route_as_checked_ones(export, name, data):
    codec = Codec(*CODECS[name])
    body = data.draw(st.lists(item_lines(codec), min_size=1, max_size=6))
    checked, fused = _both_ways(export, body, codec)
    assert fused == checked


def test_the_fused_path_is_taken_for_well_formed_items(export):
    """The comparison above would pass with a fast path that never answers: it answers
    for the loader's common items, and leaves binary and expired items to the general path."""
    codec = Codec(*CODECS["ttl_salt_families"])
    good = {"pk": {"S": "p"}, "sk": {"S": "s"}, "doc": {"M": {"a": {"L": [{"N": "1.5"}, {"NULL": True}]}}},
            "note": {"S": "n"}, "x": {"SS": ["a"]}, "exp": {"N": "1900000000"}}
    assert codec.encode_parsed(good, write_time_micros=NOW, now_micros=NOW) is not None
    for other in ({**good, "blob": {"B": "AAEC"}}, {**good, "exp": {"N": "1700000000"}}, {**good, "n": {"S": "1"}}):
        assert codec.encode_parsed(other, write_time_micros=NOW, now_micros=NOW) is None


def test_the_shipped_movies_export_routes_the_same_both_ways():
    """Every item of AWS's Movies export goes the fused way, and gets the very same row."""
    manifest = open_export(str(ROOT / "exports" / "movies"))
    codec = Codec(MOVIES, {})
    for f in manifest.files:
        checked = list(read_records(manifest, f))
        fused = list(read_records(manifest, f, check=False))
        assert all(r.unchecked is not None for r in fused)
        assert all(codec.encode_parsed(r.item, write_time_micros=NOW, now_micros=NOW) is not None for r in fused)
        assert [as_mutation(route(r, codec, NOW, NOW, None, FileCounts())) for r in fused] == \
            [route(r, codec, NOW, NOW, None, FileCounts()) for r in checked]


# --- the encoder loop's one call for the common case (`buckets.loaded_cells`, step 15) -----

class _Pipe:
    """The writer's end of an encoder's pipe: what the loop sent, in order."""

    def __init__(self) -> None:
        self.sent: list[object] = []

    def send(self, message: object) -> None:
        self.sent.append(message)


def _encoded_file(folder: Path, codec: Codec, fast: bool) -> tuple:
    """An encoder's chunks for the one data file (the last with its counts, first rows and
    stop) and the stop it raised; `fast` False: every line through `route`, as the loop
    did before `loaded_cells`."""
    manifest = open_export(str(folder))
    (data_file,) = manifest.files
    job = EncodeJob(manifest, codec.table, None, (data_file,), NOW - 1, NOW, None)
    pipe = _Pipe()
    with patch.object(encoder, "check_digest", lambda *_: None), \
            patch.object(encoder, "loaded_cells", encoder.loaded_cells if fast else lambda *_: None):
        try:
            encoder._encode_file(pipe, job, codec, data_file, EntryBytes())  # type: ignore[arg-type]
            stopped = None
        except ExportError as error:
            stopped = str(error)
    return pipe.sent, stopped


@pytest.fixture(scope="module")
def long_export(tmp_path_factory) -> Path:
    return one_file_export(tmp_path_factory.mktemp("loop"), 80)


@pytest.mark.parametrize("name", sorted(CODECS))
@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_the_encoder_loop_sends_the_same_with_its_fast_path(long_export, name, data):
    """Chunks (bytes, lines, dead letters, lines read), counts and first rows are the same
    with the loop's one call for loaded rows as with `route` for every line, across the
    first chunk's end (50 lines) and when the file stops mid-way (a cut gzip stream:
    the counts of the lines read so far)."""
    codec = Codec(*CODECS[name])
    body = data.draw(st.lists(item_lines(codec), min_size=1, max_size=70))
    packed = gzip.compress(b"\n".join(body) + b"\n")
    if data.draw(st.booleans()):
        packed = packed[:data.draw(st.integers(10, len(packed) - 1))]
    data_path(long_export).write_bytes(packed)
    assert _encoded_file(long_export, codec, True) == _encoded_file(long_export, codec, False)


def test_the_encoder_loop_takes_its_fast_path():
    """It is taken where `route` would load every row the compiled encoder gives, and only there."""
    assert loaded_cells(Codec(*CODECS["plain_ttl_salt"]), None) is not None
    assert loaded_cells(Codec(MOVIES, {}), 1.0) is not None
    assert loaded_cells(Codec(MOVIES, {}), 0.5) is None  # a sample leaves rows out: route counts them
    assert loaded_cells(Codec(*CODECS["declared"]), None) is None  # typed JSON: route counts its forms
    assert loaded_cells(Codec(*CODECS["binary"]), None) is None  # no compiled encoder
