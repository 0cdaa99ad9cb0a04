"""Query's ExclusiveStartKey must lie within its key condition, as DynamoDB requires: one
from another partition or outside the sort key's condition is refused (it was a 500 when
the range's start passed its end, and a page read from elsewhere otherwise)."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

from ..client_calls import PARTITION_AND_SORT, created_table

TABLE = "QueryStarts"


@pytest.fixture()
def client(served):
    with created_table(served, TABLE, PARTITION_AND_SORT) as client:
        for p in ("a", "b"):
            for c in range(12):
                client.put_item(TableName=TABLE, Item={"p": {"S": p}, "c": {"N": str(c)}})
        yield client


@pytest.mark.parametrize("forward", [True, False])
@pytest.mark.parametrize(("condition", "start"), [("p = :p AND c < :c", ("a", "15")), ("p = :p AND c < :c", ("a", "10")),
                                                  ("p = :p AND c > :c", ("a", "5")), ("p = :p", ("b", "5")),
                                                  ("p = :p AND c > :c", ("b", "11"))])
def test_a_start_outside_the_condition_is_refused(client, forward, condition, start):
    values = {":p": {"S": "a"}, **({":c": {"N": "10"}} if ":c" in condition else {})}
    with pytest.raises(ClientError) as caught:
        client.query(TableName=TABLE, KeyConditionExpression=condition, ExpressionAttributeValues=values,
                     ScanIndexForward=forward, ExclusiveStartKey={"p": {"S": start[0]}, "c": {"N": start[1]}})
    assert caught.value.response["Error"] == {
        "Code": "ValidationException", "Message": "The provided starting key does not match the range key predicate"}


def test_a_start_within_the_condition_pages_on(client):
    query = {"TableName": TABLE, "KeyConditionExpression": "p = :p AND c BETWEEN :a AND :b",
             "ExpressionAttributeValues": {":p": {"S": "a"}, ":a": {"N": "3"}, ":b": {"N": "9"}}}
    after = client.query(**query, ScanIndexForward=False, ExclusiveStartKey={"p": {"S": "a"}, "c": {"N": "6"}})
    assert [i["c"]["N"] for i in after["Items"]] == ["5", "4", "3"]


@pytest.mark.parametrize("forward", [True, False])
def test_an_index_start_outside_the_condition_is_refused(served, forward):
    """On an index it answered an empty page, so a client paging stopped early without a word."""
    c = served.client()
    c.create_table(TableName="QueryStartsIndex", BillingMode="PAY_PER_REQUEST",
                   KeySchema=[{"AttributeName": "p", "KeyType": "HASH"}],
                   AttributeDefinitions=[{"AttributeName": "p", "AttributeType": "S"},
                                         {"AttributeName": "g", "AttributeType": "S"},
                                         {"AttributeName": "n", "AttributeType": "N"}],
                   GlobalSecondaryIndexes=[{"IndexName": "by-g", "Projection": {"ProjectionType": "ALL"},
                                            "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"},
                                                          {"AttributeName": "n", "KeyType": "RANGE"}]}])
    try:
        for n in range(8):
            c.put_item(TableName="QueryStartsIndex", Item={"p": {"S": f"p{n}"}, "g": {"S": "ab"[n // 5]},
                                                           "n": {"N": str(n)}})
        query = {"TableName": "QueryStartsIndex", "IndexName": "by-g", "ScanIndexForward": forward,
                 "KeyConditionExpression": "g = :g AND n < :n",
                 "ExpressionAttributeValues": {":g": {"S": "a"}, ":n": {"N": "4"}}}
        for start in ({"p": {"S": "p4"}, "g": {"S": "a"}, "n": {"N": "4"}},
                      {"p": {"S": "p6"}, "g": {"S": "b"}, "n": {"N": "2"}}):
            with pytest.raises(ClientError, match="does not match the range key predicate"):
                c.query(**query, ExclusiveStartKey=start)
        inside = c.query(**query, ExclusiveStartKey={"p": {"S": "p2"}, "g": {"S": "a"}, "n": {"N": "2"}})
        assert [i["n"]["N"] for i in inside["Items"]] == (["3"] if forward else ["1", "0"])
    finally:
        c.delete_table(TableName="QueryStartsIndex")
