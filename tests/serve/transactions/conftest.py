"""The oracle beside serve (DynamoDB Local, tests/serve/conftest.py's `dynamodb_oracle`) and the
same three tables made on both (through serve, on the session's emulator, and on DynamoDB
Local), emptied between tests."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from botocore.config import Config

ACCOUNTS = {"KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
            "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}],
            "BillingMode": "PAY_PER_REQUEST"}
LEDGER = {"KeySchema": [{"AttributeName": "account", "KeyType": "HASH"},
                        {"AttributeName": "seq", "KeyType": "RANGE"}],
          "AttributeDefinitions": [{"AttributeName": "account", "AttributeType": "S"},
                                   {"AttributeName": "seq", "AttributeType": "N"}],
          "BillingMode": "PAY_PER_REQUEST"}
INDEXED = {"KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
           "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"},
                                    {"AttributeName": "tag", "AttributeType": "S"}],
           "GlobalSecondaryIndexes": [{"IndexName": "ByTag", "KeySchema": [{"AttributeName": "tag", "KeyType": "HASH"}],
                                       "Projection": {"ProjectionType": "ALL"}}],
           "BillingMode": "PAY_PER_REQUEST"}
TABLES = {"TxAccounts": ACCOUNTS, "TxLedger": LEDGER, "TxIndexed": INDEXED}


@dataclass
class Side:
    """One endpoint under test: its name and a boto3 client with no retries."""

    name: str
    client: Any


def _oracle_client(oracle: Any) -> Any:
    import boto3

    return boto3.client("dynamodb", endpoint_url=oracle.endpoint, region_name="us-west-2",
                        aws_access_key_id="local", aws_secret_access_key="local",
                        config=Config(retries={"max_attempts": 1, "mode": "standard"}))


@pytest.fixture(scope="module")
def sides(served, dynamodb_oracle) -> Iterator[list[Side]]:
    """serve and DynamoDB Local, each with TxAccounts, TxLedger and TxIndexed."""
    made = [Side("serve", served.client()), Side("dynamodb-local", _oracle_client(dynamodb_oracle))]
    for side in made:
        for name, schema in TABLES.items():
            side.client.create_table(TableName=name, **schema)
    yield made
    for side in made:
        for name in TABLES:
            side.client.delete_table(TableName=name)


def empty(side: Side) -> None:
    """Every item of both tables deleted (a test starts from empty tables)."""
    for name, schema in TABLES.items():
        keys = [k["AttributeName"] for k in schema["KeySchema"]]
        for item in side.client.scan(TableName=name, ConsistentRead=True).get("Items", []):
            side.client.delete_item(TableName=name, Key={k: item[k] for k in keys})
