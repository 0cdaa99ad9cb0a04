"""A process killed (SIGKILL) or paused (SIGSTOP, then SIGCONT) mid-commit. Transfers between
six accounts (TransactWriteItems: `balance >= :a` on the source, an update of the
destination) run through the balancer while auditors read every account in one
TransactGetItems; one of the two processes behind it is killed and started again, or paused,
every few seconds. Every audit, and the balances at the end, total the starting sum; no
balance goes below zero.

Right after each kill the surviving process is asked directly for every account: a GetItem
must answer within READ_SECONDS (a lock's last committed value, DynamoDB's read-committed
for a plain read of an item a transaction holds), and an UpdateItem of another attribute
within the lock's expiry plus a second, WRITE_SECONDS (the survivor rolls an expired lock
forward or back from its primary itself: serve runs here with its sweep off; issue 50)."""

from __future__ import annotations

import random
import time
from functools import partial
from typing import Any

from ddb2bigtable.serve.transactions.driver import LOCK_SECONDS

from .fronts import Fronts
from .harness import Attempts, Kind, Report, call, client, settled, together, workload

ACCOUNTS, START = 6, 100
SLACK = 2.0  # this shared two-core machine's pauses, added to both bounds below
READ_SECONDS = 0.5 + SLACK
WRITE_SECONDS = LOCK_SECONDS + 1 + SLACK


def _transfer(c: Any, table: str, rng: random.Random) -> Any:
    src, dst = rng.sample(range(ACCOUNTS), 2)
    a = {":a": {"N": str(rng.randint(1, 30))}}
    return lambda: c.transact_write_items(TransactItems=[
        {"Update": {"TableName": table, "Key": {"id": {"S": f"a{src}"}}, "UpdateExpression": "SET balance = balance - :a",
                    "ConditionExpression": "balance >= :a", "ExpressionAttributeValues": a}},
        {"Update": {"TableName": table, "Key": {"id": {"S": f"a{dst}"}}, "UpdateExpression": "SET balance = balance + :a",
                    "ExpressionAttributeValues": a}}])


def _audit(c: Any, table: str) -> Any:
    return lambda: c.transact_get_items(TransactItems=[{"Get": {"TableName": table, "Key": {"id": {"S": f"a{i}"}}}}
                                                       for i in range(ACCOUNTS)])


def _stalls(url: str, attempts: Attempts, table: str, report: Report, after: str) -> None:
    """How long the process at `url` takes to read, then to write, every account (anomalies past the bounds)."""
    c = client(url, attempts, retries={"max_attempts": 1}, read_timeout=WRITE_SECONDS)
    began = time.monotonic()
    for what, bound, op in (
            ("read", READ_SECONDS, lambda k: c.get_item(TableName=table, Key={"id": {"S": k}}, ConsistentRead=True)),
            ("write", WRITE_SECONDS, lambda k: c.update_item(TableName=table, Key={"id": {"S": k}},
                                                             UpdateExpression="SET probed = :t",
                                                             ExpressionAttributeValues={":t": {"N": str(time.time())}}))):
        waiting = {f"a{i}" for i in range(ACCOUNTS)}
        while waiting and time.monotonic() - began < bound + WRITE_SECONDS:
            waiting = {k for k in waiting if call(lambda k=k, op=op: op(k)).kind is not Kind.OK}
            if waiting:
                time.sleep(0.05)
        took = time.monotonic() - began
        with report.lock:
            slowest = f"slowest {what} after a {after}, ms"
            report.counts[slowest] = max(report.counts[slowest], int(took * 1000))
        if waiting or took > bound:
            report.anomaly(f"stall after a {after}: {what}s of {sorted(waiting) or 'every account'} "
                           f"{'never answered' if waiting else 'answered'} within {took:.1f} s (asked {bound:g} s)")


def mid_commit(fronts: Fronts, seconds: float, fault: str, threads: int = 6, every: float = 4.0) -> Report:
    """`fault` is "SIGKILL" or "SIGSTOP"; one every `every` seconds, the first after one second."""
    with workload(f"{fault} mid-commit", fronts) as (report, attempts, table):
        setup = client(fronts.url, attempts)
        for i in range(ACCOUNTS):
            setup.put_item(TableName=table, Item={"id": {"S": f"a{i}"}, "balance": {"N": str(START)}})
        transferrers = [client(fronts.url, attempts) for _ in range(max(1, threads - 2))]
        auditors = [client(fronts.url, attempts) for _ in range(2)]
        stop = time.monotonic() + seconds

        def transferring(c: Any, n: int) -> None:
            rng = random.Random(n)
            while time.monotonic() < stop:
                o = call(_transfer(c, table, rng))
                report.count(f"transfer {o.kind.value} {o.code}".rstrip())

        def auditing(c: Any) -> None:
            while time.monotonic() < stop:
                o = call(_audit(c, table))
                report.count(f"audit {o.kind.value} {o.code}".rstrip())
                if o.kind is Kind.OK:
                    total = sum(int(r["Item"]["balance"]["N"]) for r in o.answer["Responses"])
                    if total != ACCOUNTS * START:
                        report.anomaly(f"audit saw half a transfer: total {total}, not {ACCOUNTS * START}")
                else:
                    time.sleep(random.uniform(0, 0.05))  # noqa: S311 - jitter

        def faulting() -> None:
            time.sleep(1.0)
            while time.monotonic() + 1 < stop:
                victim = random.randrange(2)  # noqa: S311
                time.sleep(random.uniform(0, 0.2))  # noqa: S311 - somewhere in a commit
                survivor = fronts.direct(1 - victim)
                hurt = partial(fronts.kill, victim) if fault == "SIGKILL" else partial(fronts.pause, victim, 1.5)
                together(hurt, partial(_stalls, survivor, attempts, table, report, fault))
                report.count(f"{fault}s")
                time.sleep(every)

        together(*(partial(transferring, c, n) for n, c in enumerate(transferrers)),
                 *(partial(auditing, c) for c in auditors), faulting)
        balances = [int(r["Item"]["balance"]["N"]) for r in settled(_audit(setup, table), WRITE_SECONDS + 10)["Responses"]]
        if sum(balances) != ACCOUNTS * START or min(balances) < 0:
            report.anomaly(f"balances after the run: {balances} (total {sum(balances)}, not {ACCOUNTS * START})")
    return report
