"""One rule for what a number is: the export reader, the codec's value check and the
row-key encoder give the same verdict on the same text (they used three rules: the codec
took `{"N": "abc"}`, and row keys took Unicode digits)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ddb2bigtable.codec.mutations import CodecError
from ddb2bigtable.codec.numbers import is_number, is_plain_json_number
from ddb2bigtable.codec.row_keys import parse_number
from ddb2bigtable.codec.value_forms import check_value
from ddb2bigtable.exports.json_lines import BadLine, json_item

number_like = st.one_of(
    st.text(alphabet="0123456789+-.eE", max_size=8),
    st.sampled_from(["1", "-1.5", "1.", ".5", "1e5", "+7", "007", "abc", "", "٣", "1e", "--1", "1.2.3", " 1", "NaN"]),
)


def _verdicts(text: str) -> tuple[bool, bool, bool]:
    def accepted(check) -> bool:
        try:
            check()
        except (CodecError, BadLine) as error:
            # Row keys also refuse numbers beyond the exponents their ordered form encodes
            # (|e| > 999, far outside DynamoDB's own range): a range, not a syntax, verdict.
            return "out of range" in str(error)
        return True
    return (accepted(lambda: check_value({"N": text}, "n")),
            accepted(lambda: json_item({"n": {"N": text}}, "Item")),
            accepted(lambda: parse_number(text)))


@settings(max_examples=400, derandomize=True)
@given(number_like)
def test_every_entry_point_agrees_on_what_a_number_is(text):
    assert _verdicts(text) == (is_number(text),) * 3, text


@pytest.mark.parametrize("text,number,plain", [
    ("1", True, True), ("-0.5", True, True), ("1e-7", True, True), ("1.", True, False), (".5", True, False),
    ("+7", True, False), ("007", True, False), ("٣", False, False), ("abc", False, False), ("", False, False)])
def test_the_two_rules(text, number, plain):
    assert is_number(text) == number
    assert (number and is_plain_json_number(text)) == plain


def test_a_number_set_with_a_non_number_is_not_a_valid_value():
    with pytest.raises(CodecError):
        check_value({"NS": ["1", "x"]}, "n")
