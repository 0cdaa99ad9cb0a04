"""The stream tests' servers: DynamoDB Local (the oracle, with streams), and serve on the
session's emulator over one spec table with `stream: new_and_old_images`, its tables and
their stream family made by `up` (docs/streams.md)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.config import Config

from ddb2bigtable.bigtable.emulator import stop_process
from ddb2bigtable.load.local_stage import up

from ...conftest import write_project
from ...replicate import dynamodb_local
from ..conftest import start_serve

STAGE = "streams"
SPEC = """
version: 1
instance: {id: streams-test, display_name: Streams test}
tables:
  - id: orders
    source:
      table: Orders
      region: us-west-2
      key:
        partition: {name: pk, type: S}
        sort: {name: sk, type: N}
      billing: provisioned
      reads: 10
      writes: 10
      item_size_kb: 1
      storage_gb: 0.001
      stream: new_and_old_images
"""
INSTANCE, TABLE = "streams-test", "orders"


@dataclass
class Streamed:
    root: Path
    endpoint: str
    project: str
    instance: str = "streams-test"

    def client(self, service: str = "dynamodbstreams") -> Any:
        """A boto3 client on serve, on its defaults but for no retries (a test sees the first answer)."""
        return boto3.client(service, endpoint_url=self.endpoint, region_name="us-west-2",
                            aws_access_key_id="test", aws_secret_access_key="test",
                            config=Config(retries={"max_attempts": 1, "mode": "standard"}))


@pytest.fixture(scope="session")
def oracle() -> Iterator[Any]:
    running = dynamodb_local.start()
    yield running
    running.stop()


def oracle_client(oracle: Any, service: str, validate: bool = True) -> Any:
    return boto3.client(service, endpoint_url=oracle.endpoint, region_name="us-west-2",
                        aws_access_key_id="local", aws_secret_access_key="local",
                        config=Config(retries={"max_attempts": 1, "mode": "standard"},
                                      parameter_validation=validate))


def serve_streamed(root: Path, instance: str) -> tuple[Any, Streamed]:
    """serve over a stage whose Orders table (in `instance`) has a stream, made by `up` with
    the family of its records, as the plan gives it (plan/gc_rules.py); a module that needs a
    table of its own names another instance."""
    write_project(root, {"orders": SPEC.replace(INSTANCE, instance)},
                  {"emulator": True, "regions": "home", "deletion_protection": False, "autoscaling": False},
                  stage_name=STAGE)
    result = up(root, STAGE)
    assert result.ok, result
    process, endpoint = start_serve(root, STAGE)
    return process, Streamed(root, endpoint, "test-project", instance)


@pytest.fixture(scope="session")
def streamed(bigtable_emulator, tmp_path_factory) -> Iterator[Streamed]:
    process, running = serve_streamed(tmp_path_factory.mktemp("streams-project"), INSTANCE)
    yield running
    stop_process(process)


@pytest.fixture(scope="session")
def arn(streamed) -> str:
    """The spec table's stream (made when serve first serves it: records written before are not in it)."""
    listed = streamed.client().list_streams(TableName="Orders")["Streams"]
    assert [(s["TableName"], len(s["StreamLabel"])) for s in listed] == [("Orders", 23)]
    return listed[0]["StreamArn"]
