"""The issue's side-by-side stream comparison (#52, point 4): one scripted sequence of
writes (side_by_side.py) on serve and on DynamoDB Local 1.25.1, each stream read back
through boto3's `dynamodbstreams` and the JavaScript SDK v3's `DynamoDBStreamsClient`: the
same records per item in the same order, the same event names, keys and images. DynamoDB
Local's deviations from DynamoDB are named in side_by_side.py and docs/streams.md."""

from __future__ import annotations

import time
from typing import Any

import boto3
import pytest
from botocore.config import Config

from . import side_by_side
from .conftest import oracle_client
from .side_by_side import MAIN, PEER

EXPECTED = {  # what DynamoDB writes for the sequence (docs/streams.md, "What DynamoDB promises")
    f'{MAIN} {{"pk": {{"S": "a"}}, "sk": {{"N": "1"}}}}': ["INSERT", "MODIFY", "MODIFY", "REMOVE"],
    f'{MAIN} {{"pk": {{"S": "b"}}, "sk": {{"N": "1"}}}}': ["INSERT", "REMOVE"],
    f'{MAIN} {{"pk": {{"S": "c"}}, "sk": {{"N": "1"}}}}': ["INSERT"],
    f'{MAIN} {{"pk": {{"S": "c"}}, "sk": {{"N": "2"}}}}': ["INSERT"],
    f'{MAIN} {{"pk": {{"S": "d"}}, "sk": {{"N": "1"}}}}': ["INSERT"],
    f'{PEER} {{"id": {{"S": "p1"}}}}': ["INSERT"],
    f'{MAIN} {{"pk": {{"S": "e"}}, "sk": {{"N": "1"}}}}': ["INSERT", "REMOVE by TTL"],
}
TTL_SECONDS = 60  # DynamoDB Local deletes an expired item within a second (checked 2026-12-07)
EXPIRED_AT = int(time.time()) - 3600  # the expiring item's TTL, the same on both sides: its images must match


def _side(db: Any, streams: Any, endpoint: str, region: str) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """The sequence on one side, its streams read by both clients: {client: items}."""
    arns = side_by_side.create_tables(db)
    side_by_side.run_sequence(db, EXPIRED_AT)
    assert side_by_side.expired_gone(db, TTL_SECONDS), "the expired item was not deleted by TTL"
    time.sleep(0.01)  # serve's reader sees a record from the next GetRecords after its commit
    return {"boto3": side_by_side.by_item({t: side_by_side.read_boto3(streams, a) for t, a in arns.items()}),
            "javascript": side_by_side.by_item({t: side_by_side.read_javascript(endpoint, region, a)
                                                for t, a in arns.items()})}


@pytest.fixture(scope="module")
def local_side(oracle) -> dict[str, dict[str, list[dict[str, Any]]]]:
    return _side(oracle_client(oracle, "dynamodb"), oracle_client(oracle, "dynamodbstreams"), oracle.endpoint,
                 "us-west-2")


def test_dynamodb_local_writes_the_records_dynamodb_promises_and_both_clients_read_them_alike(local_side) -> None:
    assert side_by_side.events(local_side["boto3"]) == EXPECTED
    assert local_side["javascript"] == local_side["boto3"]


def test_serves_stream_reads_as_dynamodb_locals_through_both_clients(local_side, streamed) -> None:
    def client(service: str) -> Any:
        return boto3.client(service, endpoint_url=streamed.endpoint, region_name="us-west-2",
                            aws_access_key_id="test", aws_secret_access_key="test",
                            config=Config(retries={"max_attempts": 3, "mode": "standard"}))
    served = _side(client("dynamodb"), client("dynamodbstreams"), streamed.endpoint, "us-west-2")
    assert side_by_side.events(served["boto3"]) == EXPECTED
    assert served["boto3"] == local_side["boto3"]
    assert served["javascript"] == local_side["javascript"]
