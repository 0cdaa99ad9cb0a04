"""The bank test (issue 44's acceptance): 40 accounts and a ledger written in the same
transactions; 8 transfer threads over two serve processes on one emulator, each transfer a
TransactWriteItems (`balance >= :amount` on the source, an Update of the destination, a
conditional Put of the ledger entry) under a ClientRequestToken; 2 auditors reading all 40
accounts with TransactGetItems, retried after a TransactionConflict as DynamoDB asks of its
callers; one serve process killed with SIGKILL mid-run and started again. Every audit totals
the starting sum; afterwards the ledger explains every balance and no balance is negative.
The same run against DynamoDB Local (no process killed there)."""

from __future__ import annotations

import itertools
import os
import random
import signal
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from ddb2bigtable.bigtable.emulator import stop_process

from ..conftest import STAGE, start_serve

ACCOUNTS, START, SECONDS = 40, 100, 8.0
BANK, LEDGER = "BankAccounts", "BankLedger"
# what the SDK retries itself (TransactionInProgressException: the token's transaction is still
# held by a worker that was killed, until its lock expires)
RETRYABLE = ("InternalServerError", "ProvisionedThroughputExceededException", "ThrottlingException",
             "TransactionInProgressException")


def _client(endpoint: str) -> Any:
    return boto3.client("dynamodb", endpoint_url=endpoint, region_name="us-west-2", aws_access_key_id="bank",
                        aws_secret_access_key="bank", config=Config(retries={"max_attempts": 1}, connect_timeout=2,
                                                                    read_timeout=30, max_pool_connections=16))


class Endpoints:
    """The endpoints a thread may use, the second one perhaps down for a while."""

    def __init__(self, urls: list[str]):
        self.urls = urls
        self.lock = threading.Lock()

    def pick(self, n: int) -> str:
        with self.lock:
            return self.urls[n % len(self.urls)]

    def replace(self, old: str, new: str) -> None:
        with self.lock:
            self.urls = [new if u == old else u for u in self.urls]


def _retrying(endpoints: Endpoints, n: int, call: Callable[[Any], Any]) -> Any:
    """`call(client)` on one endpoint, then the other, until it answers something other than
    a connection failure or a retryable error (the same request, so the same token)."""
    deadline = time.monotonic() + 30
    for attempt in itertools.count():
        if time.monotonic() > deadline:
            break
        try:
            return call(_client(endpoints.pick(n + attempt)))
        except BotoCoreError:  # connection refused or reset: the process was killed
            time.sleep(0.05)
        except ClientError as error:
            if error.response["Error"]["Code"] not in RETRYABLE:
                raise
            time.sleep(0.05)
    raise AssertionError("no endpoint answered")


def _transfer(endpoints: Endpoints, n: int, rng: random.Random, done: list[dict[str, Any]]) -> None:
    src, dst = rng.sample(range(ACCOUNTS), 2)
    amount = rng.randint(1, 40)
    entry = str(uuid.uuid4())
    items = [{"Update": {"TableName": BANK, "Key": {"id": {"S": f"a{src}"}},
                        "UpdateExpression": "SET balance = balance - :a", "ConditionExpression": "balance >= :a",
                        "ExpressionAttributeValues": {":a": {"N": str(amount)}}}},
             {"Update": {"TableName": BANK, "Key": {"id": {"S": f"a{dst}"}},
                         "UpdateExpression": "SET balance = balance + :a",
                         "ExpressionAttributeValues": {":a": {"N": str(amount)}}}},
             {"Put": {"TableName": LEDGER, "Item": {"id": {"S": entry}, "src": {"S": f"a{src}"},
                                                    "dst": {"S": f"a{dst}"}, "amount": {"N": str(amount)}},
                      "ConditionExpression": "attribute_not_exists(id)"}}]
    try:
        _retrying(endpoints, n, lambda c: c.transact_write_items(TransactItems=items, ClientRequestToken=entry))
        done.append({"src": src, "dst": dst, "amount": amount})
    except ClientError as error:  # cancelled: a failed condition or a conflict, nothing applied
        assert error.response["Error"]["Code"] == "TransactionCanceledException", error.response


def _audit(endpoints: Endpoints, n: int, stop: float) -> int | None:
    """The sum of all balances as one TransactGetItems saw them, tried again after a jittered,
    growing pause while a transfer holds an account (DynamoDB cancels a TransactGetItems that
    meets one at once, with TransactionConflict); None: the run ended first."""
    gets = [{"Get": {"TableName": BANK, "Key": {"id": {"S": f"a{i}"}}}} for i in range(ACCOUNTS)]
    pause = 0.005
    while time.monotonic() < stop:
        try:
            answer = _retrying(endpoints, n, lambda c: c.transact_get_items(TransactItems=gets))
        except ClientError as error:
            assert error.response["Error"]["Code"] == "TransactionCanceledException", error.response
            assert {r["Code"] for r in error.response["CancellationReasons"]} <= {"TransactionConflict", "None"}
            time.sleep(random.uniform(0, pause))  # noqa: S311 - jitter
            pause = min(pause * 2, 0.1)
            continue
        return sum(int(r["Item"]["balance"]["N"]) for r in answer["Responses"])
    return None


def _run(endpoints: Endpoints, kill: Callable[[], None] | None) -> tuple[list[dict[str, Any]], list[int]]:
    transfers: list[dict[str, Any]] = []
    audits: list[int] = []
    stop = time.monotonic() + SECONDS

    def transferring(n: int) -> None:
        rng = random.Random(n)
        while time.monotonic() < stop:
            _transfer(endpoints, n, rng, transfers)

    def auditing(n: int) -> None:
        while time.monotonic() < stop:
            total = _audit(endpoints, n, stop)
            if total is not None:
                audits.append(total)

    threads = [threading.Thread(target=transferring, args=(n,)) for n in range(8)]
    threads += [threading.Thread(target=auditing, args=(n,)) for n in range(2)]
    for t in threads:
        t.start()
    if kill is not None:
        time.sleep(SECONDS / 3)
        kill()
    for t in threads:
        t.join()
    return transfers, audits


def _settled_balances(endpoints: Endpoints) -> dict[str, int]:
    """Every balance once the locks a killed worker left have expired and been settled."""
    deadline = time.monotonic() + 30
    gets = [{"Get": {"TableName": BANK, "Key": {"id": {"S": f"a{i}"}}}} for i in range(ACCOUNTS)]
    while True:
        try:
            answer = _client(endpoints.pick(0)).transact_get_items(TransactItems=gets)
            return {r["Item"]["id"]["S"]: int(r["Item"]["balance"]["N"]) for r in answer["Responses"]}
        except ClientError:
            if time.monotonic() > deadline:
                raise
            time.sleep(1)


def _check(endpoints: Endpoints, transfers: list[dict[str, Any]], audits: list[int]) -> None:
    print(f"\n{len(transfers)} transfers committed, {len(audits)} audits of {ACCOUNTS * START}")
    assert audits, "no audit was answered"
    assert set(audits) == {ACCOUNTS * START}, "an audit saw half a transfer"
    assert len(transfers) > 50
    balances = _settled_balances(endpoints)
    client = _client(endpoints.pick(0))
    ledger, start = [], None
    while True:
        page = client.scan(TableName=LEDGER, ConsistentRead=True, **({"ExclusiveStartKey": start} if start else {}))
        ledger += page["Items"]
        start = page.get("LastEvaluatedKey")
        if not start:
            break
    expected = {f"a{i}": START for i in range(ACCOUNTS)}
    for e in ledger:
        expected[e["src"]["S"]] -= int(e["amount"]["N"])
        expected[e["dst"]["S"]] += int(e["amount"]["N"])
    assert balances == expected, "the ledger does not explain the balances"
    assert min(balances.values()) >= 0
    assert len(ledger) >= len(transfers)  # every answered transfer is there (and any whose answer was lost)


@contextmanager
def _bank(client: Any) -> Iterator[None]:
    client.create_table(TableName=BANK, KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
                        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
                        BillingMode="PAY_PER_REQUEST")
    client.create_table(TableName=LEDGER, KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
                        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
                        BillingMode="PAY_PER_REQUEST")
    try:
        for i in range(ACCOUNTS):
            client.put_item(TableName=BANK, Item={"id": {"S": f"a{i}"}, "balance": {"N": str(START)}})
        yield
    finally:
        client.delete_table(TableName=BANK)
        client.delete_table(TableName=LEDGER)


@pytest.mark.slow
def test_the_bank_on_two_serve_processes_one_killed_mid_run(served) -> None:
    first, first_url = start_serve(served.root, STAGE)
    second, second_url = start_serve(served.root, STAGE)
    endpoints = Endpoints([first_url, second_url])
    restarted: list[Any] = []

    def kill() -> None:
        os.kill(second.pid, signal.SIGKILL)
        second.wait()
        process, url = start_serve(served.root, STAGE)
        restarted.append(process)
        endpoints.replace(second_url, url)

    try:
        with _bank(_client(first_url)):
            transfers, audits = _run(endpoints, kill)
            _check(endpoints, transfers, audits)
    finally:
        for process in (first, second, *restarted):
            stop_process(process)
    assert restarted


@pytest.mark.slow
def test_the_bank_on_dynamodb_local(dynamodb_oracle) -> None:
    endpoints = Endpoints([dynamodb_oracle.endpoint])
    with _bank(_client(dynamodb_oracle.endpoint)):
        transfers, audits = _run(endpoints, None)
        _check(endpoints, transfers, audits)
