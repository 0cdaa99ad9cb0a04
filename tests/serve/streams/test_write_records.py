"""The write path of serve's stream (docs/streams.md, "The write path"): every item write adds
its record in the same row mutation, so a record is there exactly when its write is, through
crashes. On serve's own instance (streams-writes) and DynamoDB Local 1.25.1 side by side,
boto3 on its defaults (TransactWriteItems sends a ClientRequestToken):

- transactions: each item's record once, only when the transaction commits; a retry under
  the same token writes none again; a cancelled one none.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from botocore.exceptions import ClientError

from ddb2bigtable.bigtable.emulator import stop_process

from . import side_by_side
from .conftest import Streamed, oracle_client, serve_streamed

TABLE, PEER = "WriteRecords", "WriteRecordsPeer"


@pytest.fixture(scope="module")
def writes(bigtable_emulator, tmp_path_factory) -> Iterator[tuple[Streamed, dict[str, str]]]:
    """serve on an instance of its own, its two tables with streams made (their ARNs)."""
    process, running = serve_streamed(tmp_path_factory.mktemp("stream-writes"), "streams-writes")
    yield running, _tables(running.client("dynamodb"))
    stop_process(process)


def _tables(db: Any, names: tuple[str, ...] = (TABLE, PEER)) -> dict[str, str]:
    """Tables keyed (pk S, sk N) with a NEW_AND_OLD_IMAGES stream; their stream ARNs."""
    made = {}
    for name in names:
        answer = db.create_table(TableName=name, BillingMode="PAY_PER_REQUEST",
                                 **side_by_side.TABLES[side_by_side.MAIN],
                                 StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"})
        made[name] = answer["TableDescription"]["LatestStreamArn"]
    return made


def key(pk: str, sk: int = 1) -> dict[str, Any]:
    return side_by_side.key(pk, sk)


def _transactions(db: Any) -> None:
    """Transactions as an application sends them: two tables, an item written twice in a row
    of transactions, a ConditionCheck, a retry under a token, a cancelled one."""
    db.transact_write_items(TransactItems=[{"Put": {"TableName": TABLE, "Item": key("kept") | {"v": {"N": "1"}}}}])
    db.transact_write_items(TransactItems=[
        {"Put": {"TableName": TABLE, "Item": key("t1") | {"v": {"N": "1"}}}},
        {"Update": {"TableName": PEER, "Key": key("p1"), "UpdateExpression": "SET v = :v",
                    "ExpressionAttributeValues": {":v": {"N": "1"}}}},
        {"ConditionCheck": {"TableName": TABLE, "Key": key("kept"), "ConditionExpression": "attribute_exists(v)"}},
    ])
    again = {"TransactItems": [
        {"Update": {"TableName": TABLE, "Key": key("t1"), "UpdateExpression": "SET v = v + :one",
                    "ExpressionAttributeValues": {":one": {"N": "1"}}}},
        {"Delete": {"TableName": PEER, "Key": key("p1")}},
        {"Put": {"TableName": PEER, "Item": key("p2") | {"v": {"N": "2"}}}},
    ], "ClientRequestToken": "write-records-retry"}
    db.transact_write_items(**again)
    db.transact_write_items(**again)  # the same token: answered again, applied once
    try:
        db.transact_write_items(TransactItems=[
            {"Put": {"TableName": TABLE, "Item": key("never") | {"v": {"N": "1"}}}},
            {"Update": {"TableName": TABLE, "Key": key("t1"), "UpdateExpression": "SET v = :v",
                        "ConditionExpression": "v = :other",
                        "ExpressionAttributeValues": {":v": {"N": "9"}, ":other": {"N": "0"}}}},
        ])
        raise AssertionError("the transaction was meant to be cancelled")
    except ClientError as error:
        assert error.response["Error"]["Code"] == "TransactionCanceledException"
    db.transact_write_items(TransactItems=[  # a Put of what is there: no record, as for a PutItem
        {"Put": {"TableName": TABLE, "Item": key("kept") | {"v": {"N": "1"}}}},
        {"Put": {"TableName": PEER, "Item": key("p2") | {"v": {"N": "2"}}}},
    ])


def _records(streams: Any, arns: dict[str, str]) -> dict[str, list[dict[str, Any]]]:
    time.sleep(0.01)  # serve's reader sees a record from the next GetRecords after its commit
    return side_by_side.by_item({t: side_by_side.read_boto3(streams, a) for t, a in arns.items()})


def test_a_transactions_items_each_get_one_record_only_when_it_commits(writes, oracle) -> None:
    served, arns = writes
    db = served.client("dynamodb")
    _transactions(db)
    sides = {"serve": _records(served.client(), arns)}
    local = oracle_client(oracle, "dynamodb")
    local_arns = _tables(local)
    _transactions(local)
    sides["local"] = _records(oracle_client(oracle, "dynamodbstreams"), local_arns)
    assert side_by_side.events(sides["local"]) == {
        f'{TABLE} {{"pk": {{"S": "kept"}}, "sk": {{"N": "1"}}}}': ["INSERT"],
        f'{TABLE} {{"pk": {{"S": "t1"}}, "sk": {{"N": "1"}}}}': ["INSERT", "MODIFY"],
        f'{PEER} {{"pk": {{"S": "p1"}}, "sk": {{"N": "1"}}}}': ["INSERT", "REMOVE"],
        f'{PEER} {{"pk": {{"S": "p2"}}, "sk": {{"N": "1"}}}}': ["INSERT"],
    }
    assert sides["serve"] == sides["local"]
