"""Transactions on a stage served without `up` (issue 50): its spec tables were never made,
and the application creates its own, as a DynamoDB Local user does. boto3 sends a
ClientRequestToken with every TransactWriteItems; its record lives in serve's token table,
made on demand, never in a spec table (before issue 50: ResourceNotFoundException for the
stage's first planned table, a table the request never named)."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from botocore.exceptions import ClientError

from ddb2bigtable.bigtable.emulator import stop_process

from ...conftest import write_project
from ..client_calls import PARTITION_ONLY
from ..conftest import Served, start_serve

SPEC = """
version: 1
instance: {id: INSTANCE, display_name: Never up}
tables:
  - id: planned
    source:
      table: Planned
      region: us-west-2
      key: {partition: {name: pk, type: S}}
      billing: provisioned
      reads: 5
      writes: 5
      item_size_kb: 1
      storage_gb: 0.001
"""


def _never_up(tmp_path_factory, instance: str) -> Iterator[Served]:
    """serve (two workers, sweep off) on a stage whose one spec table was never made, in an
    instance of its own."""
    root = tmp_path_factory.mktemp(instance)
    write_project(root, {"planned": SPEC.replace("INSTANCE", instance)},
                  {"emulator": True, "regions": "home", "deletion_protection": False, "autoscaling": False},
                  stage_name="local")
    process, endpoint = start_serve(root, "local", "--workers", "2", "--txn-sweep-seconds", "86400")
    yield Served(root, endpoint, process)
    stop_process(process)


@pytest.fixture(scope="module")
def never_up(bigtable_emulator, tmp_path_factory) -> Iterator[Served]:
    yield from _never_up(tmp_path_factory, "never-up")


@pytest.fixture(scope="module")
def fresh(bigtable_emulator, tmp_path_factory) -> Iterator[Served]:
    yield from _never_up(tmp_path_factory, "never-up-race")


def test_the_first_transactions_under_tokens_race_to_make_the_token_table_and_all_commit(fresh):
    """Eight first transactions at once, over two workers: each may find the token table
    missing and create it; every one commits (before: those that lost the creation race
    answered 500)."""
    client = fresh.client()
    client.create_table(TableName="Race", **PARTITION_ONLY)
    start, answers = threading.Barrier(8), []

    def first(n: int) -> None:
        mine = fresh.client()
        start.wait(10)
        try:
            mine.transact_write_items(TransactItems=[{"Put": {"TableName": "Race", "Item": {"p": {"S": f"r{n}"}}}},
                                                     {"Put": {"TableName": "Race", "Item": {"p": {"S": f"s{n}"}}}}])
            answers.append("ok")
        except ClientError as error:
            answers.append(error.response["Error"]["Code"])

    threads = [threading.Thread(target=first, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert answers == ["ok"] * 8


def test_transactions_on_created_tables_of_a_stage_never_up(never_up):
    client = never_up.client()
    client.create_table(TableName="Wallets", **PARTITION_ONLY)
    client.create_table(TableName="Ledger", **PARTITION_ONLY)
    client.put_item(TableName="Wallets", Item={"p": {"S": "a"}, "n": {"N": "100"}})
    transfer = [
        {"Update": {"TableName": "Wallets", "Key": {"p": {"S": "a"}}, "UpdateExpression": "SET n = n - :d",
                    "ConditionExpression": "n >= :d", "ExpressionAttributeValues": {":d": {"N": "30"}}}},
        {"Put": {"TableName": "Ledger", "Item": {"p": {"S": "t1"}, "amount": {"N": "30"}},
                 "ConditionExpression": "attribute_not_exists(p)"}}]
    client.transact_write_items(TransactItems=transfer)  # botocore fills in the ClientRequestToken
    got = client.transact_get_items(TransactItems=[{"Get": {"TableName": "Wallets", "Key": {"p": {"S": "a"}}}},
                                                   {"Get": {"TableName": "Ledger", "Key": {"p": {"S": "t1"}}}}])
    assert [r["Item"].get("n", r["Item"].get("amount")) for r in got["Responses"]] == [{"N": "70"}, {"N": "30"}]
    with pytest.raises(client.exceptions.TransactionCanceledException):  # the ledger entry is there now
        client.transact_write_items(TransactItems=transfer)
    for _ in range(2):  # a retry under the same token is answered, not applied again
        client.transact_write_items(TransactItems=transfer[:1], ClientRequestToken="same-token")
    assert client.get_item(TableName="Wallets", Key={"p": {"S": "a"}})["Item"]["n"] == {"N": "40"}  # applied once
