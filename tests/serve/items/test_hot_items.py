"""A hot item holds (issue 43, finding 4): 32 threads x 20 `UpdateItem ADD n :1` on one item,
boto3 with its default retries, against serve with two workers (writes of one row take turns
within a worker; the two workers race and the loser tries again): no error reaches the
application and no update is lost. `n` is no counter of the mapping, so every update is a
read-check-write."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import boto3
import pytest
from botocore.config import Config

from ddb2bigtable.bigtable.emulator import stop_process

from ..conftest import STAGE, start_serve

THREADS, EACH = 32, 20
KEY = {"pk": {"S": "hot"}, "sk": {"N": "1"}}


@pytest.mark.slow
def test_32_writers_on_one_item_all_succeed_and_none_is_lost(served):
    process, endpoint = start_serve(served.root, STAGE, "--workers", "2")
    try:
        def client():  # boto3's defaults but for the pool, which holds every thread's connection
            return boto3.client("dynamodb", endpoint_url=endpoint, region_name="us-west-2",
                                aws_access_key_id="test", aws_secret_access_key="test",
                                config=Config(max_pool_connections=THREADS))

        shared = client()
        shared.put_item(TableName="Scratch", Item={**KEY, "n": {"N": "0"}})

        def writer(_: int) -> list[str]:
            failures = []
            for _ in range(EACH):
                try:
                    shared.update_item(TableName="Scratch", Key=KEY, UpdateExpression="ADD n :one",
                                       ExpressionAttributeValues={":one": {"N": "1"}})
                except shared.exceptions.ClientError as error:
                    failures.append(error.response["Error"]["Code"])
            return failures

        with ThreadPoolExecutor(THREADS) as pool:
            failures = [f for found in pool.map(writer, range(THREADS)) for f in found]
        item = shared.get_item(TableName="Scratch", Key=KEY, ConsistentRead=True)["Item"]
    finally:
        stop_process(process)
    assert failures == []
    assert item["n"] == {"N": str(THREADS * EACH)}  # every acknowledged update is there
