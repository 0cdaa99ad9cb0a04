"""`Codec.encode` answers the same with and without the table's compiled encoder (#33).

The compiled encoder (`table_encoder`) takes the default mapping's items first and hands
anything it cannot answer exactly to the general path. Whoever encodes (the loader,
`serve`, `replicate`, `verify`'s expectations) must see the same row, the same `Expired`
or the same error either way, for items of any shape, any types recorded, TTL, salt and
replacement (incremental updates).
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ddb2bigtable.codec.codec import Codec, CodecError
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
    general._fast = None  # the general path alone, as before the compiled encoder
    return general


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
