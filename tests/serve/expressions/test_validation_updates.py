"""UpdateExpression checked as DynamoDB checks it (DynamoDB Local 1.25.1's answers below):
empty, overlapping or conflicting written paths, a key written (read is fine), `+` of
values that are not numbers or of three operands."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

T = "Scratch"
KEY = {"pk": {"S": "updates"}, "sk": {"N": "1"}}


@pytest.fixture(scope="module")
def c(served):
    client = served.client()
    client.put_item(TableName=T, Item={**KEY, "a": {"M": {"b": {"N": "1"}}}})
    return client


def test_a_key_may_be_read(c):
    c.update_item(TableName=T, Key=KEY, UpdateExpression="SET pcopy = pk, n = sk + :one",
                  ExpressionAttributeValues={":one": {"N": "1"}})
    item = c.get_item(TableName=T, Key=KEY, ConsistentRead=True)["Item"]
    assert item["pcopy"] == {"S": "updates"} and item["n"] == {"N": "2"}


INVALID = "Invalid UpdateExpression: "


@pytest.mark.parametrize(("expression", "values", "answer"), [
    ("", None, INVALID + "The expression can not be empty;"),
    ("SET pk = :v", {":v": {"S": "x"}}, "One or more parameter values were invalid: Cannot update attribute pk. "
                                        "This attribute is part of the key"),
    ("SET a.b = :v, a.b.c = :v", {":v": {"S": "x"}}, INVALID + "Two document paths overlap with each other; must "
     "remove or rewrite one of these paths; path one: [a, b], path two: [a, b, c]"),
    ("SET a.b = :v REMOVE a[1]", {":v": {"S": "x"}}, INVALID + "Two document paths conflict with each other; must "
     "remove or rewrite one of these paths; path one: [a, b], path two: [a, [1]]"),
    ("SET x = :v + :w", {":v": {"S": "x"}, ":w": {"N": "1"}}, INVALID + "Incorrect operand type for operator or "
     "function; operator or function: +, operand type: S"),
])
def test_refused(c, expression, values, answer):
    extra = {"ExpressionAttributeValues": values} if values else {}
    with pytest.raises(ClientError) as caught:
        c.update_item(TableName=T, Key=KEY, UpdateExpression=expression, **extra)
    assert caught.value.response["Error"]["Message"] == answer


def test_three_operands_refused(c):
    with pytest.raises(ClientError, match="Invalid UpdateExpression: Syntax error"):
        c.update_item(TableName=T, Key=KEY, UpdateExpression="SET x = :v + :v + :v",
                      ExpressionAttributeValues={":v": {"N": "1"}})


@pytest.mark.parametrize("expression", ["SET s.c = :v", "SET missing.c = :v", "SET l.c = :v", "SET m[0] = :v"])
def test_nested_path_must_lead_into_a_map_or_list(c, expression):
    c.update_item(TableName=T, Key=KEY, UpdateExpression="SET s = :s, l = :l, m = :m",
                  ExpressionAttributeValues={":s": {"S": "str"}, ":l": {"L": [{"N": "1"}]}, ":m": {"M": {}}})
    with pytest.raises(ClientError) as caught:
        c.update_item(TableName=T, Key=KEY, UpdateExpression=expression, ExpressionAttributeValues={":v": {"N": "1"}})
    assert caught.value.response["Error"]["Message"] == \
        "The document path provided in the update expression is invalid for update"
    with pytest.raises(ClientError, match="document path provided in the update expression is invalid"):
        c.update_item(TableName=T, Key=KEY, UpdateExpression="REMOVE s.c")


def test_sum_past_the_range_is_an_overflow(c):
    with pytest.raises(ClientError, match="Number overflow. Attempting to store a number with magnitude larger"):
        c.update_item(TableName=T, Key=KEY, UpdateExpression="SET x = :v + :v",
                      ExpressionAttributeValues={":v": {"N": "9E+125"}})


def test_updated_values_are_the_written_paths(c):
    c.put_item(TableName=T, Item={**KEY, "a": {"M": {"b": {"S": "hi"}, "c": {"L": [{"N": "1"}]}}}})
    new = c.update_item(TableName=T, Key=KEY, UpdateExpression="SET a.b = :v", ReturnValues="UPDATED_NEW",
                        ExpressionAttributeValues={":v": {"S": "ho"}})
    assert new["Attributes"] == {"a": {"M": {"b": {"S": "ho"}}}}
    fresh = {"pk": {"S": "updates"}, "sk": {"N": "99"}}
    old = c.update_item(TableName=T, Key=fresh, UpdateExpression="SET x = :v", ReturnValues="UPDATED_OLD",
                        ExpressionAttributeValues={":v": {"N": "1"}})
    assert "Attributes" not in old  # nothing was there; the key is not an updated attribute
    assert c.update_item(TableName=T, Key=fresh, UpdateExpression="SET x = :v", ReturnValues="UPDATED_NEW",
                         ExpressionAttributeValues={":v": {"N": "2"}})["Attributes"] == {"x": {"N": "2"}}


def test_return_values_on_condition_check_failure_checked(c):
    with pytest.raises(ClientError, match="Value 'ALL_NEW' at 'returnValuesOnConditionCheckFailure' failed to satisfy"):
        c.update_item(TableName=T, Key=KEY, UpdateExpression="SET x = :v", ConditionExpression="x = :v",
                      ReturnValuesOnConditionCheckFailure="ALL_NEW", ExpressionAttributeValues={":v": {"N": "7"}})


@pytest.mark.parametrize(("expression", "after"), [
    ("REMOVE l[1] SET l[3] = :v", ["2", "4", "17", "6", "7"]),  # both against the original list
    ("SET l[3] = :v REMOVE l[1]", ["2", "4", "17", "6", "7"]),
    ("REMOVE l[0], l[2]", ["3", "5", "6", "7"]),
    ("SET l[84] = :a, l[37] = :b, l[17] = :v", ["2", "3", "4", "5", "6", "7", "17", "1", "0"]),  # appended by index
])
def test_list_elements_updated_against_the_original_list(c, expression, after):
    c.update_item(TableName=T, Key=KEY, UpdateExpression="SET l = :l",
                  ExpressionAttributeValues={":l": {"L": [{"N": str(n)} for n in range(2, 8)]}})
    values = {k: v for k, v in {":v": {"N": "17"}, ":a": {"N": "0"}, ":b": {"N": "1"}}.items() if k in expression}
    c.update_item(TableName=T, Key=KEY, UpdateExpression=expression,
                  **({"ExpressionAttributeValues": values} if values else {}))
    item = c.get_item(TableName=T, Key=KEY, ConsistentRead=True)["Item"]
    assert [v["N"] for v in item["l"]["L"]] == after


def test_if_not_exists_inside_another_function(c):
    fresh = {"pk": {"S": "updates"}, "sk": {"N": "77"}}
    for added in (["a", "b"], ["c"]):
        c.update_item(TableName=T, Key=fresh, UpdateExpression="SET l = list_append(if_not_exists(l, :empty), :new)",
                      ExpressionAttributeValues={":empty": {"L": []}, ":new": {"L": [{"S": s} for s in added]}})
    c.update_item(TableName=T, Key=fresh, UpdateExpression="SET x = if_not_exists(nothere, if_not_exists(l, :v))",
                  ExpressionAttributeValues={":v": {"N": "1"}})
    item = c.get_item(TableName=T, Key=fresh, ConsistentRead=True)["Item"]
    assert item["l"] == {"L": [{"S": "a"}, {"S": "b"}, {"S": "c"}]} and item["x"] == item["l"]
    with pytest.raises(ClientError, match="not allowed to be used this way in an expression; function: list_append"):
        c.update_item(TableName=T, Key=fresh, UpdateExpression="SET l = list_append(list_append(:v, :v), :v)",
                      ExpressionAttributeValues={":v": {"L": []}})
