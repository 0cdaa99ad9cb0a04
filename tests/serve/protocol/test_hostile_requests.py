"""Requests that made serve answer 500 (a fault of its own) now get DynamoDB's own 400
answer: an expression over DynamoDB's 4 KB limit (20,000 nested conditions were a
RecursionError in the parser), a number far beyond DynamoDB's range (an overflow in
Python's decimal context), and `list_append` of an attribute the item does not have
(an assertion inside moto's validator). Nothing is written by any of them."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

KEY = {"pk": {"S": "hostile"}, "sk": {"N": "1"}}


def _refused(call, *words: str) -> str:
    with pytest.raises(ClientError) as raised:
        call()
    error = raised.value.response
    assert error["ResponseMetadata"]["HTTPStatusCode"] == 400, error
    assert error["Error"]["Code"] == "ValidationException", error
    for word in words:
        assert word in error["Error"]["Message"], error
    return error["Error"]["Message"]


def test_an_expression_over_4_kb_is_refused_with_its_size(served):
    client = served.client()
    deep = "a < :v"
    for _ in range(20_000):
        deep = f"a < :v AND ({deep})"
    _refused(lambda: client.put_item(TableName="Scratch", Item={**KEY, "a": {"N": "1"}}, ConditionExpression=deep,
                                     ExpressionAttributeValues={":v": {"N": "2"}}),
             "Invalid ConditionExpression: Expression size has exceeded the maximum allowed size")
    nested = "(" * 2000 + "a < :v" + ")" * 2000  # under 4 KB, nested past any sensible parser depth
    client.put_item(TableName="Scratch", Item={**KEY, "a": {"N": "1"}})
    try:
        answer = client.delete_item(TableName="Scratch", Key=KEY, ConditionExpression=nested,
                                    ExpressionAttributeValues={":v": {"N": "2"}})
        assert answer["ResponseMetadata"]["HTTPStatusCode"] == 200  # read as DynamoDB would: the item goes
    except ClientError as error:
        assert error.response["ResponseMetadata"]["HTTPStatusCode"] == 400, error.response
    finally:
        client.delete_item(TableName="Scratch", Key=KEY)


def test_a_number_beyond_any_range_is_a_number_overflow(served):
    client = served.client()
    _refused(lambda: client.put_item(TableName="Scratch", Item={**KEY, "x": {"N": "1.0e100000000"}}),
             "Number overflow")
    _refused(lambda: client.update_item(TableName="Scratch", Key=KEY, UpdateExpression="SET x = :a + :b",
                                        ExpressionAttributeValues={":a": {"N": "1"}, ":b": {"N": "1.0e100000000"}}),
             "Number overflow")
    _refused(lambda: client.put_item(TableName="Scratch", Item={**KEY, "x": {"N": "1.0e-100000000"}}),
             "Number underflow")
    assert "Item" not in client.get_item(TableName="Scratch", Key=KEY)


def test_list_append_of_a_missing_attribute_says_so(served):
    client = served.client()
    client.put_item(TableName="Scratch", Item={**KEY, "a": {"L": [{"N": "1"}]}})
    try:
        _refused(lambda: client.update_item(TableName="Scratch", Key=KEY, UpdateExpression="SET a = list_append(:v, b)",
                                            ExpressionAttributeValues={":v": {"L": [{"N": "0"}]}}),
                 "refers to an attribute that does not exist in the item")
        assert client.get_item(TableName="Scratch", Key=KEY)["Item"]["a"] == {"L": [{"N": "1"}]}
    finally:
        client.delete_item(TableName="Scratch", Key=KEY)
