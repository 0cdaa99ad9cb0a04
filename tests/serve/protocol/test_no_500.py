"""Requests that made serve answer 500 (issue 43, findings 3 and 5) sent as raw JSON to
serve and to DynamoDB Local: where DynamoDB Local refuses one with a 400, serve gives its
status, code and words; where DynamoDB Local takes it (a lone UTF-16 surrogate, which it
keeps as a Java string) or fails itself (a 500), serve refuses it with a 400 of its own
(docs/serve.md, "What serve refuses"). No refused write changes the item."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator

import boto3
import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from ...replicate import dynamodb_local

S = "\ud800"  # half of a UTF-16 surrogate pair
KEY = {"pk": {"S": "no-500"}, "sk": {"N": "1"}}
ITEM = {**KEY, "l": {"L": [{"N": "1"}]}}
HUGE = "99999999999999999999"


def _nested(levels: int) -> str:
    """A value nested `levels` lists deep, as JSON text (json.dumps recurses and cannot write it)."""
    return '{"L": [' * levels + '{"S": "x"}' + "]}" * levels


def _in(field: str, n: int) -> dict:
    return {field: "a IN (" + ", ".join(f":v{i}" for i in range(n)) + ")",
            "ExpressionAttributeValues": {f":v{i}": {"N": str(i)} for i in range(n)}}


# (operation, body) that DynamoDB Local refuses with a 400: serve must answer the same
SAME_AS_DYNAMODB_LOCAL = {
    "REMOVE of a list index past its range": ("UpdateItem", {"TableName": "Scratch", "Key": KEY,
                                                             "UpdateExpression": f"REMOVE l[{HUGE}]"}),
    "SET of a list index past its range": ("UpdateItem", {
        "TableName": "Scratch", "Key": KEY, "UpdateExpression": "SET l[2147483648] = :v",
        "ExpressionAttributeValues": {":v": {"N": "2"}}}),
    "a projection of a list index past its range": ("GetItem", {"TableName": "Scratch", "Key": KEY,
                                                                "ProjectionExpression": f"l[{HUGE}]"}),
    "a condition on a list index past its range": ("DeleteItem", {
        "TableName": "Scratch", "Key": KEY, "ConditionExpression": f"attribute_exists(l[{HUGE}])"}),
    "a filter on a list index past its range": ("Scan", {"TableName": "Scratch",
                                                         "FilterExpression": f"attribute_exists(l[{HUGE}])"}),
    "a map key of 70,000 bytes": ("PutItem", {"TableName": "Scratch",
                                              "Item": {**KEY, "m": {"M": {"k" * 70_000: {"S": "v"}}}}}),
    "an attribute name of 70,000 bytes": ("PutItem", {"TableName": "Scratch", "Item": {**KEY, "n" * 70_000: {"N": "1"}}}),
    "IN with 101 operands in a filter": ("Scan", {"TableName": "Scratch", **_in("FilterExpression", 101)}),
    "IN with 101 operands in a condition": ("DeleteItem", {"TableName": "Scratch", "Key": KEY,
                                                           **_in("ConditionExpression", 101)}),
    "an item nested 40 deep": ("PutItem", {"TableName": "Scratch", "Item": {**KEY, "d": "@nested40"}}),
    "a condition's value nested 40 deep": ("DeleteItem", {"TableName": "Scratch", "Key": KEY,
                                                          "ConditionExpression": "l = :v",
                                                          "ExpressionAttributeValues": {":v": "@nested40"}}),
}
# DynamoDB Local refuses these too, in words of its own: serve's status and code are its
SAME_CODE_AS_DYNAMODB_LOCAL = {
    "DescribeTable of a name no table can have": ("DescribeTable", {"TableName": "bad!name"}),
    # nested deeper than Python's JSON reader goes, refused before serve knows where
    "a condition's value nested 600 deep": ("DeleteItem", {"TableName": "Scratch", "Key": KEY,
                                                           "ConditionExpression": "l = :v",
                                                           "ExpressionAttributeValues": {":v": "@nested600"}}),
    "a lone surrogate in a table name": ("PutItem", {"TableName": "Scr" + S, "Item": KEY}),
    "a lone surrogate in a ProjectionExpression": ("GetItem", {"TableName": "Scratch", "Key": KEY,
                                                               "ProjectionExpression": "l" + S}),
}
# DynamoDB Local stores these (200) or fails itself (500): serve refuses them, saying why
SERVE_REFUSES = {
    "a lone surrogate in a key": ("PutItem", {"TableName": "Scratch", "Item": {"pk": {"S": S}, "sk": {"N": "1"}}},
                                  "half of a UTF-16 surrogate pair"),
    "a lone surrogate in a value": ("PutItem", {"TableName": "Scratch", "Item": {**KEY, "a": {"S": "x" + S}}},
                                    "half of a UTF-16 surrogate pair"),
    "a lone surrogate in an attribute name": ("PutItem", {"TableName": "Scratch", "Item": {**KEY, S: {"N": "1"}}},
                                              "half of a UTF-16 surrogate pair"),
    "a lone surrogate in a string set": ("PutItem", {"TableName": "Scratch",
                                                     "Item": {**KEY, "ss": {"SS": ["a", S]}}},
                                         "half of a UTF-16 surrogate pair"),
    "a lone surrogate in ExpressionAttributeNames": ("GetItem", {
        "TableName": "Scratch", "Key": KEY, "ProjectionExpression": "#n", "ExpressionAttributeNames": {"#n": S}},
        "half of a UTF-16 surrogate pair"),
    "a lone surrogate in a BatchGetItem key": ("BatchGetItem", {
        "RequestItems": {"Scratch": {"Keys": [{"pk": {"S": S}, "sk": {"N": "1"}}]}}},
        "half of a UTF-16 surrogate pair"),
    "a KeyConditionExpression sent as a list": ("Query", {
        "TableName": "Scratch", "KeyConditionExpression": ["pk = :p"], "ExpressionAttributeValues": {":p": {"S": "x"}}},
        "KeyConditionExpression must be a string, not a list"),
    "a KeyConditionExpression sent as an object": ("Query", {
        "TableName": "Scratch", "KeyConditionExpression": {"pk": 1}, "ExpressionAttributeValues": {":p": {"S": "x"}}},
        "KeyConditionExpression must be a string, not a map"),
    "an item nested 10,000 deep": ("PutItem", {"TableName": "Scratch", "Item": {**KEY, "d": "@nested10000"}},
                                   "Nesting Levels have exceeded supported limits"),
    "a Limit past a 32-bit integer": ("Scan", {"TableName": "Scratch", "Limit": int(HUGE)},
                                      "Limit must be a whole number from -2147483648 to 2147483647"),
    "a Query Limit past a 32-bit integer": ("Query", {
        "TableName": "Scratch", "KeyConditionExpression": "pk = :p", "ExpressionAttributeValues": {":p": {"S": "x"}},
        "Limit": int(HUGE)}, "Limit must be a whole number"),
    "ConsistentRead as a string": ("GetItem", {"TableName": "Scratch", "Key": KEY, "ConsistentRead": "yes"},
                                   "ConsistentRead must be a boolean, not a string"),
    "a Scan's ConsistentRead as a string": ("Scan", {"TableName": "Scratch", "ConsistentRead": "yes"},
                                            "ConsistentRead must be a boolean, not a string"),
}


def _encoded(body: dict) -> bytes:
    text = json.dumps(body)
    for levels in (40, 600, 10_000):
        text = text.replace(f'"@nested{levels}"', _nested(levels))
    return text.encode()


def post(endpoint: str, operation: str, body: bytes) -> tuple[int, str, str]:
    """Status, error code and message of one signed raw request (DynamoDB Local wants a signature)."""
    headers = {"X-Amz-Target": f"DynamoDB_20120810.{operation}", "Content-Type": "application/x-amz-json-1.0"}
    signed = AWSRequest("POST", endpoint + "/", data=body, headers=headers)
    SigV4Auth(Credentials("local", "local"), "dynamodb", "us-west-2").add_auth(signed)
    request = urllib.request.Request(endpoint + "/", data=body, headers=dict(signed.headers.items()), method="POST")
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            return answer.status, "", ""
    except urllib.error.HTTPError as error:
        text = error.read()
        try:
            found = json.loads(text)
        except ValueError:
            return error.code, "", text[:200].decode("utf-8", "replace")
        return error.code, found.get("__type", "").split("#")[-1], found.get("message") or found.get("Message", "")


@pytest.fixture(scope="module")
def local() -> Iterator[str]:
    """DynamoDB Local with the Scratch table's key schema and the item the cases name."""
    running = dynamodb_local.start()
    client = boto3.client("dynamodb", endpoint_url=running.endpoint, region_name="us-west-2",
                          aws_access_key_id="local", aws_secret_access_key="local")
    client.create_table(TableName="Scratch", BillingMode="PAY_PER_REQUEST",
                        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                                   {"AttributeName": "sk", "KeyType": "RANGE"}],
                        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                                              {"AttributeName": "sk", "AttributeType": "N"}])
    client.put_item(TableName="Scratch", Item=ITEM)
    yield running.endpoint
    running.stop()


@pytest.fixture
def item(served) -> Iterator[None]:
    """The item every case names, in serve's Scratch; a case leaves it as it was."""
    client = served.client()
    client.put_item(TableName="Scratch", Item=ITEM)
    yield
    assert client.get_item(TableName="Scratch", Key=KEY, ConsistentRead=True)["Item"] == ITEM
    client.delete_item(TableName="Scratch", Key=KEY)


@pytest.mark.parametrize("case", SAME_AS_DYNAMODB_LOCAL)
def test_serve_refuses_as_dynamodb_local_does(served, local, item, case):
    operation, body = SAME_AS_DYNAMODB_LOCAL[case]
    expected = post(local, operation, _encoded(body))
    assert expected[0] == 400, expected
    assert post(served.endpoint, operation, _encoded(body)) == expected


@pytest.mark.parametrize("case", SAME_CODE_AS_DYNAMODB_LOCAL)
def test_serve_refuses_with_dynamodb_locals_code(served, local, item, case):
    operation, body = SAME_CODE_AS_DYNAMODB_LOCAL[case]
    expected = post(local, operation, _encoded(body))
    assert expected[:2] == (400, "ValidationException"), expected
    assert post(served.endpoint, operation, _encoded(body))[:2] == expected[:2]


@pytest.mark.parametrize("case", SERVE_REFUSES)
def test_serve_refuses_what_dynamodb_local_stores_or_fails_on(served, local, item, case):
    operation, body, words = SERVE_REFUSES[case]
    status, code, message = post(served.endpoint, operation, _encoded(body))
    assert (status, code) == (400, "ValidationException"), message
    assert words in message
    assert "\ud800" not in message  # said as an escape: the answer itself is UTF-8
    assert post(local, operation, _encoded(body))[0] in (200, 500)  # why serve's words are its own


def test_a_table_named_like_serves_own_gets_a_table_of_its_own(served):
    """`_ddb2bigtable_types` (the loader's record of attribute types) is a DynamoDB name like
    any other: its table is `ddb__ddb2bigtable_types` in Bigtable, and the record is untouched."""
    client = served.client()
    client.create_table(TableName="_ddb2bigtable_types", BillingMode="PAY_PER_REQUEST",
                        KeySchema=[{"AttributeName": "p", "KeyType": "HASH"}],
                        AttributeDefinitions=[{"AttributeName": "p", "AttributeType": "S"}])
    try:
        client.put_item(TableName="_ddb2bigtable_types", Item={"p": {"S": "x"}, "year": {"S": "not a number"}})
        assert client.scan(TableName="_ddb2bigtable_types")["Items"] == [{"p": {"S": "x"}, "year": {"S": "not a number"}}]
        assert client.get_item(TableName="Movies", Key={"year": {"N": "2013"}, "title": {"S": "Rush"}})["Item"]
    finally:
        client.delete_table(TableName="_ddb2bigtable_types")


def test_a_lone_surrogate_written_as_utf8_bytes_is_refused_too(served):
    """Python's JSON reader takes the bytes ED A0 80 (a surrogate encoded as if it were a
    character) without complaint: serve looks for them as for the `\\ud800` escape."""
    body = b'{"TableName": "Scratch", "Item": {"pk": {"S": "' + S.encode("utf-8", "surrogatepass") + \
        b'"}, "sk": {"N": "1"}}}'
    status, code, message = post(served.endpoint, "PutItem", body)
    assert (status, code) == (400, "ValidationException") and "surrogate" in message, message
