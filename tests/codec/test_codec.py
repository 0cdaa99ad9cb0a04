"""The item codec: exact round trips for every type and layout, TTL, counters, replace/delete."""

from __future__ import annotations

import gzip
import json
from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ddb2bigtable.codec.cell_values import canonical_item
from ddb2bigtable.codec.codec import FAR_FUTURE_MICROS, Codec, CodecError, Expired
from ddb2bigtable.codec.mutations import Cell, DeleteCells, DeleteRow, RowMutation, SetCell
from ddb2bigtable.codec.row_keys import canonical_number
from ddb2bigtable.codec.type_inference import infer_types
from ddb2bigtable.spec.model import (
    AttributeMapping,
    FamilyMapping,
    GcRule,
    KeyAttribute,
    KeySchema,
    Mapping,
    MappingRule,
    Salt,
    Source,
    TableSpec,
    Ttl,
)
from ddb2bigtable.spec.reading import read_spec

from .test_row_keys import dynamo_numbers

ROOT = Path(__file__).resolve().parents[2]
NOW = 1_700_000_000_000_000  # 2023-11-14T22:13:20Z
WRITE = 1_699_999_999_123_456


def table(pk="S", sk="S", *, salt=None, ttl=None, attributes=(), families=(), rules=(), delimiter="#"):
    key = KeySchema(KeyAttribute("pk", pk), KeyAttribute("sk", sk) if sk else None)
    return TableSpec("t", Source("T", "us-east-1", key, ttl=Ttl(ttl) if ttl else None),
                     Mapping(delimiter=delimiter, salt=Salt(salt) if salt else None, families=tuple(families),
                             attributes=tuple(attributes), rules=tuple(rules)))


def cells_of(mutation: RowMutation) -> list[Cell]:
    return [Cell(m.family, m.qualifier, m.value, m.timestamp_micros) for m in mutation.mutations
            if isinstance(m, SetCell)]


def round_trip(codec: Codec, item: dict) -> list[dict]:
    written = codec.encode(item, write_time_micros=WRITE, now_micros=NOW)
    assert isinstance(written, RowMutation)
    return codec.decode(written.key, cells_of(written))


# --- strategies ---------------------------------------------------------------------------

names = st.text(min_size=1, max_size=12).filter(lambda n: n not in ("pk", "sk"))
numbers = dynamo_numbers().map(canonical_number)
exact_numbers = st.sampled_from(["0.10", "1E+2", "-0.0", "30", "1.50", "7e-3"])  # as some exporter wrote them


def scalars():
    return st.one_of(
        st.text(max_size=20).map(lambda s: {"S": s}),
        st.one_of(numbers, exact_numbers).map(lambda n: {"N": n}),
        st.binary(max_size=20).map(lambda b: {"B": b}),
        st.booleans().map(lambda b: {"BOOL": b}),
        st.just({"NULL": True}),
    )


def sets():
    return st.one_of(
        st.lists(st.text(max_size=10), min_size=1, max_size=5, unique=True).map(lambda m: {"SS": m}),
        st.lists(numbers, min_size=1, max_size=5, unique_by=lambda n: n).map(lambda m: {"NS": m}),
        st.lists(st.binary(max_size=10), min_size=1, max_size=5, unique=True).map(lambda m: {"BS": m}),
    )


def values(max_leaves=12):
    return st.recursive(
        st.one_of(scalars(), sets()),
        lambda inner: st.one_of(
            st.dictionaries(st.text(max_size=8), inner, max_size=4).map(lambda d: {"M": d}),
            st.lists(inner, max_size=4).map(lambda items: {"L": items}),
        ),
        max_leaves=max_leaves,
    )


def key_value(kind):
    return {"S": st.text(min_size=1, max_size=12).map(lambda s: {"S": s}),
            "N": numbers.map(lambda n: {"N": n}),
            "B": st.binary(min_size=1, max_size=12).map(lambda b: {"B": b})}[kind]


@st.composite
def items_for(draw, pk, sk, extra=None):
    item = {"pk": draw(key_value(pk))}
    if sk:
        item["sk"] = draw(key_value(sk))
    item.update(draw(st.dictionaries(names, values(), max_size=6)))
    item.update(extra or {})
    return item


# --- round trips --------------------------------------------------------------------------

@settings(max_examples=200)
@given(st.data(), st.sampled_from("SNB"), st.sampled_from(["S", "N", "B", None]),
       st.sampled_from([None, 4, 97]), st.sampled_from(["#", "::", "|"]))
def test_default_mapping_round_trips_every_type(data, pk, sk, salt, delimiter):
    t = table(pk, sk, salt=salt, delimiter=delimiter)
    item = data.draw(items_for(pk, sk))
    codec = Codec(t, infer_types([item], t))
    assert [canonical_item(i) for i in round_trip(codec, item)] == [canonical_item(item)]
    assert codec.expected(item, now_micros=NOW) is not None


@settings(max_examples=100)
@given(st.lists(items_for("S", "S"), min_size=1, max_size=6))
def test_types_inferred_over_many_items_round_trip_each(items):
    t = table()
    codec = Codec(t, infer_types(items, t))  # attributes seen with two types are "mixed"
    for item in items:
        assert [canonical_item(i) for i in round_trip(codec, item)] == [canonical_item(item)]


LAYOUTS = (
    AttributeMapping("tags", "SS", "family", "tags"),
    AttributeMapping("scores", "NS", "family", "scores"),
    AttributeMapping("blobs", "BS", "family", "blobs"),
    AttributeMapping("props", "M", "family", "props"),
    AttributeMapping("events", "L", "timestamps", "events"),
    AttributeMapping("hits", "counter"),
)
LAYOUT_FAMILIES = tuple(FamilyMapping(a.family) for a in LAYOUTS if a.family)


@st.composite
def layout_items(draw):
    plain = st.recursive(st.one_of(st.text(max_size=8).map(lambda s: {"S": s}), numbers.map(lambda n: {"N": n}),
                                   st.booleans().map(lambda b: {"BOOL": b}), st.just({"NULL": True})),
                         lambda inner: st.one_of(st.dictionaries(st.text(max_size=5), inner, max_size=3)
                                                 .map(lambda d: {"M": d}),
                                                 st.lists(inner, max_size=3).map(lambda x: {"L": x})),
                         max_leaves=6)
    extra = {
        "tags": draw(st.lists(st.text(max_size=8), min_size=1, max_size=4, unique=True).map(lambda m: {"SS": m})),
        "scores": draw(st.lists(numbers, min_size=1, max_size=4, unique=True).map(lambda m: {"NS": m})),
        "blobs": draw(st.lists(st.binary(max_size=8), min_size=1, max_size=4, unique=True).map(lambda m: {"BS": m})),
        "props": {"M": draw(st.dictionaries(st.text(max_size=6), plain, max_size=4))},
        "events": {"L": draw(st.lists(plain, max_size=5))},
        "hits": {"N": str(draw(st.integers(-(2**63), 2**63 - 1)))},
    }
    chosen = draw(st.sets(st.sampled_from(sorted(extra))))
    item = draw(items_for("S", "N", {k: v for k, v in extra.items() if k in chosen}))
    # A random attribute that happens to take a layout's name would have a type the spec
    # does not declare for it: refused by design (tested apart), not a round trip.
    return {k: v for k, v in item.items() if k in chosen or k not in extra}


@settings(max_examples=150)
@given(layout_items(), st.sampled_from([None, 8]))
def test_layouts_round_trip(item, salt):
    t = table("S", "N", salt=salt, attributes=LAYOUTS, families=LAYOUT_FAMILIES)
    codec = Codec(t, infer_types([item], t))
    assert codec.notes == ()
    assert [canonical_item(i) for i in round_trip(codec, item)] == [canonical_item(item)]


def test_layout_cells_look_like_the_seeds_data_type_table():
    t = table(attributes=LAYOUTS, families=LAYOUT_FAMILIES)
    item = {"pk": {"S": "p"}, "sk": {"S": "s"}, "tags": {"SS": ["b", "a"]}, "props": {"M": {"480": {"S": "u"}}},
            "events": {"L": [{"S": "x"}, {"N": "2"}]}, "hits": {"N": "-2"}, "empty": {"M": {}}}
    written = Codec(t, infer_types([item], t)).encode(item, write_time_micros=WRITE, now_micros=NOW)
    got = {(c.family, c.qualifier, c.value, c.timestamp_micros) for c in cells_of(written)}
    w = WRITE // 1000 * 1000
    assert got == {("tags", b"b", b"\x00", w), ("tags", b"a", b"\x00", w), ("props", b"480", b'"u"', w),
                   ("events", b"events", b'"x"', w - 1000), ("events", b"events", b"2", w),
                   ("cf", b"hits", (-2).to_bytes(8, "big", signed=True), w), ("cf", b"empty", b"{}", w)}


def test_empty_map_and_list_layouts_come_back():
    t = table(attributes=LAYOUTS, families=LAYOUT_FAMILIES)
    item = {"pk": {"S": "p"}, "sk": {"S": "s"}, "props": {"M": {}}, "events": {"L": []}}
    assert round_trip(Codec(t, infer_types([item], t)), item) == [item]


def test_scalar_cells():
    t = table()
    item = {"pk": {"S": "p"}, "sk": {"S": "s"}, "s": {"S": "héllo"}, "n": {"N": "0.10"}, "b": {"B": b"\x00\xff"},
            "t": {"BOOL": True}, "f": {"BOOL": False}, "z": {"NULL": True}, "ss": {"SS": ["x", "y"]},
            "ns": {"NS": ["1", "2.50"]}, "bs": {"BS": [b"\x01"]}, "m": {"M": {"a": {"N": "1.0"}, "l": {"L": []}}}}
    written = Codec(t, infer_types([item], t)).encode(item, write_time_micros=WRITE, now_micros=NOW)
    got = {c.qualifier.decode(): c.value for c in cells_of(written)}
    assert got == {"s": "héllo".encode(), "n": b"0.10", "b": b"\x00\xff", "t": b"\x01", "f": b"\x00", "z": b"",
                   "ss": b'["x","y"]', "ns": b"[1,2.50]", "bs": b'["AQ=="]', "m": b'{"a":1.0,"l":[]}'}
    assert written.key == b"p#s"
    assert {c.family for c in cells_of(written)} == {"cf"}


def test_documents_with_sets_or_binary_are_self_describing():
    t = table(attributes=[AttributeMapping("doc", "M")])
    item = {"pk": {"S": "p"}, "sk": {"S": "s"}, "doc": {"M": {"tags": {"SS": ["a"]}, "raw": {"B": b"\x01"}}}}
    types = infer_types([item], t)
    assert types["doc"] == "mixed"
    codec = Codec(t, types)
    (cell,) = cells_of(codec.encode(item, write_time_micros=WRITE, now_micros=NOW))
    assert json.loads(cell.value) == {"M": {"tags": {"SS": ["a"]}, "raw": {"B": "AQ=="}}}
    assert round_trip(codec, item) == [item]


def test_mixed_attribute_is_self_describing():
    t = table()
    items = [{"pk": {"S": "p"}, "sk": {"S": str(i)}, "v": v} for i, v in enumerate([{"S": "1"}, {"N": "1"}])]
    types = infer_types(items, t)
    assert types["v"] == "mixed"
    codec = Codec(t, types)
    assert cells_of(codec.encode(items[0], write_time_micros=WRITE, now_micros=NOW))[0].value == b'{"S":"1"}'
    for item in items:
        assert round_trip(codec, item) == [item]


def test_type_conflicts_are_codec_errors():
    t = table(attributes=[AttributeMapping("price", "N")])
    codec = Codec(t, infer_types([], t))
    with pytest.raises(CodecError, match="declares it N"):
        codec.encode({"pk": {"S": "p"}, "sk": {"S": "s"}, "price": {"S": "3"}}, write_time_micros=WRITE,
                     now_micros=NOW)
    with pytest.raises(CodecError, match="key attribute 'sk' is missing"):
        codec.encode({"pk": {"S": "p"}}, write_time_micros=WRITE, now_micros=NOW)
    with pytest.raises(CodecError, match="declares it S"):
        codec.encode({"pk": {"N": "1"}, "sk": {"S": "s"}}, write_time_micros=WRITE, now_micros=NOW)


# --- timestamps and TTL -------------------------------------------------------------------

def ttl_codec():
    t = table(ttl="expiresAt")
    return Codec(t, {"expiresAt": "N"})


def test_expired_items_are_not_written():
    codec = ttl_codec()
    item = {"pk": {"S": "p"}, "sk": {"S": "s"}, "expiresAt": {"N": str(NOW // 1_000_000)}}
    assert codec.encode(item, write_time_micros=WRITE, now_micros=NOW) == Expired(NOW)
    item["expiresAt"] = {"N": str(NOW // 1_000_000 - 3600)}
    assert codec.encode(item, write_time_micros=WRITE, now_micros=NOW) == Expired(NOW - 3600 * 10**6)
    assert codec.expected(item, now_micros=NOW) is None


def test_future_ttl_is_the_cell_timestamp_and_decodes():
    codec = ttl_codec()
    expiry = NOW // 1_000_000 + 86400
    item = {"pk": {"S": "p"}, "sk": {"S": "s"}, "expiresAt": {"N": str(expiry)}, "v": {"S": "x"}}
    written = codec.encode(item, write_time_micros=WRITE, now_micros=NOW)
    assert {c.timestamp_micros for c in cells_of(written)} == {expiry * 1_000_000}
    assert codec.decode(written.key, cells_of(written)) == [item]


@pytest.mark.parametrize("ttl", [None, {"S": "2030-01-01"}, {"N": "1171734022"}, {"N": "99999999999999"}])
def test_no_valid_ttl_gets_the_far_future(ttl):
    """Absent, not a number, over five years past (DynamoDB ignores it), or past year 9999."""
    item = {"pk": {"S": "p"}, "sk": {"S": "s"}, "v": {"S": "x"}}
    if ttl:
        item["expiresAt"] = ttl
    codec = Codec(table(ttl="expiresAt"), infer_types([item], table(ttl="expiresAt")))
    written = codec.encode(item, write_time_micros=WRITE, now_micros=NOW)
    assert {c.timestamp_micros for c in cells_of(written)} == {FAR_FUTURE_MICROS}
    assert FAR_FUTURE_MICROS == 253_402_300_799_999_000  # 9999-12-31T23:59:59.999Z
    assert codec.decode(written.key, cells_of(written)) == [item]


def test_ttl_only_on_families_gc_gives_the_ttl_policy():
    t = table(ttl="exp", families=[FamilyMapping("kept", GcRule(max_versions=3))],
              attributes=[AttributeMapping("note", "S", family="kept")])
    codec = Codec(t, {})
    assert codec.ttl_families == frozenset({"cf"})
    expiry = NOW // 1_000_000 + 60
    item = {"pk": {"S": "p"}, "sk": {"S": "s"}, "exp": {"N": str(expiry)}, "note": {"S": "n"}}
    got = {c.family: c.timestamp_micros for c in cells_of(codec.encode(item, write_time_micros=WRITE, now_micros=NOW))}
    assert got == {"cf": expiry * 1_000_000, "kept": WRITE // 1000 * 1000}


def test_write_time_is_whole_milliseconds_and_idempotent():
    codec = Codec(table(), {})
    item = {"pk": {"S": "p"}, "sk": {"S": "s"}, "v": {"S": "x"}}
    one = codec.encode(item, write_time_micros=WRITE, now_micros=NOW)
    two = codec.encode(item, write_time_micros=WRITE, now_micros=NOW + 10**9)
    assert one == two
    assert cells_of(one)[0].timestamp_micros == 1_699_999_999_123_000


# --- counters -----------------------------------------------------------------------------

@given(st.integers(-(2**63), 2**63 - 1))
def test_counters_are_big_endian_int64(n):
    t = table(attributes=[AttributeMapping("c", "counter")])
    codec = Codec(t, infer_types([], t))
    item = {"pk": {"S": "p"}, "sk": {"S": "s"}, "c": {"N": str(n)}}
    (cell,) = cells_of(codec.encode(item, write_time_micros=WRITE, now_micros=NOW))
    assert cell.value == n.to_bytes(8, "big", signed=True) and len(cell.value) == 8
    assert round_trip(codec, item) == [item]


@pytest.mark.parametrize("bad", ["1.5", "9223372036854775808", "-9223372036854775809", "1E+30"])
def test_counter_must_be_an_int64(bad):
    t = table(attributes=[AttributeMapping("c", "counter")])
    with pytest.raises(CodecError, match="int64|integer"):
        Codec(t, {}).encode({"pk": {"S": "p"}, "sk": {"S": "s"}, "c": {"N": bad}}, write_time_micros=WRITE,
                            now_micros=NOW)


# --- replace and delete -------------------------------------------------------------------

def test_default_mapping_replace_and_delete_clear_the_row():
    codec = Codec(table(), {})
    item = {"pk": {"S": "p"}, "sk": {"S": "s"}, "v": {"S": "x"}}
    written = codec.encode(item, write_time_micros=WRITE, now_micros=NOW, replace=True)
    assert written.mutations[0] == DeleteRow() and isinstance(written.mutations[1], SetCell)
    assert codec.delete({"pk": {"S": "p"}, "sk": {"S": "s"}}) == RowMutation(b"p#s", (DeleteRow(),))


def test_rule_replace_and_delete_touch_only_the_items_cells():
    codec = Codec(read_spec(ROOT / "specs" / "invoices-adjacency.yaml").tables[0], {})
    payment = {"PK": {"S": "Invoice-0123"}, "SK": {"S": "Payment-0680"}, "DateCreated": {"S": "2023-09-10T15:21:40"},
               "Details": {"M": {"amount_usd": {"N": "120"}}}}
    written = codec.encode(payment, write_time_micros=WRITE, now_micros=NOW, replace=True)
    assert written.key == b"0123"
    assert written.mutations[0] == DeleteCells("Payment", b"0680")
    assert codec.delete({"PK": payment["PK"], "SK": payment["SK"]}) == RowMutation(
        b"0123", (DeleteCells("Payment", b"0680"),))


def test_comment_versions_need_their_time_to_be_deleted():
    codec = Codec(read_spec(ROOT / "specs" / "video-single-table.yaml").tables[0], {})
    keys = {"VideoId": {"S": "0123"}, "SK": {"S": "VideoComment#98765481"}}
    with pytest.raises(CodecError, match="PostedAt"):
        codec.delete(keys)
    ts = 1694372475000000  # 2023-09-10T19:01:15Z
    assert codec.delete({**keys, "PostedAt": {"S": "2023-09-10T19:01:15"}}) == RowMutation(
        b"0123", (DeleteCells("UserComments", b"Content", ts, ts + 1000),))
    comment = {**keys, "PostedAt": {"S": "2023-09-10T19:01:15"}, "Content": {"S": "hi"}}
    written = codec.encode(comment, write_time_micros=WRITE, now_micros=NOW, replace=True)
    assert [type(m) for m in written.mutations] == [SetCell]  # other comments share the column: keep them


# --- limits -------------------------------------------------------------------------------

def test_cell_and_qualifier_limits():
    codec = Codec(table(), {})
    with pytest.raises(CodecError, match="100 MiB"):
        codec.encode({"pk": {"S": "p"}, "sk": {"S": "s"}, "v": {"B": b"x" * (100 * 1024 * 1024 + 1)}},
                     write_time_micros=WRITE, now_micros=NOW)
    with pytest.raises(CodecError, match="16 KiB"):
        codec.encode({"pk": {"S": "p"}, "sk": {"S": "s"}, "q" * (16 * 1024 + 1): {"S": "v"}},
                     write_time_micros=WRITE, now_micros=NOW)


# --- rules beyond the seeds ---------------------------------------------------------------

def test_rule_without_value_keeps_every_attribute_under_a_qualifier_prefix():
    rule = MappingRule(sort_key_prefix="order#", row_key="{pk}", qualifier="{sk}")
    t = table(rules=[rule])
    items = [{"pk": {"S": "c1"}, "sk": {"S": f"order#{i}"}, "total": {"N": str(i)}, "tags": {"SS": ["a"]}}
             for i in (7, 8)]
    codec = Codec(t, infer_types(items, t))
    cells = []
    for item in items:
        written = codec.encode(item, write_time_micros=WRITE, now_micros=NOW)
        assert written.key == b"c1"
        cells += cells_of(written)
    assert {c.qualifier for c in cells} == {b"7#total", b"7#tags", b"8#total", b"8#tags"}
    got = sorted(codec.decode(b"c1", cells), key=lambda i: i["sk"]["S"])
    assert got == items
    other = {"pk": {"S": "c1"}, "sk": {"S": "profile"}, "name": {"S": "Ann"}}  # matches no rule: default mapping
    assert codec.encode(other, write_time_micros=WRITE, now_micros=NOW).key == b"c1#profile"


def test_template_placeholder_absent_is_a_codec_error():
    t = table(rules=[MappingRule(sort_key_prefix="x", row_key="{pk}-{region}", value="v")])
    with pytest.raises(CodecError, match="region"):
        Codec(t, {}).encode({"pk": {"S": "p"}, "sk": {"S": "x1"}, "v": {"S": "1"}}, write_time_micros=WRITE,
                            now_micros=NOW)


def test_default_mapping_is_not_lossy():
    assert Codec(table(), {}).lossy == ()
    assert Codec(table(attributes=LAYOUTS, families=LAYOUT_FAMILIES), {}).lossy == (
        "counters (hits) are stored as int64 and come back as plain integers (a value written 3.0 comes back as 3)",)


# --- Movies -------------------------------------------------------------------------------

def _typed(value):
    if isinstance(value, dict):
        return {"M": {k: _typed(v) for k, v in value.items()}}
    if isinstance(value, list):
        return {"L": [_typed(v) for v in value]}
    if isinstance(value, str) and getattr(value, "number", False):
        return {"N": str(value)}
    return {"S": value}


class _Number(str):
    number = True


def movies() -> list[dict]:
    raw = json.loads(gzip.decompress((ROOT / "exports" / "sources" / "moviedata.json.gz").read_bytes()),
                     parse_int=_Number, parse_float=_Number)
    return [{k: _typed(v) for k, v in movie.items()} for movie in raw]


MOVIES = ROOT / "specs" / "movies.yaml"


def test_every_movie_round_trips_into_its_own_row_in_year_order():
    t = read_spec(MOVIES).tables[0]
    items = movies()
    codec = Codec(t, infer_types(items, t))
    assert codec.stored("info") == "M"
    rows = {}
    for item in items:
        written = codec.encode(item, write_time_micros=WRITE, now_micros=NOW)
        assert written.key not in rows
        rows[written.key] = item
        assert codec.decode(written.key, cells_of(written)) == [item]
    assert len(rows) == len(items) == 4609
    years = [int(rows[k]["year"]["N"]) for k in sorted(rows)]
    assert years == sorted(years)


@given(st.text(alphabet="ab#\\%é ", min_size=1, max_size=10), st.integers(1900, 2030),
       st.lists(st.decimals(allow_nan=False, allow_infinity=False, places=3), max_size=4))
def test_movies_like_items_round_trip_exactly(title, year, ratings):
    t = read_spec(MOVIES).tables[0]
    item = {"year": {"N": str(year)}, "title": {"S": title},
            "info": {"M": {"rating": {"N": "8.30"}, "ratings": {"L": [{"N": str(r)} for r in ratings]},
                           "cast": {"L": [{"M": {"name": {"S": title}, "age": {"N": "1E+1"}}}]},
                           "plot": {"NULL": True}}}}
    codec = Codec(t, infer_types([item], t))
    assert round_trip(codec, item) == [item]
    assert codec.row_key(item) == f"d{year}#".encode() + title.encode()


def test_an_expired_replacement_carries_the_delete_of_its_previous_version():
    codec = ttl_codec()
    item = {"pk": {"S": "p"}, "sk": {"S": "s"}, "expiresAt": {"N": str(NOW // 1_000_000 - 60)}}
    got = codec.encode(item, write_time_micros=WRITE, now_micros=NOW, replace=True)
    assert got == Expired(NOW - 60 * 10**6, RowMutation(b"p#s", (DeleteRow(),)))


def test_keys_only_items_keep_a_marker_cell():
    codec = Codec(table(), {})
    item = {"pk": {"S": "p"}, "sk": {"S": "s"}}
    written = codec.encode(item, write_time_micros=WRITE, now_micros=NOW)
    assert cells_of(written) == [Cell("cf", b"", b"", WRITE // 1000 * 1000)]
    assert codec.decode(written.key, cells_of(written)) == [item]


def test_declared_types_win_over_the_data():
    t = table(attributes=[AttributeMapping("price", "S"), AttributeMapping("doc", "M")])
    items = [{"pk": {"S": "p"}, "sk": {"S": "s"}, "price": {"N": "1"}, "doc": {"M": {"x": {"N": "1"}}}}]
    assert infer_types(items, t) == {"pk": "S", "sk": "S", "price": "S", "doc": "M"}
    items[0]["doc"] = {"M": {"x": {"BS": [b"1"]}}}
    assert infer_types(items, t)["doc"] == "mixed"  # plain JSON cannot hold a binary set


def test_a_layout_the_data_does_not_fit_is_a_note_not_a_loss():
    t = table(attributes=[AttributeMapping("tags", None, "family", "tags")], families=[FamilyMapping("tags")])
    items = [{"pk": {"S": "p"}, "sk": {"S": str(i)}, "tags": v} for i, v in enumerate([{"SS": ["a"]}, {"S": "a"}])]
    codec = Codec(t, infer_types(items, t))
    assert codec.notes and "tags" in codec.notes[0] and codec.lossy == ()
    for item in items:
        assert round_trip(codec, item) == [item]


INVOICES = ROOT / "specs" / "invoices-adjacency.yaml"
plain_values = st.recursive(
    st.one_of(st.text(max_size=8).map(lambda s: {"S": s}), numbers.map(lambda n: {"N": n}),
              st.booleans().map(lambda b: {"BOOL": b}), st.just({"NULL": True})),
    lambda inner: st.one_of(st.dictionaries(st.text(max_size=5), inner, max_size=3).map(lambda d: {"M": d}),
                            st.lists(inner, max_size=3).map(lambda x: {"L": x})),
    max_leaves=8)


@settings(max_examples=100)
@given(st.text(min_size=1, max_size=10), st.lists(st.text(min_size=1, max_size=10), unique=True, max_size=4),
       st.dictionaries(st.text(max_size=6), plain_values, max_size=4),
       st.datetimes(min_value=datetime(1971, 1, 1)).map(lambda d: d.replace(microsecond=d.microsecond // 1000 * 1000)))
def test_adjacency_rows_round_trip_any_ids(invoice, payments, details, created):
    """Any invoice and payment ids, any details, any DateCreated written the canonical way."""
    t = read_spec(INVOICES).tables[0]
    date = {"S": created.isoformat(timespec="milliseconds" if created.microsecond else "seconds")}
    pk = {"S": f"Invoice-{invoice}"}
    items = [{"PK": pk, "SK": pk, "DateCreated": date, "Details": {"M": details}}]
    items += [{"PK": pk, "SK": {"S": f"Payment-{p}"}, "DateCreated": date, "Details": {"M": details}} for p in payments]
    codec = Codec(t, infer_types(items, t))
    cells, keys = [], set()
    for item in items:
        written = codec.encode(item, write_time_micros=WRITE, now_micros=NOW)
        keys.add(written.key)
        cells += cells_of(written)
    assert keys == {invoice.encode()}
    assert sorted(codec.decode(invoice.encode(), cells), key=repr) == sorted(items, key=repr)
    assert all(codec.expected(item, now_micros=NOW) == item for item in items)


def test_cells_of_serves_reserved_families_are_no_items_cells():
    """A row locked by a transaction in serve, holding a ClientRequestToken record, or
    holding its changes' stream records (docs/streams.md), decodes to the same items for
    every reader of rows (load's verify, replicate, cutover check, serve's DescribeTable
    count): the families are serve's, and no mapping can write them."""
    from ddb2bigtable.spec.families import STREAM_FAMILY, TXN_FAMILY

    item = {"pk": {"S": "a"}, "sk": {"S": "b"}, "n": {"N": "1"}}
    codec = Codec(table(), infer_types([item], table()))
    written = codec.encode(item, write_time_micros=WRITE, now_micros=NOW)
    assert isinstance(written, RowMutation)
    reserved = [Cell(TXN_FAMILY, q, b"x", 0) for q in (b"lock", b"txn", b"intent", b"token:t1")]
    reserved.append(Cell(STREAM_FAMILY, b"\xff\xff\xff\xfe", b'{"eventName": "INSERT"}', 0))
    assert codec.decode(written.key, cells_of(written) + reserved) == codec.decode(written.key, cells_of(written))
    assert codec.decode(written.key, reserved) == []
