"""Items answered by BatchGetItem, Query and Scan (`wire.answer_item`) are exactly what
`item_to_wire` makes of them, while only binary is converted (issue 54: copying every value
was half a BatchGetItem of 25's own time)."""

from __future__ import annotations

import copy

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from ddb2bigtable.serve.protocol.app import _payload
from ddb2bigtable.serve.wire import MAX_NESTING, answer_item, item_to_wire

from ...codec.test_codec import values

items = st.dictionaries(st.text(min_size=1, max_size=8), values(max_leaves=16), max_size=6)


@settings(max_examples=400, deadline=None)
@given(items)
def test_an_answered_item_is_the_wire_item(item: dict) -> None:
    """Any codec item, binary at any depth or none: the same answer, byte for byte as sent,
    and the codec's item is left as it was."""
    before = copy.deepcopy(item)
    answered = answer_item(item)
    assert answered == item_to_wire(item)
    assert orjson.dumps(answered) == orjson.dumps(item_to_wire(item))
    assert item == before


def test_only_binary_is_converted() -> None:
    """A value without binary is answered as the item holds it (no copy); one with binary,
    however deep, is converted to base64 text and the item keeps its bytes."""
    plain = {"M": {"tags": {"L": [{"S": "a"}, {"N": "1"}, {"SS": ["x"]}, {"NULL": True}]}, "ok": {"BOOL": True}}}
    deep = {"M": {"a": {"L": [{"M": {"b": {"L": [{"B": b"\x00\xff"}]}}}]}}}
    item = {"title": {"S": "Rush"}, "info": plain, "deep": deep, "set": {"BS": [b"\x01"]}, "raw": {"B": b"hi"}}
    answered = answer_item(item)
    assert answered["title"] is item["title"] and answered["info"] is plain
    assert answered["deep"] == {"M": {"a": {"L": [{"M": {"b": {"L": [{"B": "AP8="}]}}}]}}}
    assert answered["set"] == {"BS": ["AQ=="]} and answered["raw"] == {"B": "aGk="}
    assert deep["M"]["a"]["L"][0]["M"]["b"]["L"][0] == {"B": b"\x00\xff"}


def test_the_deepest_document_is_converted() -> None:
    """A document nested as deep as DynamoDB allows, binary at its bottom, is still converted."""
    value: dict = {"B": b"\x01"}
    for level in range(MAX_NESTING):
        value = {"M": {"x": value}} if level % 2 else {"L": [value]}
    assert answer_item({"doc": value}) == item_to_wire({"doc": value})


def test_a_value_json_cannot_write_is_converted_as_before() -> None:
    """Text orjson refuses (half a surrogate pair, which the stdlib writes for the answer) in a
    map is answered as item_to_wire answers it, not taken for binary-free."""
    item = {"doc": {"M": {"half": {"S": "\ud800"}, "list": {"L": [{"S": "ok"}]}}}}
    assert answer_item(item) == item_to_wire(item)


@settings(max_examples=400, deadline=None)
@given(items)
def test_an_item_answered_as_held_is_written_as_its_wire_item(item: dict) -> None:
    """GetItem, BatchGetItem and a page without a filter answer the codec's item as it is; the
    answer's one serialization writes its binary as base64 (wire.wire_default), byte for byte
    what the item's wire form writes, on orjson's path and on the stdlib's (half a surrogate pair)."""
    body = {"Responses": {"T": [item]}, "Item": item}
    wire = item_to_wire(item)
    assert _payload(body) == _payload({"Responses": {"T": [wire]}, "Item": wire})
    with_half_pair = {**body, "x": {"S": "\ud800"}}
    assert _payload(with_half_pair) == _payload({"Responses": {"T": [wire]}, "Item": wire, "x": {"S": "\ud800"}})
