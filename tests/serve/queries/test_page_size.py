"""A Query or Scan page stops at Limit or at 1 MB of items as DynamoDB sizes them
(paging.take): the same page whether or not the items' JSON lets it skip the exact sizing."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ddb2bigtable.serve.queries import paging
from ddb2bigtable.serve.wire import item_bytes


def exact(items, limit):
    """The page by each item's exact size, as take made it before its JSON bound."""
    taken, size = [], 0
    for item in items:
        if (limit is not None and len(taken) >= limit) or size >= paging.PAGE_BYTES:
            return taken, True
        taken.append(item)
        size += item_bytes(item)
    return taken, False


VALUES = st.one_of(st.builds(lambda s: {"S": s}, st.text(max_size=20)), st.builds(lambda b: {"B": b}, st.binary()),
                   st.builds(lambda n: {"N": str(n)}, st.integers()), st.just({"BOOL": True}),
                   st.builds(lambda m: {"M": m}, st.dictionaries(st.text(max_size=5), st.just({"NULL": True}))))


@given(st.lists(st.dictionaries(st.text(min_size=1, max_size=8), VALUES, min_size=1, max_size=4), max_size=30),
       st.one_of(st.none(), st.integers(1, 40)))
def test_small_pages_stop_at_limit_as_before(items, limit):
    assert paging.take(items, limit) == exact(items, limit)


@pytest.mark.parametrize("limit", [None, 3, 30])
@pytest.mark.parametrize("big", [{"S": "x" * 100_000}, {"B": b"\x00" * 100_000}, {"L": [{"N": "12345678"}] * 10_000}])
def test_a_page_past_a_megabyte_stops_where_dynamodb_would(big, limit):
    """Items of about 100 KB each: the page ends once 1 MB is read, by the exact sizes."""
    items = [{"pk": {"S": str(i)}, "v": big} for i in range(20)]
    taken, more = paging.take(items, limit)
    assert (taken, more) == exact(items, limit)
    if limit is None or limit > 11:
        assert len(taken) < 20 and more
