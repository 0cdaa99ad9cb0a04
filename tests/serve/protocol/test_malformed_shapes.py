"""A member of the wrong JSON type (a number where a list goes, a list where a map goes, a
map where a table name goes) is a 400 in DynamoDB's shape, never a 500: each of these was
a 500 with a traceback in serve's log."""

from __future__ import annotations

import json

import pytest

from .test_protocol import raw

CREATE = {"Create": {"IndexName": "by-h", "KeySchema": [{"AttributeName": "h", "KeyType": "HASH"}],
                     "Projection": {"ProjectionType": "ALL"}}}


@pytest.mark.parametrize(("operation", "body"), [
    ("DescribeTimeToLive", {"TableName": {"S": "Movies"}}),
    ("TransactGetItems", {"TransactItems": [{"Get": {"TableName": ["Movies"], "Key": {}}}]}),
    ("TransactWriteItems", {"TransactItems": 1.5}),
    ("BatchGetItem", {"RequestItems": {"Movies": {"Keys": True}}, "ReturnConsumedCapacity": "TOTAL"}),
    ("BatchWriteItem", {"RequestItems": {"Movies": 1.5}}),
    ("BatchWriteItem", {"RequestItems": {"Movies": [{"PutRequest": [1]}]}}),
    ("UpdateItem", {"TableName": "Scratch", "Key": {"pk": {"S": "m"}, "sk": {"N": "1"}}, "UpdateExpression": [1]}),
    ("ListTables", {"ExclusiveStartTableName": {"S": "a"}}),
    ("Query", {"TableName": "Scratch", "KeyConditions": {"pk": {"ComparisonOperator": "EQ", "AttributeValueList": 1.5}}}),
])
def test_a_member_of_the_wrong_json_type_is_a_400(served, operation, body):
    status, answer = raw(served.endpoint, f"DynamoDB_20120810.{operation}", json.dumps(body).encode())
    assert 400 <= status < 500, answer
    assert answer["__type"].split("#")[1] in ("SerializationException", "ValidationException",
                                              "ResourceNotFoundException")


def test_attribute_definitions_of_the_wrong_type_in_an_index_create_is_a_400(served):
    client = served.client()
    client.create_table(TableName="MalformedShapes", BillingMode="PAY_PER_REQUEST",
                        KeySchema=[{"AttributeName": "p", "KeyType": "HASH"}],
                        AttributeDefinitions=[{"AttributeName": "p", "AttributeType": "S"}])
    try:
        body = {"TableName": "MalformedShapes", "AttributeDefinitions": 7, "GlobalSecondaryIndexUpdates": [CREATE]}
        status, answer = raw(served.endpoint, "DynamoDB_20120810.UpdateTable", json.dumps(body).encode())
        assert status == 400 and "not defined in AttributeDefinitions" in answer["message"], answer
    finally:
        client.delete_table(TableName="MalformedShapes")


def test_a_null_index_list_in_create_table_is_no_index(served):
    """It was a 500 after the table's registry row was checked."""
    body = {"TableName": "MalformedNull", "BillingMode": "PAY_PER_REQUEST", "GlobalSecondaryIndexes": None,
            "KeySchema": [{"AttributeName": "p", "KeyType": "HASH"}],
            "AttributeDefinitions": [{"AttributeName": "p", "AttributeType": "S"}]}
    status, answer = raw(served.endpoint, "DynamoDB_20120810.CreateTable", json.dumps(body).encode())
    assert status == 200, answer
    served.client().delete_table(TableName="MalformedNull")


DEFINED = [{"AttributeName": "h", "AttributeType": "S"}]


@pytest.mark.parametrize(("update", "definitions", "words"), [
    ({"Create": CREATE["Create"] | {"KeySchema": 5}}, DEFINED, "No defined key schema"),
    ({"Create": CREATE["Create"] | {"KeySchema": "h"}}, DEFINED, "No defined key schema"),
    ({"Create": {k: v for k, v in CREATE["Create"].items() if k != "KeySchema"}}, DEFINED, "No defined key schema"),
    ({"Create": CREATE["Create"] | {"KeySchema": [{"AttributeName": ["h"], "KeyType": "HASH"}]}}, DEFINED,
     "keySchema.1.member.attributeName"),
    (CREATE, [{"AttributeName": ["h"], "AttributeType": "S"}], "not defined in AttributeDefinitions"),
])
def test_an_index_create_with_a_malformed_key_schema_is_a_400(served, update, definitions, words):
    """Each was a 500 once the table was found: the new definition's attributes were read
    from the schema and the definitions before CreateTable's checks could say what is wrong."""
    client = served.client()
    client.create_table(TableName="MalformedKeys", BillingMode="PAY_PER_REQUEST",
                        KeySchema=[{"AttributeName": "p", "KeyType": "HASH"}],
                        AttributeDefinitions=[{"AttributeName": "p", "AttributeType": "S"}])
    try:
        body = {"TableName": "MalformedKeys", "GlobalSecondaryIndexUpdates": [update],
                "AttributeDefinitions": definitions}
        status, answer = raw(served.endpoint, "DynamoDB_20120810.UpdateTable", json.dumps(body).encode())
        assert status == 400 and words in answer["message"], answer
        assert "GlobalSecondaryIndexes" not in client.describe_table(TableName="MalformedKeys")["Table"]
    finally:
        client.delete_table(TableName="MalformedKeys")
