"""What the tests do through a boto3 client of serve: make a table for one test module,
page through a Query or Scan, and read the error a failing call raised, as a user's code
reads it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest
from botocore.exceptions import ClientError

PARTITION_ONLY = {"KeySchema": [{"AttributeName": "p", "KeyType": "HASH"}],
                  "AttributeDefinitions": [{"AttributeName": "p", "AttributeType": "S"}],
                  "BillingMode": "PAY_PER_REQUEST"}
PARTITION_AND_SORT = {"KeySchema": [{"AttributeName": "p", "KeyType": "HASH"},
                                    {"AttributeName": "c", "KeyType": "RANGE"}],
                      "AttributeDefinitions": [{"AttributeName": "p", "AttributeType": "S"},
                                               {"AttributeName": "c", "AttributeType": "N"}],
                      "BillingMode": "PAY_PER_REQUEST"}


@contextmanager
def created_table(served, name: str, schema: dict) -> Iterator:
    """A client of serve with table `name` created through it, deleted again afterwards
    (tables created through serve live in the session's shared instance)."""
    client = served.client()
    client.create_table(TableName=name, **schema)
    try:
        yield client
    finally:
        client.delete_table(TableName=name)


def error_of(call, **kwargs) -> tuple[str, str]:
    """The error code and message of `call(**kwargs)`, which must fail."""
    with pytest.raises(ClientError) as caught:
        call(**kwargs)
    return caught.value.response["Error"]["Code"], caught.value.response["Error"]["Message"]


def pages(call: Callable[..., dict], **request) -> Iterator[dict]:
    """Every page of the Query or Scan `call(**request)`, each asked from where the one
    before ended, as an application pages."""
    start = None
    while True:
        page = call(**request, **({"ExclusiveStartKey": start} if start else {}))
        yield page
        start = page.get("LastEvaluatedKey")
        if not start:
            return
