"""KeyConditionExpression read as DynamoDB reads it: the value may come first, and what
DynamoDB refuses is refused with its words (DynamoDB Local 1.25.1's answers below)."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

T = "Scratch"
P = {":p": {"S": "keyconditions"}}


@pytest.fixture(scope="module")
def c(served):
    client = served.client()
    for n in range(5):
        client.put_item(TableName=T, Item={"pk": P[":p"], "sk": {"N": str(n)}, "a": {"N": str(n)}})
    return client


def sort_keys(c, expression: str, values: dict) -> list[str]:
    found = c.query(TableName=T, KeyConditionExpression=expression, ExpressionAttributeValues={**P, **values})
    return [i["sk"]["N"] for i in found["Items"]]


def test_value_first(c):
    assert sort_keys(c, ":p = pk AND :n < sk", {":n": {"N": "2"}}) == ["3", "4"]
    assert sort_keys(c, "pk = :p AND :n >= sk", {":n": {"N": "1"}}) == ["0", "1"]
    assert sort_keys(c, "((sk = :n) AND (pk = :p))", {":n": {"N": "4"}}) == ["4"]


@pytest.mark.parametrize(("expression", "values", "message"), [
    ("pk = :p AND pk = :p", {}, "KeyConditionExpressions must only contain one condition per key"),
    ("pk = :p AND sk >= :n AND sk <= :n", {":n": {"N": "1"}},
     "KeyConditionExpressions must only contain one condition per key"),
    ("pk = :p AND sk <> :n", {":n": {"N": "1"}}, "Invalid operator used in KeyConditionExpression: <>"),
    ("pk = :p AND sk IN (:n)", {":n": {"N": "1"}}, "Invalid operator used in KeyConditionExpression: IN"),
    ("sk = :n OR pk = :p", {":n": {"N": "1"}}, "Invalid operator used in KeyConditionExpression: OR"),
    ("pk = :p AND attribute_exists(sk)", {}, "Invalid operator used in KeyConditionExpression: attribute_exists"),
    ("pk = :p AND a.b < :n", {":n": {"N": "1"}}, "KeyConditionExpressions cannot have conditions on nested attributes"),
    ("pk = :p AND size(sk) < :n", {":n": {"N": "1"}}, "KeyConditionExpressions cannot contain nested operations"),
    ("pk = sk", {}, "Invalid condition in KeyConditionExpression: Multiple attribute names used in one condition"),
    (":p = :n", {":n": {"N": "1"}}, "Invalid condition in KeyConditionExpression: No key attribute specified"),
    ("pk = :p AND begins_with(sk, :n)", {":n": {"N": "1"}}, "Invalid KeyConditionExpression: Incorrect operand type "
     "for operator or function; operator or function: begins_with, operand type: N"),
    ("pk = :p AND dog(sk, :n)", {":n": {"N": "1"}}, "Invalid KeyConditionExpression: Invalid function name; "
     "function: dog"),
    ("", None, "Invalid KeyConditionExpression: The expression can not be empty;"),
])
def test_refused_in_dynamodbs_words(c, expression, values, message):
    extra = {"ExpressionAttributeValues": {k: v for k, v in {**P, **values}.items() if k in expression}} \
        if values is not None else {}
    with pytest.raises(ClientError) as caught:
        c.query(TableName=T, KeyConditionExpression=expression, **extra)
    assert caught.value.response["Error"]["Message"] == message


def test_undefined_placeholders_named(c):
    with pytest.raises(ClientError, match="attribute value used in expression is not defined; attribute value: :p"):
        c.query(TableName=T, KeyConditionExpression="pk = :p")
    with pytest.raises(ClientError, match="document path is not defined; attribute name: #s"):
        c.query(TableName=T, KeyConditionExpression="pk = :p AND #s = :p", ExpressionAttributeValues=P)


@pytest.mark.parametrize(("request_filter", "message"), [
    ({"FilterExpression": "sk = :p"}, "Filter Expression can only contain non-primary key attributes: Primary key "
                                      "attribute: sk"),
    ({"FilterExpression": "a = sk"}, "Filter Expression can only contain non-primary key attributes: Primary key "
                                     "attribute: sk"),
])
def test_query_filter_on_a_key_refused(c, request_filter, message):
    with pytest.raises(ClientError) as caught:
        c.query(TableName=T, KeyConditionExpression="pk = :p", ExpressionAttributeValues=P
                if ":p" in request_filter["FilterExpression"] else {**P}, **request_filter)
    assert caught.value.response["Error"]["Message"] == message


def test_legacy_query_filter_on_a_key_refused(c):
    with pytest.raises(ClientError, match="QueryFilter can only contain non-primary key attributes: Primary key "
                                          "attribute: sk"):
        c.query(TableName=T, KeyConditions={"pk": {"ComparisonOperator": "EQ", "AttributeValueList": [P[":p"]]}},
                QueryFilter={"sk": {"ComparisonOperator": "GT", "AttributeValueList": [{"N": "1"}]}})
