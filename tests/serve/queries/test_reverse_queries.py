"""`ScanIndexForward: false` through serve: pages equal the forward answer reversed, for
every sort-key condition and across pages; a page reads only the rows it returns
(Bigtable's reverse scan, on the emulator); where a server refuses reverse scans the
forward read is reversed instead, with the same answer."""

from __future__ import annotations

from functools import partial

import pytest

from ..client_calls import pages
from ..in_process import answered
from .test_query_scan_batch import movies_of

CONDITIONS = [
    ("", {}),
    (" AND title BETWEEN :a AND :b", {":a": {"S": "G"}, ":b": {"S": "S"}}),
    (" AND title < :a", {":a": {"S": "M"}}),
    (" AND title <= :a", {":a": {"S": "Rush"}}),
    (" AND title > :a", {":a": {"S": "Rush"}}),
    (" AND title >= :a", {":a": {"S": "M"}}),
    (" AND begins_with(title, :a)", {":a": {"S": "The"}}),
    (" AND title = :a", {":a": {"S": "Rush"}}),
]


def titles(page: dict) -> list[str]:
    return [i["title"]["S"] for i in page["Items"]]


def paged(client, limit: int, **query) -> list[str]:
    found = []
    for page in pages(partial(movies_of, client, 2013), Limit=limit, ScanIndexForward=False, **query):
        assert page["Count"] <= limit
        found += titles(page)
    return found


@pytest.mark.parametrize(("condition", "values"), CONDITIONS)
def test_reverse_pages_are_the_forward_answer_reversed(served, condition, values):
    c = served.client()
    forward = titles(movies_of(c, 2013, and_=condition, values=values))
    assert forward, condition
    whole = titles(movies_of(c, 2013, and_=condition, values=values, ScanIndexForward=False))
    assert whole == forward[::-1]
    assert paged(c, 7, and_=condition, values=values) == forward[::-1]
    assert paged(c, 1, and_=condition, values=values)[:3] == forward[::-1][:3]


def test_reverse_filter_counts_the_evaluated_items(served):
    c = served.client()
    forward = movies_of(c, 2013, FilterExpression="info.rating >= :r", values={":r": {"N": "7"}})["Items"]
    page = movies_of(c, 2013, Limit=20, ScanIndexForward=False, FilterExpression="info.rating >= :r",
                     values={":r": {"N": "7"}})
    assert page["ScannedCount"] == 20 and "LastEvaluatedKey" in page
    assert titles(page) == [t for t in titles({"Items": forward})[::-1] if t in titles(page)]
    assert page["LastEvaluatedKey"]["title"]["S"] <= titles(page)[-1]


def _in_process(served, body: dict, monkeypatch, *, refuse: bool) -> tuple[dict, list[int], bool]:
    """The Query answered in this process (in_process.py), with the rows each read returned;
    `refuse`: the reverse-scan feature is not declared, so the emulator answers
    UNIMPLEMENTED as an older server would."""
    from google.cloud.bigtable_v2.types import FeatureFlags

    from ddb2bigtable.serve import reverse_rows
    from ddb2bigtable.serve.protocol.app import operation

    if refuse:
        monkeypatch.setattr(reverse_rows, "FEATURES", ("bigtable-features", reverse_rows.base64.urlsafe_b64encode(
            FeatureFlags.serialize(FeatureFlags(reverse_scans=False))).decode()))
    (found,), read, session = answered(served, operation("Query"), [body], monkeypatch)
    return found, read, session.store(session.catalog.get("Movies"), False).reverse_refused


REVERSE_5 = {"TableName": "Movies", "KeyConditionExpression": "#y = :y", "ExpressionAttributeNames": {"#y": "year"},
             "ExpressionAttributeValues": {":y": {"N": "2013"}}, "ScanIndexForward": False, "Limit": 5}


def test_a_reverse_page_reads_only_its_rows(served, monkeypatch):
    through_serve = served.client().query(**REVERSE_5)
    found, read, refused = _in_process(served, REVERSE_5, monkeypatch, refuse=False)
    assert read == [5] and not refused
    assert titles(found) == titles(through_serve) and found["LastEvaluatedKey"] == through_serve["LastEvaluatedKey"]


def test_a_server_refusing_reverse_scans_gets_the_same_page(served, monkeypatch):
    through_serve = served.client().query(**REVERSE_5)
    found, read, refused = _in_process(served, REVERSE_5, monkeypatch, refuse=True)
    everything = len(movies_of(served.client(), 2013)["Items"])
    assert refused and read[0] == -1 and sum(read[1:]) == everything  # refused, then the partition read forward
    assert titles(found) == titles(through_serve) and found["LastEvaluatedKey"] == through_serve["LastEvaluatedKey"]
