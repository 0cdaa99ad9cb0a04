"""Answers under contention, serve beside DynamoDB Local (issue 50): four threads run
TransactWriteItems with boto3's defaults (a fresh ClientRequestToken each), each of a
private item of its own and one item all share, while a fifth updates the shared item
with UpdateItem. Every answer is a commit or a TransactionCanceledException whose
TransactionConflict falls on the shared item's action, never the private one's, and never
a TransactionInProgressException (no token is used twice). Before issue 50 serve answered
TransactionInProgressException to fresh tokens and put the conflict on the wrong action."""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

import pytest
from botocore.exceptions import ClientError

from .conftest import empty

pytestmark = pytest.mark.slow
THREADS, EACH = 4, 15
SHARED = {"id": {"S": "shared"}}


def _transactions(client: Any, n: int, answers: Counter, lock: threading.Lock) -> None:
    for _ in range(EACH):
        actions = [{"Update": {"TableName": "TxAccounts", "Key": {"id": {"S": f"own-{n}"}},
                               "UpdateExpression": "ADD n :one", "ExpressionAttributeValues": {":one": {"N": "1"}}}},
                   {"Update": {"TableName": "TxAccounts", "Key": SHARED, "UpdateExpression": "ADD n :one",
                               "ExpressionAttributeValues": {":one": {"N": "1"}}}}]
        try:
            client.transact_write_items(TransactItems=actions)
            answer = "committed"
        except ClientError as error:
            code = error.response["Error"]["Code"]
            reasons = tuple(r["Code"] for r in error.response.get("CancellationReasons", []))
            answer = f"{code} {reasons}" if reasons else code
        with lock:
            answers[answer] += 1


def _writer(client: Any, stop: threading.Event) -> None:
    while not stop.is_set():
        try:
            client.update_item(TableName="TxAccounts", Key=SHARED, UpdateExpression="SET w = :w",
                               ExpressionAttributeValues={":w": {"N": "1"}})
        except ClientError:  # a transaction holds it: DynamoDB's TransactionConflictException
            pass


def test_conflicts_fall_on_the_contended_action_and_fresh_tokens_are_never_in_progress(sides):
    for side in sides:
        empty(side)
        answers: Counter = Counter()
        lock, stop = threading.Lock(), threading.Event()
        writer = threading.Thread(target=_writer, args=(side.client, stop))
        threads = [threading.Thread(target=_transactions, args=(side.client, n, answers, lock)) for n in range(THREADS)]
        writer.start()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
        stop.set()
        writer.join(30)
        allowed = {"committed", "TransactionCanceledException ('None', 'TransactionConflict')"}
        assert set(answers) <= allowed, (side.name, answers)
        assert answers["committed"] > 0, (side.name, answers)
