"""The legacy parameters (before expressions) served through their expression form."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

T = "Scratch"


def key(n: int) -> dict:
    return {"pk": {"S": "legacy"}, "sk": {"N": str(n)}}


@pytest.fixture(scope="module")
def c(served):
    client = served.client()
    for n in range(5):
        client.put_item(TableName=T, Item={**key(n), "a": {"N": str(n)}, "tag": {"S": "even" if n % 2 == 0 else "odd"},
                                           "tags": {"SS": ["x", f"t{n}"]}})
    return client


def test_attribute_updates_put_add_delete(c):
    c.update_item(TableName=T, Key=key(0), AttributeUpdates={
        "a": {"Action": "ADD", "Value": {"N": "10"}}, "tag": {"Action": "DELETE"},
        "tags": {"Action": "DELETE", "Value": {"SS": ["x"]}}, "new": {"Action": "PUT", "Value": {"S": "v"}}})
    item = c.get_item(TableName=T, Key=key(0), AttributesToGet=["a", "tags", "new", "tag"])["Item"]
    assert item == {"a": {"N": "10"}, "tags": {"SS": ["t0"]}, "new": {"S": "v"}}


def test_expected_is_a_condition(c):
    with pytest.raises(ClientError) as caught:
        c.put_item(TableName=T, Item=key(1), Expected={"tag": {"Value": {"S": "even"}}})
    assert caught.value.response["Error"]["Code"] == "ConditionalCheckFailedException"
    c.delete_item(TableName=T, Key=key(4), Expected={"tag": {"ComparisonOperator": "EQ",
                                                             "AttributeValueList": [{"S": "even"}]},
                                                     "gone": {"Exists": False}}, ConditionalOperator="AND")
    assert "Item" not in c.get_item(TableName=T, Key=key(4))


def test_key_conditions_and_query_filter(c):
    found = c.query(TableName=T, KeyConditions={
        "pk": {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "legacy"}]},
        "sk": {"ComparisonOperator": "BETWEEN", "AttributeValueList": [{"N": "1"}, {"N": "3"}]}},
        QueryFilter={"tag": {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "odd"}]}})
    assert [i["sk"]["N"] for i in found["Items"]] == ["1", "3"] and found["ScannedCount"] == 3


def test_scan_filter_with_or(c):
    found = c.scan(TableName=T, ScanFilter={
        "pk": {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "legacy"}]},
        "a": {"ComparisonOperator": "IN", "AttributeValueList": [{"N": "2"}, {"N": "3"}]}}, ConditionalOperator="AND")
    assert sorted(i["sk"]["N"] for i in found["Items"]) == ["2", "3"]


def test_batch_get_with_attributes_to_get(c):
    got = c.batch_get_item(RequestItems={T: {"Keys": [key(2), key(3)], "AttributesToGet": ["tag"]}})
    assert sorted(i["tag"]["S"] for i in got["Responses"][T]) == ["even", "odd"]
