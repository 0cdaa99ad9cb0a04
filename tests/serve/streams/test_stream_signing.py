"""The Streams API on a signing serve: boto3's `dynamodbstreams` client signs for service
`dynamodb` (botocore's model: signingName), so the operator's keys serve both APIs on one
endpoint; a wrong secret is refused as for DynamoDB's operations."""

from __future__ import annotations

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from ddb2bigtable.bigtable.emulator import stop_process
from ddb2bigtable.serve.protocol.signatures import KEYS_ENV

from ..conftest import start_serve
from .conftest import STAGE

KEY = ("STREAMKEY", "stream-secret")


def test_a_signed_serve_answers_the_streams_api_for_its_keys_only(streamed) -> None:
    process, endpoint = start_serve(streamed.root, STAGE, env={KEYS_ENV: f"{KEY[0]}:{KEY[1]}"})
    try:
        def client(secret: str):
            return boto3.client("dynamodbstreams", endpoint_url=endpoint, region_name="us-west-2",
                                aws_access_key_id=KEY[0], aws_secret_access_key=secret,
                                config=Config(retries={"max_attempts": 1, "mode": "standard"}))
        assert [s["TableName"] for s in client(KEY[1]).list_streams(TableName="Orders")["Streams"]] == ["Orders"]
        with pytest.raises(ClientError) as refused:
            client("not-the-secret").list_streams()
        assert refused.value.response["Error"]["Code"] == "InvalidSignatureException"
    finally:
        stop_process(process)
