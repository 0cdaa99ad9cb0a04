"""StreamSpecification on CreateTable and UpdateTable, and the streams DescribeTable,
ListStreams and DescribeStream then show: serve on the emulator beside DynamoDB Local
1.25.1, the same requests, the same answers (codes, words, which fields appear)."""

from __future__ import annotations

from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from .conftest import oracle_client

SCHEMA = {"KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
          "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}], "BillingMode": "PAY_PER_REQUEST"}
STREAM_FIELDS = ("StreamSpecification", "LatestStreamLabel", "LatestStreamArn")


@pytest.fixture
def sides(streamed, oracle) -> list[tuple[Any, Any]]:
    """(dynamodb, dynamodbstreams) clients of serve and of DynamoDB Local, client-side checks off."""
    def serve(service: str) -> Any:
        return boto3.client(service, endpoint_url=streamed.endpoint, region_name="us-west-2",
                            aws_access_key_id="test", aws_secret_access_key="test",
                            config=Config(parameter_validation=False, retries={"max_attempts": 1}))
    return [(serve("dynamodb"), serve("dynamodbstreams")),
            (oracle_client(oracle, "dynamodb", validate=False), oracle_client(oracle, "dynamodbstreams", False))]


def _answer(call: Any, **kwargs: Any) -> tuple[str, Any]:
    try:
        answer = call(**kwargs)
    except ClientError as error:
        return error.response["Error"]["Code"], error.response["Error"]["Message"]
    table = answer.get("TableDescription") or answer.get("Table") or {}
    return "OK", sorted(k for k in table if k in STREAM_FIELDS)


def test_stream_specifications_are_refused_and_taken_as_dynamodb_local_does(sides) -> None:
    answers = []
    for client, _ in sides:
        spec = {"TableName": "StreamSpecs", **SCHEMA}
        answers.append([
            _answer(client.create_table, **spec, StreamSpecification={"StreamEnabled": True, "StreamViewType": "BAD"}),
            _answer(client.create_table, **spec, StreamSpecification={"StreamEnabled": True}),
            _answer(client.create_table, **spec, StreamSpecification={"StreamEnabled": False,
                                                                      "StreamViewType": "KEYS_ONLY"}),
            _answer(client.create_table, **spec, StreamSpecification={"StreamViewType": "KEYS_ONLY"}),
            _answer(client.create_table, TableName="StreamSpecs", BillingMode="PAY_PER_REQUEST",
                    StreamSpecification={"StreamEnabled": True, "StreamViewType": "BAD"}),
            _answer(client.create_table, **spec, StreamSpecification={"StreamEnabled": False}),
            _answer(client.describe_table, TableName="StreamSpecs"),
            _answer(client.update_table, TableName="StreamSpecs", StreamSpecification={"StreamEnabled": False}),
            _answer(client.update_table, TableName="StreamSpecs", StreamSpecification={"StreamEnabled": True,
                                                                                      "StreamViewType": "X"}),
            _answer(client.update_table, TableName="StreamSpecs", BillingMode="PROVISIONED",
                    ProvisionedThroughput={"ReadCapacityUnits": 1, "WriteCapacityUnits": 1},
                    StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"}),
            _answer(client.update_table, TableName="StreamSpecs", StreamSpecification={
                "StreamEnabled": True, "StreamViewType": "NEW_IMAGE"}),
            _answer(client.update_table, TableName="StreamSpecs", StreamSpecification={
                "StreamEnabled": True, "StreamViewType": "KEYS_ONLY"}),
            _answer(client.describe_table, TableName="StreamSpecs"),
            _answer(client.update_table, TableName="StreamSpecs", StreamSpecification={"StreamEnabled": False}),
            _answer(client.describe_table, TableName="StreamSpecs"),
            _answer(client.update_table, TableName="StreamSpecs", StreamSpecification={"StreamEnabled": False}),
            _answer(client.update_table, TableName="StreamMissing", StreamSpecification={"StreamEnabled": False})[0],
            _answer(client.delete_table, TableName="StreamSpecs"),
        ])
    assert answers[0] == answers[1]
    assert answers[0][-1] == ("OK", ["LatestStreamArn", "LatestStreamLabel"])


def test_a_tables_streams_are_listed_and_described_with_their_state(sides) -> None:
    """Enabled, disabled, enabled again: two streams listed newest first, the first
    DISABLED with its shards closed, the second ENABLED; both listed after DeleteTable."""
    found = []
    for client, streams in sides:
        made = client.create_table(TableName="StreamStates", **SCHEMA, StreamSpecification={
            "StreamEnabled": True, "StreamViewType": "KEYS_ONLY"})["TableDescription"]
        client.update_table(TableName="StreamStates", StreamSpecification={"StreamEnabled": False})
        again = client.update_table(TableName="StreamStates", StreamSpecification={
            "StreamEnabled": True, "StreamViewType": "NEW_IMAGE"})["TableDescription"]
        listed = [s["StreamArn"] for s in streams.list_streams(TableName="StreamStates")["Streams"]]
        one = streams.list_streams(TableName="StreamStates", Limit=1)
        rest = streams.list_streams(TableName="StreamStates", ExclusiveStartStreamArn=one["LastEvaluatedStreamArn"])
        # pages cover the list once (DynamoDB Local pages oldest first though it lists newest first)
        paged = (sorted(s["StreamArn"] for s in one["Streams"] + rest["Streams"]) == sorted(listed)
                 and one["LastEvaluatedStreamArn"] == one["Streams"][0]["StreamArn"]
                 and "LastEvaluatedStreamArn" not in rest)
        first = streams.describe_stream(StreamArn=made["LatestStreamArn"])["StreamDescription"]
        second = streams.describe_stream(StreamArn=again["LatestStreamArn"])["StreamDescription"]
        closed = streams.get_shard_iterator(StreamArn=made["LatestStreamArn"], ShardId=first["Shards"][0]["ShardId"],
                                            ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
        ended = streams.get_records(ShardIterator=closed)
        client.delete_table(TableName="StreamStates")
        after = [s["StreamArn"] for s in streams.list_streams(TableName="StreamStates")["Streams"]]
        found.append((listed == [again["LatestStreamArn"], made["LatestStreamArn"]], after == listed, paged,
                      first["StreamStatus"], first["StreamViewType"],
                      all("EndingSequenceNumber" in s["SequenceNumberRange"] for s in first["Shards"]),
                      second["StreamStatus"], second["StreamViewType"],
                      any("EndingSequenceNumber" in s["SequenceNumberRange"] for s in second["Shards"]),
                      ended["Records"], "NextShardIterator" in ended))
    # a closed shard read to its end gives no NextShardIterator
    assert found[0] == found[1] == (True, True, True, "DISABLED", "KEYS_ONLY", True, "ENABLED", "NEW_IMAGE", False, [],
                                    False)
