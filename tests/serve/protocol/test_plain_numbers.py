"""A number written as a plain integer is taken as written without normalising it
(wire.number's fast path, issue 54), exactly as the general path would take it."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ddb2bigtable.serve.errors import ServeError
from ddb2bigtable.serve.wire import number

integers = st.one_of(st.integers(-(10**45), 10**45).map(str),
                     st.from_regex(r"-?0[0-9]{0,40}", fullmatch=True),  # leading zeros: normalised
                     st.from_regex(r"[+-]?[0-9]{1,42}", fullmatch=True))


def _taken(text: str) -> str:
    try:
        return number(text, "Item.n")
    except ServeError as error:
        return f"refused: {error.name}: {error.message.replace(repr(text + 'E0'), repr(text))}"


@settings(max_examples=500, deadline=None)
@given(integers)
def test_an_integer_is_taken_as_the_general_path_takes_it(text: str) -> None:
    """`text` and `textE0` (the same number, which never takes the fast path) answer alike:
    the same normalised text, or the same refusal (39 digits and more)."""
    assert _taken(text) == _taken(text + "E0")


@pytest.mark.parametrize(("text", "taken"), [("2013", "2013"), ("-7", "-7"), ("1000", "1000"), ("007", "7"),
                                             ("-0", "0"), ("+5", "5"), ("1" * 38, "1" * 38)])
def test_integers_as_dynamodb_returns_them(text: str, taken: str) -> None:
    assert number(text, "Item.n") == taken
