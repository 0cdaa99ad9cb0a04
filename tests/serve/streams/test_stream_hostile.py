"""Hostile DynamoDB Streams bodies get DynamoDB's error shape, never a 500: members of every
wrong JSON type, nulls, names and iterators far past their limits, ARNs of another form."""

from __future__ import annotations

import http.client
import json
from urllib.parse import urlparse

import pytest

from ddb2bigtable.serve.streams import positions

WRONG = [None, 5, -1, 2**70, 1.5, True, "", "x" * 5000, [], {}, {"S": "x"}, ["a"]]
FIELDS = {"ListStreams": ("TableName", "Limit", "ExclusiveStartStreamArn"),
          "DescribeStream": ("StreamArn", "Limit", "ExclusiveStartShardId"),
          "GetShardIterator": ("StreamArn", "ShardId", "ShardIteratorType", "SequenceNumber"),
          "GetRecords": ("ShardIterator", "Limit")}


def _post(endpoint: str, operation: str, body: bytes) -> tuple[int, dict]:
    where = urlparse(endpoint)
    connection = http.client.HTTPConnection(where.hostname, where.port, timeout=30)
    try:
        connection.request("POST", "/", body, {"X-Amz-Target": f"DynamoDBStreams_20120810.{operation}",
                                               "Content-Type": "application/x-amz-json-1.0"})
        answer = connection.getresponse()
        return answer.status, json.loads(answer.read() or b"{}")
    finally:
        connection.close()


@pytest.mark.parametrize("operation", sorted(FIELDS))
def test_every_wrong_member_is_a_400_in_dynamodbs_shape(streamed, arn, operation: str) -> None:
    shard = streamed.client().describe_stream(StreamArn=arn)["StreamDescription"]["Shards"][0]["ShardId"]
    good = {"StreamArn": arn, "ShardId": shard, "ShardIteratorType": "TRIM_HORIZON",
            "ShardIterator": positions.iterator(arn, positions.Position(0, "", True, 0))}
    bodies = [json.dumps({k: good[k] for k in FIELDS[operation] if k in good} | {field: value}).encode()
              for field in FIELDS[operation] for value in WRONG]
    bodies += [b"", b"[]", b"null", b"{", json.dumps({"StreamArn": arn.replace("Orders", "Nope")}).encode(),
               json.dumps({"ShardIterator": good["ShardIterator"].replace("Orders", "Nope")}).encode()]
    for body in bodies:
        status, answer = _post(streamed.endpoint, operation, body)
        assert status < 500 and (status == 200 or answer["__type"].startswith("com.amazonaws.dynamodb")), (body, answer)
