"""DynamoDB's limit of 300 operators in one expression, and parentheses nested past it,
refused in DynamoDB's words before moto's recursive parser could fail on them."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

from ..client_calls import PARTITION_ONLY, created_table

TABLE = "ExpressionLimits"


@pytest.fixture(scope="module")
def client(served):
    with created_table(served, TABLE, PARTITION_ONLY) as client:
        client.put_item(TableName=TABLE, Item={"p": {"S": "k"}, "a": {"N": "1"}, "b": {"N": "2"}})
        yield client


def _update(client, condition: str):
    return client.update_item(TableName=TABLE, Key={"p": {"S": "k"}}, UpdateExpression="SET z = :v",
                              ConditionExpression=condition, ExpressionAttributeValues={":v": {"N": "1"}})


def _message(call) -> str:
    with pytest.raises(ClientError) as caught:
        call()
    assert caught.value.response["Error"]["Code"] == "ValidationException"
    return caught.value.response["Error"]["Message"]


def test_299_operators_pass_and_more_than_300_are_refused(client):
    _update(client, "a<b " + "or (a<b " * 149 + ")" * 149)  # 299 operators, nested 149 deep
    assert client.get_item(TableName=TABLE, Key={"p": {"S": "k"}})["Item"]["z"] == {"N": "1"}
    message = _message(lambda: _update(client, "a<b " + "or (a<b " * 454 + ")" * 454))
    assert message == "Invalid ConditionExpression: The expression contains too many operators; operator count: 909"
    assert "operator count: 1001" in _message(lambda: _update(client, "not " * 1000 + "a<b"))


def test_parentheses_nested_past_the_limit_are_refused_naming_the_expression(client):
    for condition in ("(" * 4096, "(" * 2046 + "a<b" + ")" * 2046):
        assert _message(lambda c=condition: _update(client, c)).startswith("Invalid ConditionExpression: The "
                                                                            "expression nests parentheses")
