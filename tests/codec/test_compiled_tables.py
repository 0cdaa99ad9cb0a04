"""`Codec.encode` and `Codec.decode` answer the same with and without the table's
compiled encoder and decoder (#33).

The compiled encoder (`table_encoder`) and decoder (`table_decoder`) take the default
mapping's items and rows first and hand anything they cannot answer exactly to the general
path. Whoever encodes or decodes (the loader, `serve`, `replicate`, `verify`) must see the
same row, item, `Expired` or error either way: items of any shape, any types recorded,
TTL, salt, replacement (incremental updates); rows as written, and rows with cells this
mapping never writes, extra versions, damaged values and damaged keys.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ddb2bigtable.codec.codec import Codec, CodecError
from ddb2bigtable.codec.mutations import Cell, SetCell
from ddb2bigtable.codec.row_keys import KeyTemplate
from ddb2bigtable.codec.type_inference import infer_types
from ddb2bigtable.spec.model import AttributeMapping

from .test_codec import NOW, WRITE, items_for, table, values


def _outcome(codec: Codec, item: dict, replace: bool) -> object:
    try:
        return codec.encode(item, write_time_micros=WRITE, now_micros=NOW, replace=replace)
    except CodecError as error:
        return ("error", str(error))


def _general(codec: Codec) -> Codec:
    general = Codec(codec.table, codec.types)
    general._fast = None  # the general paths alone, as before the compiled encoder and decoder
    general._decoder._fast = None
    return general


def _read(codec: Codec, key: bytes, cells: list[Cell]) -> object:
    try:
        return codec.decode(key, cells)
    except CodecError as error:
        return ("error", str(error))


@settings(max_examples=300, deadline=None)
@given(st.data(), st.sampled_from("SNB"), st.sampled_from(["S", "N", None]), st.sampled_from([None, 4]),
       st.sampled_from([None, "exp"]), st.booleans(), st.booleans())
def test_the_compiled_encoder_changes_no_outcome(data, pk, sk, salt, ttl, replace, infer_from_others):
    t = table(pk, sk, salt=salt, ttl=ttl, attributes=[AttributeMapping("doc", "M")])
    extra = data.draw(st.fixed_dictionaries({}, optional={
        "exp": st.sampled_from([{"N": "1600000000"}, {"N": "1800000000"}, {"S": "soon"}, {"N": "1e400"}]),
        "doc": values(6)}))
    items = data.draw(st.lists(items_for(pk, sk, extra), min_size=1, max_size=3))
    # the types of all items, or of the first only (then the others may not fit them)
    codec = Codec(t, infer_types(items if infer_from_others else items[:1], t))
    general = _general(codec)
    for item in items:
        assert _outcome(codec, item, replace) == _outcome(general, item, replace)


def test_the_compiled_encoder_answers_the_common_items():
    """The comparison above would pass with an encoder that never answers."""
    t = table()
    item = {"pk": {"S": "a"}, "sk": {"S": "b"}, "n": {"N": "1.50"}, "doc": {"M": {"x": {"L": [{"N": "2"}]}}},
            "tags": {"SS": ["x"]}, "flag": {"BOOL": True}, "none": {"NULL": True}}
    codec = Codec(t, infer_types([item], t))
    assert codec._fast is not None
    assert codec._fast.encode(item, WRITE, NOW, False) == _general(codec).encode(
        item, write_time_micros=WRITE, now_micros=NOW)


values_as_cells = st.one_of(st.binary(max_size=12), st.sampled_from(
    [b"\x01", b"", b"12", b'{"a":1}', b'["x"]', b'{"a": 0.10}', b'{"M":{"x":{"S":"y"}}}', b"[1,2.50]", b"\xff"]))


@settings(max_examples=300, deadline=None)
@given(st.data(), st.sampled_from("SNB"), st.sampled_from(["S", "N", None]), st.sampled_from([None, 4]),
       st.sampled_from(["#", "::", "\\"]))
def test_the_compiled_decoder_changes_no_outcome(data, pk, sk, salt, delimiter):
    t = table(pk, sk, salt=salt, delimiter=delimiter, attributes=[AttributeMapping("doc", "M")])
    item = data.draw(items_for(pk, sk))
    codec = Codec(t, infer_types([item], t))
    written = codec.encode(item, write_time_micros=WRITE, now_micros=NOW)
    cells = [Cell(m.family, m.qualifier, m.value, m.timestamp_micros) for m in written.mutations
             if isinstance(m, SetCell)]
    names = [n.encode() for n in item] + [b"", b"doc", b"\xff"]
    extra = data.draw(st.lists(st.builds(Cell, st.sampled_from(["cf", "other"]), st.sampled_from(names),
                                         values_as_cells, st.integers(0, WRITE * 2)), max_size=3))
    cells = data.draw(st.permutations(cells + extra))
    key = data.draw(st.one_of(st.just(written.key), st.binary(max_size=12),
                              st.just(written.key[:-1]), st.just(b"\\" + written.key)))
    assert _read(codec, key, cells) == _read(_general(codec), key, cells)


@given(st.binary(max_size=16), st.sampled_from(["#", "::", "\\", "%", "\u00e9"]))
def test_a_two_field_key_matches_as_the_general_scan_does(data, delimiter):
    template = KeyTemplate.parse("{p}" + delimiter + "{s}")
    general = KeyTemplate.parse("{p}" + delimiter + "{s}")
    general.__dict__["_split"] = None  # the scan alone
    assert template.match(data) == general.match(data)
