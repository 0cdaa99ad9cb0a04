"""One rule for what a number is and one for binary text: the export reader, the codec's
value check, its cells and the row-key encoder give the same verdict on the same text (they
used three rules: the codec took `{"N": "abc"}`, row keys took Unicode digits, and the
stream reader read base64 with stray characters as other bytes)."""

from __future__ import annotations

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ddb2bigtable.codec.cell_values import decode_value
from ddb2bigtable.codec.mutations import CodecError
from ddb2bigtable.codec.row_keys import parse_number
from ddb2bigtable.codec.scalars import binary_from_text, binary_text, is_number, is_plain_json_number
from ddb2bigtable.codec.value_forms import check_value, from_typed_json
from ddb2bigtable.exports.json_lines import BadLine, json_item
from ddb2bigtable.replicate.stream_records import parse_record

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


base64_like = st.one_of(
    st.text(alphabet="ABCDEFabcdef0123456789+/=-_ \n", max_size=12),
    st.sampled_from(["", "AA==", "AAA=", "AAAA", "A", "AA=", "AA==AA==", "QUJD", "QUJD\n", "QU JD", "Q-_D", "é"]),
)


def _binary_verdicts(text: str) -> tuple[bool, bool, bool, bool]:
    """The export reader (B), a typed-JSON cell (B), a binary-set cell (BS) and a stream
    record's keys (B) on one text."""
    def accepted(read) -> bool:
        try:
            read()
        except (CodecError, BadLine, ValueError):
            return False
        return True
    return (accepted(lambda: json_item({"b": {"B": text}}, "Item")),
            accepted(lambda: from_typed_json(orjson.dumps({"B": text}))),
            accepted(lambda: decode_value(orjson.dumps([text]), "BS")),
            accepted(lambda: parse_record("shard", {"eventName": "INSERT", "dynamodb": {
                "ApproximateCreationDateTime": 0, "SequenceNumber": "1", "Keys": {"b": {"B": text}}}})))


@settings(max_examples=400, derandomize=True)
@given(base64_like)
def test_every_entry_point_agrees_on_what_binary_text_is(text):
    def strict(value: str) -> bool:
        try:
            binary_from_text(value)
        except ValueError:
            return False
        return True
    assert _binary_verdicts(text) == (strict(text),) * 4, text


def test_binary_text_round_trips_and_refuses_stray_characters():
    assert binary_from_text(binary_text(b"\x00\xff abc")) == b"\x00\xff abc"
    with pytest.raises(ValueError):
        binary_from_text("QU JD")  # a space would otherwise be dropped and other bytes read
