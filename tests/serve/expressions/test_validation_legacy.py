"""Legacy parameters next to expressions as DynamoDB takes them (DynamoDB Local 1.25.1):
KeyConditions goes with a FilterExpression or ProjectionExpression, the others do not,
and an empty AttributeUpdates creates the item with its key alone."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

T = "Scratch"
KC = {"pk": {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "legacy-mixed"}]}}


@pytest.fixture(scope="module")
def c(served):
    client = served.client()
    for n in range(3):
        client.put_item(TableName=T, Item={"pk": {"S": "legacy-mixed"}, "sk": {"N": str(n)}, "a": {"N": str(n)}})
    return client


def test_key_conditions_with_filter_and_projection_expressions(c):
    found = c.query(TableName=T, KeyConditions=KC, FilterExpression="a > :l0", ProjectionExpression="#l0",
                    ExpressionAttributeNames={"#l0": "a"}, ExpressionAttributeValues={":l0": {"N": "0"}})
    assert found["Items"] == [{"a": {"N": "1"}}, {"a": {"N": "2"}}]


@pytest.mark.parametrize(("legacy", "modern"), [
    ({"QueryFilter": {"a": {"ComparisonOperator": "EQ", "AttributeValueList": [{"N": "1"}]}}},
     {"FilterExpression": "a = :v", "ExpressionAttributeValues": {":v": {"N": "1"}}}),
    ({"KeyConditions": KC}, {"KeyConditionExpression": "pk = :p",
                             "ExpressionAttributeValues": {":p": {"S": "legacy-mixed"}}}),
])
def test_other_legacy_parameters_with_expressions_refused(c, legacy, modern):
    with pytest.raises(ClientError, match="Can not use both expression and non-expression parameters"):
        c.query(TableName=T, **legacy, **modern)


def test_empty_attribute_updates_creates_the_key(c):
    key = {"pk": {"S": "legacy-mixed"}, "sk": {"N": "9"}}
    c.update_item(TableName=T, Key=key, AttributeUpdates={})
    assert c.get_item(TableName=T, Key=key, ConsistentRead=True)["Item"] == key


def test_legacy_lists_of_one_type(c):
    with pytest.raises(ClientError, match="AttributeValues inside AttributeValueList must be of same type"):
        c.query(TableName=T, KeyConditions=KC, QueryFilter={
            "a": {"ComparisonOperator": "IN", "AttributeValueList": [{"N": "1"}, {"S": "1"}]}})


def test_empty_filters_and_conditional_operator(c):
    everything = c.query(TableName=T, KeyConditions=KC)["Items"]
    assert c.query(TableName=T, KeyConditions=KC, QueryFilter={})["Items"] == everything
    key = {"pk": {"S": "legacy-mixed"}, "sk": {"N": "0"}}
    c.update_item(TableName=T, Key=key, AttributeUpdates={"z": {"Action": "PUT", "Value": {"N": "3"}}}, Expected={})
    for expected in ({"Expected": {}}, {}):
        with pytest.raises(ClientError, match="ConditionalOperator can only be used"):
            c.update_item(TableName=T, Key=key, AttributeUpdates={"z": {"Action": "PUT", "Value": {"N": "4"}}},
                          ConditionalOperator="OR", **expected)
    assert c.get_item(TableName=T, Key=key, ConsistentRead=True)["Item"]["z"] == {"N": "3"}


@pytest.mark.parametrize(("select", "message"), [
    ("ALL_ATTRIBUTES", "Cannot specify the AttributesToGet when choosing to get ALL_ATTRIBUTES"),
    ("COUNT", "Cannot specify the AttributesToGet when choosing to get only the Count"),
])
def test_select_against_attributes_to_get(c, select, message):
    for operation in (c.scan, lambda **kw: c.query(KeyConditions=KC, **kw)):
        with pytest.raises(ClientError) as caught:
            operation(TableName=T, Select=select, AttributesToGet=["a"])
        assert caught.value.response["Error"]["Message"] == message


@pytest.mark.parametrize(("condition", "answer"), [
    ({"ComparisonOperator": "IN", "AttributeValueList": [{"L": []}]}, "ComparisonOperator IN is not valid for L "
                                                                      "AttributeValue type"),
    ({"ComparisonOperator": "CONTAINS", "AttributeValueList": [{"SS": ["x"]}]}, "ComparisonOperator CONTAINS is not "
                                                                               "valid for SS AttributeValue type"),
    ({"ComparisonOperator": "BEGINS_WITH", "AttributeValueList": [{"N": "1"}]}, "ComparisonOperator BEGINS_WITH is not "
                                                                               "valid for N AttributeValue type"),
    ({"Exists": False, "ComparisonOperator": "EQ", "AttributeValueList": [{"N": "3"}]},
     "Exists and ComparisonOperator cannot be used together for Attribute: a"),
    ({"Value": {"N": "3"}, "ComparisonOperator": "EQ", "AttributeValueList": [{"N": "3"}]},
     "Value and AttributeValueList cannot be used together for Attribute: a"),
])
def test_expected_operand_types(c, condition, answer):
    with pytest.raises(ClientError) as caught:
        c.update_item(TableName=T, Key={"pk": {"S": "legacy-mixed"}, "sk": {"N": "0"}},
                      AttributeUpdates={"z": {"Action": "PUT", "Value": {"N": "5"}}}, Expected={"a": condition})
    assert caught.value.response["Error"]["Message"] == f"One or more parameter values were invalid: {answer}"


def test_not_contains_on_a_missing_attribute_fails(c):
    with pytest.raises(ClientError, match="ConditionalCheckFailedException"):
        c.update_item(TableName=T, Key={"pk": {"S": "legacy-mixed"}, "sk": {"N": "1"}},
                      AttributeUpdates={"z": {"Action": "PUT", "Value": {"N": "5"}}},
                      Expected={"missing": {"ComparisonOperator": "NOT_CONTAINS", "AttributeValueList": [{"S": "x"}]}})


@pytest.mark.parametrize(("update", "answer"), [
    ({"Action": "DELETE", "Value": {"SS": ["1"]}}, "Type mismatch for attribute to update"),  # `a` is a number
    ({"Action": "ADD", "Value": {"SS": ["1"]}}, "Type mismatch for attribute to update"),
    ({"Action": "ADD", "Value": {"S": "1"}}, "One or more parameter values were invalid: ADD action is not supported "
                                             "for the type STRING"),
])
def test_attribute_updates_type_errors_in_dynamodbs_words(c, update, answer):
    with pytest.raises(ClientError) as caught:
        c.update_item(TableName=T, Key={"pk": {"S": "legacy-mixed"}, "sk": {"N": "2"}}, AttributeUpdates={"a": update})
    assert caught.value.response["Error"]["Message"] == answer


def test_attribute_updates_add_appends_to_a_list(c):
    key = {"pk": {"S": "legacy-mixed"}, "sk": {"N": "3"}}
    for added in ([{"N": "1"}], [{"S": "x"}]):
        c.update_item(TableName=T, Key=key, AttributeUpdates={"l": {"Action": "ADD", "Value": {"L": added}}})
    assert c.get_item(TableName=T, Key=key, ConsistentRead=True)["Item"]["l"] == {"L": [{"N": "1"}, {"S": "x"}]}
    c.put_item(TableName=T, Item={**key, "ns": {"NS": ["1"]}})
    with pytest.raises(ClientError, match="Type mismatch for attribute to update"):
        c.update_item(TableName=T, Key=key, AttributeUpdates={"ns": {"Action": "ADD", "Value": {"SS": ["a"]}}})
