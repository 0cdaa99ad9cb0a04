"""The stored record's layout in parts (records.stored, docs/streams.md "The stored record"):
GetRecords cuts the keys and images out of it without parsing them, answers byte for byte
what format 1's layout (the release before, kept 24 hours) answers for the same change, and
a reader of the release before, which parses the value whole, reads it as format 1."""

from __future__ import annotations

import time
from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from ddb2bigtable.serve.streams import records
from ddb2bigtable.serve.wire import item_bytes, item_to_wire

texts = st.text(max_size=6)  # any code point but half a surrogate pair: quotes, escapes, non-ASCII
numbers = st.sampled_from(["0", "7", "2013", "6.2", "-1", "1E+2", "0.1", "1" * 38])
binaries = st.binary(max_size=6)
scalars = st.one_of(texts.map(lambda s: {"S": s}), numbers.map(lambda n: {"N": n}), binaries.map(lambda b: {"B": b}),
                    st.booleans().map(lambda b: {"BOOL": b}), st.just({"NULL": True}),
                    st.lists(texts, min_size=1, max_size=3, unique=True).map(lambda m: {"SS": m}),
                    st.lists(numbers, min_size=1, max_size=3, unique=True).map(lambda m: {"NS": m}),
                    st.lists(binaries, min_size=1, max_size=3, unique=True).map(lambda m: {"BS": m}))
values = st.recursive(scalars, lambda inner: st.one_of(
    st.dictionaries(texts, inner, max_size=3).map(lambda m: {"M": m}),
    st.lists(inner, max_size=3).map(lambda m: {"L": m})), max_leaves=8)
keys = st.tuples(texts, binaries).map(lambda k: {"pk": {"S": k[0]}, "sk": {"B": k[1]}})
attributes = st.dictionaries(st.text(min_size=1, max_size=5).filter(lambda n: n not in ("pk", "sk")), values,
                             max_size=4)


def format_one(change: records.Change, view: str, event_id: str) -> bytes:
    """The value as the release before this layout (424ce5c) wrote it: one JSON object, its
    members in this order, no parts' lengths."""
    new, old = records.kept(change, view)
    value: dict[str, Any] = {"v": 1, "e": change.event, "id": event_id, "k": item_to_wire(change.keys),
                             "s": sum(item_bytes(p) for p in (change.keys, new, old) if p is not None)}
    if new is not None:
        value["n"] = item_to_wire(new)
    if old is not None:
        value["o"] = item_to_wire(old)
    if change.by_ttl:
        value["ttl"] = True
    return orjson.dumps(value)


def answered(value: bytes, view: str) -> bytes:
    """The Record GetRecords writes out for a stored value (the protocol writes with orjson)."""
    stored = records.parsed(value)
    assert stored is not None
    return orjson.dumps(records.stream_record(stored, view, "us-west-2", "1" * 37, 1_796_646_375_747_123))


@settings(max_examples=300, deadline=None)
@given(key=keys, before=st.none() | attributes, after=st.none() | attributes, view=st.sampled_from(records.VIEWS),
       by_ttl=st.booleans())
def test_getrecords_answers_both_layouts_byte_for_byte_alike(key, before, after, view, by_ttl) -> None:
    old = None if before is None else key | before
    new = None if after is None else key | after
    change = records.change(key, old, new, by_ttl=by_ttl)
    if change is None:
        return
    event_id = "5f0b6bd8-8d2e-4a0e-9a32-1c1d1b0b7c55"
    laid_out, whole = records.stored(change, view, event_id), format_one(change, view, event_id)
    assert answered(laid_out, view) == answered(whole, view)
    record = orjson.loads(answered(laid_out, view))["dynamodb"]
    assert record["Keys"] == item_to_wire(key)
    assert record.get("NewImage") == (item_to_wire(new) if new is not None and "NEW" in view else None)
    assert record.get("OldImage") == (item_to_wire(old) if old is not None and "OLD" in view else None)
    # cut out as stored, not parsed; the release before parses the value whole and keeps v = 1
    cut = records.parsed(laid_out)
    assert cut is not None and isinstance(cut.keys, orjson.Fragment)
    assert {k: v for k, v in orjson.loads(laid_out).items() if k != "p"} == orjson.loads(whole)


def test_a_value_that_does_not_hold_together_is_read_whole_or_left_out() -> None:
    """Parts' lengths that do not match the value (a value written by hand) are not trusted:
    the value is parsed whole, as format 1's; one that is not a record stays out."""
    change = records.change({"pk": {"S": "a"}}, None, {"pk": {"S": "a"}, "v": {"S": "x"}})
    assert change is not None
    value = records.stored(change, "NEW_AND_OLD_IMAGES", "id-1")
    lengths = value[len(b'{"v":1,"p":['):value.index(b"]")]
    for lie in (b"1,2,3", b"1,2", b"", lengths + b",4", b"-5,0,0"):
        lying = value.replace(lengths, lie, 1)
        back = records.parsed(lying)
        assert back is not None and not isinstance(back.keys, orjson.Fragment)
        assert orjson.loads(answered(lying, "NEW_AND_OLD_IMAGES")) == orjson.loads(answered(value, "NEW_AND_OLD_IMAGES"))
    for broken in (value[:-1], value[:40], value.replace(lengths, b"x", 1), b'{"v":1,"p":[3,0,0],"e":"INSERT","k":{}}', b'{"v":1,"p":[2,0,0],"k":{}}'):
        assert records.parsed(broken) is None


def test_serve_reads_both_layouts_side_by_side(streamed, arn) -> None:
    """One stream holding records of both layouts (format 1's written as the release before
    wrote them, within their 24 hours): boto3's GetRecords gives the same records for both,
    binary, sets and nested values included."""
    from google.cloud.bigtable.data import BigtableDataClient, SetCell

    from ddb2bigtable.serve.catalog import catalog

    from .conftest import STAGE, TABLE

    every = {"bin": {"B": b"\x00\xff"}, "bs": {"BS": [b"\x01", b"\x02"]}, "ss": {"SS": ["x", "\u00e9\""]},
             "ns": {"NS": ["1", "2.5"]}, "m": {"M": {"l": {"L": [{"N": "15"}, {"NULL": True}, {"M": {}}]}}},
             "ok": {"BOOL": False}, "e": {"S": ""}}
    served = catalog(streamed.root, STAGE, {}, streamed.project).tables["Orders"]
    table = BigtableDataClient(project=streamed.project).get_table(streamed.instance, TABLE)
    since = time.time()
    for layout, write in (("one", format_one), ("two", records.stored)):
        key = {"pk": {"S": f"layout-{layout}"}, "sk": {"N": "1"}}
        first = records.change(key, None, key | every)
        second = records.change(key, key | every, key | every | {"ok": {"BOOL": True}})
        assert first is not None and second is not None
        cells = [SetCell(records.FAMILY, records.qualifier(n), write(c, "NEW_AND_OLD_IMAGES", f"id-{n}"), -1)
                 for n, c in ((1, first), (2, second))]
        table.mutate_row(served.row_key(key), cells)
    streams = streamed.client()
    found: dict[str, list[dict]] = {}
    for shard in streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]:
        position = streams.get_shard_iterator(StreamArn=arn, ShardId=shard["ShardId"], ShardIteratorType="AT_TIMESTAMP",
                                              Timestamp=since - 1)
        for record in streams.get_records(ShardIterator=position["ShardIterator"])["Records"]:
            pk = record["dynamodb"]["Keys"]["pk"]["S"]
            if pk.startswith("layout-"):
                found.setdefault(pk, []).append(record)

    def alike(record: dict) -> dict:
        data = {k: v for k, v in record["dynamodb"].items() if k not in ("SequenceNumber", "ApproximateCreationDateTime")}
        return orjson.loads(orjson.dumps({**record, "dynamodb": data}, default=bytes.hex).replace(b"layout-two",
                                                                                                   b"layout-one"))
    assert [r["eventName"] for r in found["layout-one"]] == ["INSERT", "MODIFY"]
    assert found["layout-one"][1]["dynamodb"]["NewImage"]["bs"] == {"BS": [b"\x01", b"\x02"]}
    assert [alike(r) for r in found["layout-two"]] == [alike(r) for r in found["layout-one"]]
