"""Transactions of one serve worker on the same items take turns (items/turns.py, issue 50),
beside DynamoDB Local: two threads of TransactWriteItems each adding 1 to three items (boto3's
defaults but no retries: a fresh ClientRequestToken each) and two threads of TransactGetItems
of the three. On both sides every write commits and every read answers, each read sees the
three items equal (no half of a transaction), and the items end at the number of commits.
Before, serve (one worker) cancelled 12-17 % of such writes with TransactionConflict (the other
writer's live lock) and 40 % of the reads (rows changed between their two reads)."""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

import pytest
from botocore.exceptions import ClientError

from .conftest import empty

pytestmark = pytest.mark.slow
WRITERS, READERS, EACH = 2, 2, 15
KEYS = [{"id": {"S": f"turn-{k}"}} for k in "xyz"]


def _answer(call: Any) -> str:
    try:
        call()
    except ClientError as error:
        reasons = tuple(r["Code"] for r in error.response.get("CancellationReasons", []))
        return f"{error.response['Error']['Code']} {reasons}"
    return "ok"


def _write(client: Any) -> None:
    client.transact_write_items(TransactItems=[{"Update": {
        "TableName": "TxAccounts", "Key": key, "UpdateExpression": "ADD n :one",
        "ExpressionAttributeValues": {":one": {"N": "1"}}}} for key in KEYS])


def _read(client: Any, seen: list[tuple[int, ...]]) -> None:
    answer = client.transact_get_items(TransactItems=[{"Get": {"TableName": "TxAccounts", "Key": key}}
                                                      for key in KEYS])
    seen.append(tuple(int(r.get("Item", {}).get("n", {}).get("N", "0")) for r in answer["Responses"]))


def _contend(client: Any) -> tuple[Counter[str], list[tuple[int, ...]]]:
    """The writers and readers on one side: every answer by kind, and what each read saw."""
    answers: Counter[str] = Counter()
    seen: list[tuple[int, ...]] = []
    lock, writing = threading.Lock(), threading.Event()

    def writer() -> None:
        for _ in range(EACH):
            answer = _answer(lambda: _write(client))
            with lock:
                answers[f"write {answer}"] += 1

    def reader() -> None:
        while writing.is_set():
            answer = _answer(lambda: _read(client, seen))
            with lock:
                answers[f"read {answer}"] += 1

    writing.set()
    readers = [threading.Thread(target=reader) for _ in range(READERS)]
    writers = [threading.Thread(target=writer) for _ in range(WRITERS)]
    for thread in readers + writers:
        thread.start()
    for thread in writers:
        thread.join()
    writing.clear()
    for thread in readers:
        thread.join()
    return answers, seen


def test_one_workers_transactions_on_the_same_items_wait_instead_of_cancelling(sides) -> None:
    for side in sides:
        empty(side)
        answers, seen = _contend(side.client)
        assert answers["write ok"] == WRITERS * EACH, f"{side.name}: {dict(answers)}"
        assert set(answers) == {"write ok", "read ok"}, f"{side.name}: {dict(answers)}"
        assert all(len(set(values)) == 1 for values in seen), f"{side.name}: a read saw half a transaction"
        _read(side.client, seen)
        assert seen[-1] == (WRITERS * EACH,) * 3, side.name
