"""Query's ExclusiveStartKey must lie within its key condition, as DynamoDB requires: one
from another partition or outside the sort key's condition is refused (it was a 500 when
the range's start passed its end, and a page read from elsewhere otherwise)."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

TABLE = "QueryStarts"


@pytest.fixture()
def client(served):
    client = served.client()
    client.create_table(TableName=TABLE, BillingMode="PAY_PER_REQUEST",
                        KeySchema=[{"AttributeName": "p", "KeyType": "HASH"}, {"AttributeName": "c", "KeyType": "RANGE"}],
                        AttributeDefinitions=[{"AttributeName": "p", "AttributeType": "S"},
                                              {"AttributeName": "c", "AttributeType": "N"}])
    for p in ("a", "b"):
        for c in range(12):
            client.put_item(TableName=TABLE, Item={"p": {"S": p}, "c": {"N": str(c)}})
    yield client
    client.delete_table(TableName=TABLE)


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
