"""An item is found by its key as DynamoDB compares keys (numbers by value), with equal values
taken as the same without reading numbers (session.same_key, issue 54)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ddb2bigtable.serve.session import key_text, same_key

numbers = st.sampled_from(["1", "1.0", "1.50", "1.5", "100", "1E+2", "-0", "0", "2013", "7e-3", "0.007"])
values = st.one_of(numbers.map(lambda n: {"N": n}), st.sampled_from(["1", "a", ""]).map(lambda s: {"S": s}),
                   st.sampled_from([b"1", b"a"]).map(lambda b: {"B": b}))
records = st.dictionaries(st.sampled_from(["pk", "sk", "x"]), values, max_size=3)


@settings(max_examples=500, deadline=None)
@given(records, records)
def test_same_key_compares_as_dynamodb_does(item: dict, key: dict) -> None:
    """Exactly when every key attribute is in the item with a value of the same type and, for a
    number, the same value however written."""
    expected = all(name in item and key_text(item[name]) == key_text(value) for name, value in key.items())
    assert same_key(item, key) == expected


def test_numbers_written_differently_are_the_same_key() -> None:
    assert same_key({"pk": {"N": "100"}, "sk": {"S": "a"}}, {"pk": {"N": "1E+2"}, "sk": {"S": "a"}})
    assert not same_key({"pk": {"N": "1"}}, {"pk": {"S": "1"}})
    assert not same_key({"sk": {"S": "a"}}, {"pk": {"S": "a"}})
