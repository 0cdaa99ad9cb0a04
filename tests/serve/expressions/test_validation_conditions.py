"""Conditions and filters answered as DynamoDB answers them (DynamoDB Local 1.25.1 gave each
expected answer below): typed comparisons, binary values, size(), two missing attributes,
and the requests DynamoDB refuses before reading any item."""

from __future__ import annotations

import base64

import pytest
from botocore.exceptions import ClientError
from moto.dynamodb import comparisons as moto_comparisons

from ddb2bigtable.serve.errors import ServeError, UnsupportedExpression
from ddb2bigtable.serve.expressions import conditions
from ddb2bigtable.serve.expressions import parsing as expressions

T = "Scratch"
KEY = {"pk": {"S": "conditions"}, "sk": {"N": "1"}}
ITEM = {**KEY, "n": {"N": "5"}, "s": {"S": "hello"}, "b": {"B": base64.b64decode("AAECAwQ=")},
        "t": {"BOOL": True}, "one": {"N": "1"}, "l": {"L": [{"S": "x"}, {"N": "2"}]}, "ss": {"SS": ["a", "b"]}}


@pytest.fixture(scope="module")
def c(served):
    client = served.client()
    client.put_item(TableName=T, Item=ITEM)
    return client


def check(c, condition: str, values: dict | None = None) -> str:
    """'ok' when the conditional update applied, else the error code and message."""
    extra = {"ExpressionAttributeValues": values} if values else {}
    try:
        c.update_item(TableName=T, Key=KEY, UpdateExpression="REMOVE gone", ConditionExpression=condition, **extra)
    except ClientError as error:
        return f"{error.response['Error']['Code']}: {error.response['Error']['Message']}"
    return "ok"


FAILED = "ConditionalCheckFailedException: The conditional request failed"


@pytest.mark.parametrize(("condition", "values", "answer"), [
    ("n < :v", {":v": {"S": "x"}}, FAILED),  # another type: false, not an error
    ("n BETWEEN :a AND :b", {":a": {"S": "a"}, ":b": {"S": "z"}}, FAILED),
    ("t = :v", {":v": {"N": "1"}}, FAILED),  # BOOL true is not the number 1
    ("t = one", None, FAILED),
    ("missing1 = missing2", None, FAILED),
    ("missing1 <> missing2", None, "ok"),
    ("size(n) < :v", {":v": {"N": "3"}}, FAILED),  # size() of a number is undefined
    ("size(l) = :v", {":v": {"N": "2"}}, "ok"),
    ("size(:v) = :w", {":v": {"S": "abc"}, ":w": {"N": "3"}}, "ok"),
    ("begins_with(b, :v)", {":v": {"B": b"\x00\x01"}}, "ok"),
    ("contains(b, :v)", {":v": {"B": b"\x02\x03"}}, "ok"),
    ("contains(l, :v)", {":v": {"N": "2"}}, "ok"),
    ("contains(ss, :v)", {":v": {"S": "b"}}, "ok"),
    ("NOT NOT n = :v", {":v": {"N": "5"}}, "ok"),
    ("attribute_type(s, :v)", {":v": {"S": "S"}}, "ok"),
])
def test_condition_evaluated_with_types(c, condition, values, answer):
    assert check(c, condition, values) == answer


INVALID = "ValidationException: Invalid ConditionExpression: "


@pytest.mark.parametrize(("condition", "values", "message"), [
    ("", None, "The expression can not be empty;"),
    ("begins_with(s, :v)", {":v": {"N": "2"}},
     "Incorrect operand type for operator or function; operator or function: begins_with, operand type: N"),
    ("n < :v", {":v": {"L": []}}, "Incorrect operand type for operator or function; operator or function: <, "
                                  "operand type: L"),
    ("contains(s, s)", None, "The first operand must be distinct from the remaining operands for this operator or "
                             "function; operator: contains, first operand: [s]"),
    ("attribute_type(s, :v)", {":v": {"S": "DOG"}},
     "Invalid attribute type name found; type: DOG, valid types: {N,BS,L,B,NULL,M,S,SS,NS,BOOL}"),
    ("n BETWEEN :a AND :b", {":a": {"N": "3"}, ":b": {"N": "2"}},
     "The BETWEEN operator requires upper bound to be greater than or equal to lower bound; lower bound operand: "
     "AttributeValue: {N:3}, upper bound operand: AttributeValue: {N:2}"),
    ("size(:v) > n", {":v": {"N": "3"}},
     "Incorrect operand type for operator or function; operator or function: size, operand type: N"),
    ("attribute_exists(:v)", {":v": {"N": "3"}},
     "Operator or function requires a document path; operator or function: attribute_exists"),
    ("dog(s) = :v", {":v": {"N": "3"}}, "Invalid function name; function: dog"),
    ("if_not_exists(s, s) = :v", {":v": {"N": "3"}},
     "The function is not allowed in a condition expression; function: if_not_exists"),
])
def test_condition_refused_before_reading(c, condition, values, message):
    assert check(c, condition, values) == INVALID + message


def test_syntax_error_named_before_unused_values(c):
    answer = check(c, "n IN ()", {":v": {"N": "1"}})
    assert answer.startswith(INVALID + "Syntax error;")


def test_filter_on_types(c):
    found = c.query(TableName=T, KeyConditionExpression="pk = :p", FilterExpression="n < :v OR contains(b, :b)",
                    ExpressionAttributeValues={":p": KEY["pk"], ":v": {"S": "x"}, ":b": {"B": b"\x04"}})
    assert [i["sk"] for i in found["Items"]] == [KEY["sk"]]
    with pytest.raises(ClientError, match="Invalid FilterExpression: Invalid function name; function: dog"):
        c.query(TableName=T, KeyConditionExpression="pk = :p", FilterExpression="dog(n)",
                ExpressionAttributeValues={":p": KEY["pk"]})


def test_function_operand_count(c):
    assert check(c, "size(s, s) = :v", {":v": {"N": "5"}}) == INVALID + (
        "Incorrect number of operands for operator or function; operator or function: size, number of operands: 2")


class _LaterFunction(moto_comparisons.Func):
    """A function a later moto parser might build that conditions.py does not evaluate."""

    FUNC = "later_function"


@pytest.mark.parametrize("node", [_LaterFunction(moto_comparisons.AttributePath(["s"])),
                                  moto_comparisons.OpEqual(_LaterFunction(), moto_comparisons.AttributePath(["s"]))])
def test_unevaluated_construct_is_a_validation_exception_naming_it(node):
    """Met while evaluating an item (outside moto's calls) it is still the request's
    ValidationException, not serve's 500."""
    with pytest.raises(ServeError) as caught:
        conditions.holds(node, {"s": {"S": "hello"}})
    assert caught.value.status == 400
    assert caught.value.body()["__type"].endswith("#ValidationException")
    assert "does not support" in caught.value.message and "later_function" in caught.value.message


def test_moto_not_implemented_is_the_same_validation_exception():
    with pytest.raises(UnsupportedExpression, match="does not support: an operator moto lacks"), \
            expressions.dynamodb_errors():
        raise NotImplementedError("an operator moto lacks")
