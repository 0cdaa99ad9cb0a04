"""The write path of serve's stream (docs/streams.md, "The write path"): every item write adds
its record in the same row mutation, so a record is there exactly when its write is, through
crashes. On serve's own instance (streams-writes) and DynamoDB Local 1.25.1 side by side,
boto3 on its defaults (TransactWriteItems sends a ClientRequestToken):

- transactions: each item's record once, only when the transaction commits; a retry under
  the same token writes none again; a cancelled one none;
- a serve process SIGKILLed mid-transaction: the survivor rolls each transaction forward or
  back, and each item's records chain (each one's OldImage the one before's NewImage, the
  last one's NewImage the item as read): no record lost, doubled or without its write;
- TTL: an expired item nobody writes is deleted for good by a worker's sweep, with its
  REMOVE by the service, and an item not expired stays.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from botocore.exceptions import ClientError
from google.cloud.bigtable.data import BigtableDataClient, BigtableDataClientAsync, ReadRowsQuery
from google.cloud.bigtable.data import row_filters as rf

from ddb2bigtable.bigtable.emulator import stop_process
from ddb2bigtable.serve.tables.table_requests import bigtable_id
from ddb2bigtable.serve.transactions import cells
from ddb2bigtable.spec.families import STREAM_FAMILY

from ..conftest import start_serve
from ..crashes import kill_while_locked, written_again
from . import side_by_side
from .conftest import STAGE, Streamed, oracle_client, serve_streamed

TABLE, PEER, EXPIRING = "WriteRecords", "WriteRecordsPeer", "WriteRecordsTtl"
GROUPS, ITEMS = 3, 6


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


def _increments(db: Any, group: int, stop: threading.Event, answers: Counter) -> None:
    """+1 on every item of the group, in one transaction, until told to stop or the process dies."""
    while not stop.is_set():
        try:
            db.transact_write_items(TransactItems=[{"Update": {
                "TableName": TABLE, "Key": key(f"crash-{group}", i), "UpdateExpression": "ADD n :one",
                "ExpressionAttributeValues": {":one": {"N": "1"}}}} for i in range(ITEMS)])
            answers["committed"] += 1
        except Exception as error:  # noqa: BLE001 - the process is being killed: any answer or none
            answers[type(error).__name__] += 1


def _kill_while_locked(served: Streamed, victim: Any, answers: Counter) -> int:
    """SIGKILL to `victim` while Bigtable shows one of the items locked, once a few
    transactions have committed; how many are locked once it is dead."""
    async def kill() -> int:
        async with BigtableDataClientAsync(project=served.project) as bigtable:
            handle = bigtable.get_table(served.instance, bigtable_id(TABLE))

            async def locked() -> int:
                return sum(1 for row in await handle.read_rows(_locks()) if cells.is_locked(row))
            return await kill_while_locked(victim, locked, ready=lambda: answers["committed"] >= 2 * GROUPS)
    return asyncio.run(kill())


def _locks() -> Any:
    """The table's rows as the reserved family holds them (locks, token records)."""
    return ReadRowsQuery(row_filter=rf.FamilyNameRegexFilter(cells.FAMILY))


@pytest.mark.slow
def test_a_worker_killed_mid_transaction_leaves_each_items_records_once(writes) -> None:
    served, arns = writes
    victim, victim_url = start_serve(served.root, STAGE, "--txn-sweep-seconds", "86400")
    survivor, survivor_url = start_serve(served.root, STAGE, "--txn-sweep-seconds", "86400")
    try:
        doomed = Streamed(served.root, victim_url, served.project, served.instance).client("dynamodb")
        db = Streamed(served.root, survivor_url, served.project, served.instance).client("dynamodb")
        streams = Streamed(served.root, survivor_url, served.project, served.instance).client()
        arn = arns[TABLE]
        stop, answers = threading.Event(), Counter()
        threads = [threading.Thread(target=_increments, args=(doomed, g, stop, answers)) for g in range(GROUPS)]
        for thread in threads:
            thread.start()
        locked = _kill_while_locked(served, victim, answers)
        stop.set()
        for thread in threads:
            thread.join(10)
        assert locked > 0, f"no item was locked when the worker died ({dict(answers)}): the test proved nothing"
        pending = written_again(db, TABLE, [key(f"crash-{g}", i) for g in range(GROUPS) for i in range(ITEMS)],
                                time.monotonic() + 30)  # each item written once more: its lock settled first
        assert not pending, f"{len(pending)} item(s) still locked 30 s after the kill"
        records = side_by_side.read_boto3(streams, arn)
        for g in range(GROUPS):
            for i in range(ITEMS):
                item = db.get_item(TableName=TABLE, Key=key(f"crash-{g}", i), ConsistentRead=True)["Item"]
                mine = [r["dynamodb"] for r in records if r["dynamodb"]["Keys"] == key(f"crash-{g}", i)]
                counts = [int(r["NewImage"].get("n", {"N": "0"})["N"]) for r in mine]
                assert counts[:-1] == list(range(1, len(counts))), (g, i, counts)  # +1 each, none lost or twice
                assert all(later.get("OldImage") == earlier["NewImage"]
                           for earlier, later in zip(mine, mine[1:], strict=False))
                assert mine[-1]["NewImage"] == item and "w" in item  # the last record is the item as it is
        assert len({int(r["dynamodb"]["NewImage"]["n"]["N"]) for r in records
                    if r["dynamodb"]["Keys"] == key("crash-0", 0)}) >= 2, "no transaction committed before the kill"
    finally:
        stop_process(victim)
        stop_process(survivor)


def test_an_expired_item_nobody_writes_is_deleted_for_good_with_its_ttl_remove(writes) -> None:
    served, _ = writes
    db, streams = served.client("dynamodb"), served.client()
    arn = _tables(db, (EXPIRING,))[EXPIRING]
    db.update_time_to_live(TableName=EXPIRING, TimeToLiveSpecification={"Enabled": True, "AttributeName": "expires"})
    now = int(time.time())
    db.put_item(TableName=EXPIRING, Item=key("soon") | {"expires": {"N": str(now + 1)}})
    db.put_item(TableName=EXPIRING, Item=key("later") | {"expires": {"N": str(now + 3600)}})
    sweeper, _ = start_serve(served.root, STAGE, "--txn-sweep-seconds", "1")  # a worker whose sweep comes often
    try:
        deadline, found = time.monotonic() + 30, {}
        while time.monotonic() < deadline:
            found = side_by_side.events(_records(streams, {EXPIRING: arn}))
            if len(found.get(f'{EXPIRING} {{"pk": {{"S": "soon"}}, "sk": {{"N": "1"}}}}', [])) == 2:
                break
            time.sleep(0.5)
    finally:
        stop_process(sweeper)
    assert found == {f'{EXPIRING} {{"pk": {{"S": "soon"}}, "sk": {{"N": "1"}}}}': ["INSERT", "REMOVE by TTL"],
                     f'{EXPIRING} {{"pk": {{"S": "later"}}, "sk": {{"N": "1"}}}}': ["INSERT"]}
    rows = BigtableDataClient(project=served.project).get_table(served.instance, bigtable_id(EXPIRING)).read_rows(
        ReadRowsQuery())
    held = {bytes(row.row_key): {c.family for c in row} for row in rows}
    assert [families for key_, families in held.items() if b"soon" in key_] == [{STREAM_FAMILY}]  # its record alone
    assert [families - {STREAM_FAMILY} for key_, families in held.items() if b"later" in key_] != [set()]
