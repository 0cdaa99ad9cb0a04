"""Requests DynamoDB refuses and serve used to answer: duplicate keys in a batch, paths
that overlap or conflict in a projection, a projection nested too deep, names left unused
in a BatchGetItem (DynamoDB Local 1.25.1's messages below). They are refused whether or
not the item exists: DynamoDB checks the request, not the data."""

from __future__ import annotations

import http.client
import json

import pytest
from botocore.exceptions import ClientError

T = "Scratch"
KEY = {"pk": {"S": "requests"}, "sk": {"N": "1"}}
MISSING = {"pk": {"S": "requests"}, "sk": {"N": "404"}}


@pytest.fixture(scope="module")
def c(served):
    client = served.client()
    client.put_item(TableName=T, Item={**KEY, "a": {"M": {"b": {"L": [{"N": "1"}, {"N": "2"}]}}}})
    return client


def message(call, **kwargs) -> str:
    with pytest.raises(ClientError) as caught:
        call(**kwargs)
    return caught.value.response["Error"]["Message"]


def test_duplicate_keys_in_batches(c):
    duplicates = "Provided list of item keys contains duplicates"
    assert message(c.batch_get_item, RequestItems={T: {"Keys": [KEY, KEY]}}) == duplicates
    for writes in ([{"PutRequest": {"Item": KEY}}, {"PutRequest": {"Item": KEY}}],
                   [{"PutRequest": {"Item": MISSING}}, {"DeleteRequest": {"Key": MISSING}}]):
        assert message(c.batch_write_item, RequestItems={T: writes}) == duplicates
    assert "Item" not in c.get_item(TableName=T, Key=MISSING)  # nothing written


def test_batch_get_unused_name(c):
    assert message(c.batch_get_item, RequestItems={T: {"Keys": [KEY], "ProjectionExpression": "#a",
                                                       "ExpressionAttributeNames": {"#a": "a", "#u": "u"}}}) == \
        "Value provided in ExpressionAttributeNames unused in expressions: keys: {#u}"


@pytest.mark.parametrize(("projection", "answer"), [
    ("a, a.b", "overlap with each other; must remove or rewrite one of these paths; path one: [a], path two: [a, b]"),
    ("a.b, a.b", "overlap with each other; must remove or rewrite one of these paths; path one: [a, b], path two: "
                 "[a, b]"),
    ("a.b, a[1]", "conflict with each other; must remove or rewrite one of these paths; path one: [a, b], path two: "
                  "[a, [1]]"),
])
def test_projection_paths_overlap_or_conflict(c, projection, answer):
    for key in (KEY, MISSING):
        assert message(c.get_item, TableName=T, Key=key, ProjectionExpression=projection) == \
            f"Invalid ProjectionExpression: Two document paths {answer}"


def test_projection_nesting(c):
    assert "Item" in c.get_item(TableName=T, Key=KEY, ProjectionExpression="a" + ".b" * 31)
    assert message(c.get_item, TableName=T, Key=KEY, ProjectionExpression="a" + ".b" * 32) == \
        "Invalid ProjectionExpression: The document path has too many nesting levels; nesting levels: 33"


@pytest.mark.parametrize(("name", "constraint"), [
    ("non!existent!table", "Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+"),
    ("xx", "Member must have length greater than or equal to 3"),
])
def test_table_names_dynamodb_cannot_hold(c, name, constraint):
    assert message(c.put_item, TableName=name, Item={"a": {"S": "b"}}) == \
        f"1 validation error detected: Value '{name}' at 'tableName' failed to satisfy constraint: {constraint}"


def test_request_over_16_mb_is_413(served):
    """DynamoDB answers a body over 16 MB with HTTP 413 (told from Content-Length, before the body)."""
    host, port = served.endpoint.removeprefix("http://").split(":")
    body = b'{"TableName": "Scratch", ' + b" " * (17 * 1024 * 1024) + b'"Item": {"pk": {"S": "x"}, "sk": {"N": "1"}}}'
    connection = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        connection.request("POST", "/", body=body, headers={"X-Amz-Target": "DynamoDB_20120810.PutItem",
                                                            "Content-Type": "application/x-amz-json-1.0"})
        answer = connection.getresponse()
        assert answer.status == 413
        assert json.loads(answer.read())["__type"].endswith("#RequestEntityTooLarge")
    finally:
        connection.close()


def test_parallel_scan_start_key_outside_its_segment(c):
    for n in range(12):
        c.put_item(TableName=T, Item={"pk": {"S": f"segments-{n}"}, "sk": {"N": "1"}})
    pages = [c.scan(TableName=T, Segment=s, TotalSegments=4, Limit=1) for s in range(4)]
    segment, page = next((s, p) for s, p in enumerate(pages) if "LastEvaluatedKey" in p)
    other = (segment + 1) % 4
    with pytest.raises(ClientError, match="Exclusive start key must lie within the segment"):
        c.scan(TableName=T, Segment=other, TotalSegments=4, ExclusiveStartKey=page["LastEvaluatedKey"])
    c.scan(TableName=T, Segment=segment, TotalSegments=4, ExclusiveStartKey=page["LastEvaluatedKey"])


def test_large_answer_streamed_in_chunks(c):
    """A large answer goes out with chunked transfer encoding (as DynamoDB Local streams it),
    a small one with its Content-Length; boto3 reads both whole."""
    big = "x" * 50_000
    keys = [{"pk": {"S": "chunked"}, "sk": {"N": str(n)}} for n in range(3)]
    for key in keys:
        c.put_item(TableName=T, Item={**key, "big": {"S": big}})
    try:
        found = c.query(TableName=T, KeyConditionExpression="pk = :p",
                        ExpressionAttributeValues={":p": {"S": "chunked"}})
        assert [i["big"]["S"] for i in found["Items"]] == [big] * 3
        assert found["ResponseMetadata"]["HTTPHeaders"].get("transfer-encoding") == "chunked"
        small = c.get_item(TableName=T, Key=KEY)
        assert "content-length" in small["ResponseMetadata"]["HTTPHeaders"]
    finally:  # other modules scan the shared table in one page
        for key in keys:
            c.delete_item(TableName=T, Key=key)


def test_nesting_past_dynamodbs_limit(c):
    def nested(levels: int) -> dict:
        value: dict = {"S": "x"}
        for _ in range(levels):
            value = {"M": {"a": value}}
        return value
    c.put_item(TableName=T, Item={**KEY, "deep": nested(31)})
    assert message(c.put_item, TableName=T, Item={**KEY, "deep": nested(32)}) == \
        "Nesting Levels have exceeded supported limits: Attributes in the item have nested levels beyond supported limit"
