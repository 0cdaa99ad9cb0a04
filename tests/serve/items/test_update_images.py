"""An UpdateItem's new image made from the stored item (issue 54): the attributes the update
left as they were are taken from the stored item instead of converted again
(`wire.changed_to_codec`), and the item's size is checked on its JSON unless that is near the
limit (`wire.check_wire_size`). Both must answer exactly as the whole conversion and the
whole walk did."""

from __future__ import annotations

import base64

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ddb2bigtable.serve.errors import ServeError
from ddb2bigtable.serve.wire import (
    MAX_ITEM_BYTES,
    answer_item,
    changed_to_codec,
    check_size,
    check_wire_size,
    item_bytes,
    item_to_codec,
    item_to_wire,
)

from ...codec.test_codec import values

names = st.text(min_size=1, max_size=6)
stored_items = st.dictionaries(names, values(max_leaves=10), max_size=6).map(
    lambda item: item_to_codec(item_to_wire(item)))  # as stored: normalised, checked
wire_values = st.one_of(
    st.text(max_size=8).map(lambda s: {"S": s}),
    st.sampled_from(["1", "1.50", "-0", "1E+2", "007", "9.9E125"]).map(lambda n: {"N": n}),
    st.binary(max_size=6).map(lambda b: {"B": base64.b64encode(b).decode()}),
    st.just({"L": [{"N": "2.0"}, {"SS": ["a", "b"]}]}),
)


def _refusal(make) -> str | None:
    try:
        make()
    except ServeError as error:
        return error.message
    return None


@settings(max_examples=300, deadline=None)
@given(stored_items, st.data())
def test_an_updated_image_is_the_whole_conversion(stored: dict, data: st.DataObject) -> None:
    """Any stored item, some attributes replaced, removed or added with wire values (numbers
    to normalise, binary as base64, invalid ones among them): the same codec item as
    item_to_codec of the whole image, or the same refusal."""
    old = answer_item(stored) if data.draw(st.booleans()) else item_to_wire(stored)
    new = dict(old)
    for name in data.draw(st.lists(st.sampled_from(sorted(old)), max_size=3)) if old else []:
        if data.draw(st.booleans()):
            new.pop(name, None)
        else:
            new[name] = data.draw(wire_values)
    new.update(data.draw(st.dictionaries(names, wire_values | st.just({"N": "not a number"}), max_size=2)))
    refused = _refusal(lambda: item_to_codec(new))
    assert _refusal(lambda: changed_to_codec(new, old, stored)) == refused
    if refused is None:
        assert changed_to_codec(new, old, stored) == item_to_codec(new)
        assert list(changed_to_codec(new, old, stored)) == list(new)  # the image's order


def test_an_unchanged_attribute_is_the_stored_one() -> None:
    """Attributes the update did not touch are the stored item's own values (no conversion)."""
    stored = {"title": {"S": "Rush"}, "info": {"M": {"rating": {"N": "8.3"}}}, "raw": {"B": b"\x00"}}
    old = answer_item(stored)
    new = {**old, "plays": {"N": "1.0"}}
    made = changed_to_codec(new, old, stored)
    assert made["info"] is stored["info"] and made["raw"] is stored["raw"]
    assert made["plays"] == {"N": "1"}


@settings(max_examples=300, deadline=None)
@given(stored_items)
def test_an_items_json_bounds_its_size(item: dict) -> None:
    """The wire form's JSON is never fewer bytes than DynamoDB counts for the item."""
    wire = item_to_wire(item)
    try:
        written = orjson.dumps(wire)
    except TypeError:  # half a surrogate pair: check_wire_size walks the item instead
        return
    assert item_bytes(item) <= len(written)


@pytest.mark.parametrize("extra", [-2, -1, 0, 1, 2])
@pytest.mark.parametrize("text", ["x", "\u00e9", "\u65e5"])
def test_the_size_check_refuses_as_the_walk(extra: int, text: str) -> None:
    """Around DynamoDB's 400 KB, in one- to three-byte characters: refused exactly when the walk refuses."""
    room = MAX_ITEM_BYTES - len("doc") - len("n") - 2  # the number 1's count is 2
    length = room // len(text.encode()) + extra
    item = {"doc": {"S": text * length}, "n": {"N": "1"}}
    assert _refusal(lambda: check_wire_size(item_to_wire(item), item)) == _refusal(lambda: check_size(item))
