"""Query and Scan on a global secondary index, answered from the table on emulator stages
(cloud stages read the plan's view: test_views_wire.py)."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

INDEX = {"TableName": "Scratch", "IndexName": "by-color"}


@pytest.fixture(scope="module")
def shirts(served):
    client = served.client()
    for n, (color, size) in enumerate([("red", 3), ("red", 1), ("blue", 2), ("red", 2), (None, 5)]):
        item = {"pk": {"S": "shirt"}, "sk": {"N": str(n)}, "price": {"N": str(10 + n)}}
        if color:
            item |= {"color": {"S": color}, "size": {"N": str(size)}}
        client.put_item(TableName="Scratch", Item=item)
    return client


def test_query_an_index_in_its_key_order_with_its_projection(shirts):
    red = shirts.query(**INDEX, KeyConditionExpression="color = :c", ExpressionAttributeValues={":c": {"S": "red"}})
    assert [(i["size"]["N"], i["sk"]["N"]) for i in red["Items"]] == [("1", "1"), ("2", "3"), ("3", "0")]
    assert all(set(i) == {"pk", "sk", "color", "size"} for i in red["Items"])  # keys_only: no price
    big = shirts.query(**INDEX, KeyConditionExpression="color = :c AND size >= :s", ScanIndexForward=False,
                       ExpressionAttributeValues={":c": {"S": "red"}, ":s": {"N": "2"}}, Limit=1)
    assert [i["size"]["N"] for i in big["Items"]] == ["3"]
    assert big["LastEvaluatedKey"] == {"pk": {"S": "shirt"}, "sk": {"N": "0"}, "color": {"S": "red"},
                                       "size": {"N": "3"}}
    rest = shirts.query(**INDEX, KeyConditionExpression="color = :c AND size >= :s", ScanIndexForward=False,
                        ExpressionAttributeValues={":c": {"S": "red"}, ":s": {"N": "2"}},
                        ExclusiveStartKey=big["LastEvaluatedKey"])
    assert [i["size"]["N"] for i in rest["Items"]] == ["2"] and "LastEvaluatedKey" not in rest


def test_scan_an_index_holds_only_items_with_its_keys(shirts):
    found = shirts.scan(**INDEX, FilterExpression="pk = :p", ExpressionAttributeValues={":p": {"S": "shirt"}})
    assert sorted(int(i["sk"]["N"]) for i in found["Items"]) == [0, 1, 2, 3]  # the colourless shirt is not indexed


def test_an_index_refuses_what_dynamodb_refuses(shirts):
    with pytest.raises(ClientError) as caught:
        shirts.query(**INDEX, KeyConditionExpression="color = :c", ConsistentRead=True,
                     ExpressionAttributeValues={":c": {"S": "red"}})
    assert "Consistent reads are not supported" in caught.value.response["Error"]["Message"]
    with pytest.raises(ClientError) as caught:
        shirts.query(TableName="Scratch", IndexName="nope", KeyConditionExpression="color = :c",
                     ExpressionAttributeValues={":c": {"S": "red"}})
    assert caught.value.response["Error"]["Code"] == "ValidationException"
    assert "specified index" in caught.value.response["Error"]["Message"]


def test_describe_table_lists_the_index(served):
    table = served.client().describe_table(TableName="Scratch")["Table"]
    (index,) = table["GlobalSecondaryIndexes"]
    assert index["IndexName"] == "by-color" and index["IndexStatus"] == "ACTIVE"
    assert index["KeySchema"] == [{"AttributeName": "color", "KeyType": "HASH"},
                                  {"AttributeName": "size", "KeyType": "RANGE"}]
    assert index["Projection"] == {"ProjectionType": "KEYS_ONLY"}
    assert {"AttributeName": "color", "AttributeType": "S"} in table["AttributeDefinitions"]
