"""Idempotent retries: a TransactWriteItems that adds 1 to a counter and puts an entry of its
own (`attribute_not_exists`), sent with a ClientRequestToken to one process that is then
paused past the client's read timeout (botocore retries it under the same token, and gives
up), or killed a moment after the request went out. The application then sends the same
request under the same token again, through the balancer, until it is acknowledged (and once more if the
first was)
(TransactionInProgressException says the first is still settling: DynamoDB asks for the
same request again). Each round must be applied exactly once: the counter equals the rounds,
and the retry is acknowledged, never IdempotentParameterMismatch or a failed condition."""

from __future__ import annotations

import random
import threading
import time
import uuid
from typing import Any

from .crashes import WRITE_SECONDS
from .fronts import Fronts
from .harness import Attempts, Kind, Outcome, Report, call, client, settled, workload

READ_TIMEOUT = 1.0  # the impatient client's
PAUSE = 3 * READ_TIMEOUT + 4  # past botocore's three attempts and the pauses between them
RETRY_SECONDS = WRITE_SECONDS + 5  # a killed process's lock expires, then is rolled forward or back


def _request(table: str, token: str) -> dict[str, Any]:
    return {"ClientRequestToken": token, "TransactItems": [
        {"Update": {"TableName": table, "Key": {"id": {"S": "counter"}}, "UpdateExpression": "ADD n :one",
                    "ExpressionAttributeValues": {":one": {"N": "1"}}}},
        {"Put": {"TableName": table, "Item": {"id": {"S": f"entry-{token}"}},
                 "ConditionExpression": "attribute_not_exists(id)"}}]}


def _first(fronts: Fronts, attempts: Attempts, request: dict[str, Any], fault: str, n: int) -> Outcome:
    """The first request's outcome at process `n % 2` as it is paused past the client's patience
    (before the request on odd rounds, a moment after it went out on even ones) or killed."""
    victim = n % 2
    first = client(fronts.direct(victim), attempts, read_timeout=READ_TIMEOUT, connect_timeout=READ_TIMEOUT)
    answer: list[Outcome] = []
    sending = threading.Thread(target=lambda: answer.append(call(lambda: first.transact_write_items(**request))))
    if fault == "timeout":
        pausing = threading.Thread(target=fronts.pause, args=(victim, PAUSE))
        for step in (pausing, sending) if n % 2 else (sending, pausing):
            step.start()
            time.sleep(random.uniform(0, 0.02))  # noqa: S311 - in the request's way, or part-done
        pausing.join()
    else:
        sending.start()
        time.sleep(random.uniform(0, 0.05))  # noqa: S311 - somewhere in the commit
        fronts.kill(victim)
    sending.join()
    return answer[0]


def _resend(again: Any, request: dict[str, Any], first: Outcome, report: Report, n: int) -> None:
    """The same request under the same token until acknowledged, and once more if the first was."""
    deadline, retry, sent = time.monotonic() + RETRY_SECONDS, first, 0
    while (retry.kind is not Kind.OK or not sent) and time.monotonic() < deadline:
        sent += 1
        retry = call(lambda: again.transact_write_items(**request))
        report.count(f"retry {retry.kind.value} {retry.code}".rstrip())
        if retry.kind is Kind.REFUSED:
            report.anomaly(f"retry refused: round {n}: {retry.code} {retry.reasons}")
            return
        if retry.kind is not Kind.OK:
            time.sleep(0.2)
    if retry.kind is Kind.AMBIGUOUS:
        report.anomaly(f"retry never acknowledged: round {n}: {retry.code} for {RETRY_SECONDS:g} s")


def retried(fronts: Fronts, seconds: float, fault: str, least: int = 2) -> Report:
    """`fault`: "timeout" (SIGSTOP past the client's read timeout) or "SIGKILL"; rounds until
    `seconds` have passed, at least `least` (each process the victim once)."""
    with workload(f"retry after {fault}", fronts) as (report, attempts, table):
        again = client(fronts.url, attempts)
        stop, rounds = time.monotonic() + seconds, 0
        while rounds < least or time.monotonic() < stop:
            request = _request(table, str(uuid.uuid4()))
            first = _first(fronts, attempts, request, fault, rounds)
            report.count(f"first {first.kind.value} {first.code}".rstrip())
            _resend(again, request, first, report, rounds)
            rounds += 1
            item = settled(lambda: again.get_item(TableName=table, Key={"id": {"S": "counter"}}, ConsistentRead=True))
            applied = int(item.get("Item", {}).get("n", {}).get("N", "0"))
            if applied != rounds:
                report.anomaly(f"applied other than once: after round {rounds - 1} the counter is {applied}, "
                               f"not {rounds}")
                break
        report.count("rounds", rounds)
    return report
