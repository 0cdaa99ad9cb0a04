"""Write skew: two doctors on call, each going off call only if the other stays on. Each round
both are put on call, then two clients at once each send one TransactWriteItems: a
ConditionCheck that the other is on call and an Update setting itself off (if it is on).
Serializable transactions let at most one of the two commit; both off afterwards is write
skew (snapshot isolation's anomaly). `threads` clients make `threads // 2` pairs, each pair
on its own two items, in rounds until `seconds` have passed."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from .fronts import Fronts
from .harness import Kind, Report, call, client, together, workload

ON, OFF = {":on": {"BOOL": True}}, {":off": {"BOOL": False}}


def _off_call(c: Any, table: str, me: str, other: str, guarded: bool) -> Any:
    check = [{"ConditionCheck": {"TableName": table, "Key": {"id": {"S": other}}, "ConditionExpression": "oncall = :on",
                                 "ExpressionAttributeValues": ON}}] if guarded else []
    return lambda: c.transact_write_items(TransactItems=[*check, {"Update": {
        "TableName": table, "Key": {"id": {"S": me}}, "UpdateExpression": "SET oncall = :off",
        "ConditionExpression": "oncall = :on", "ExpressionAttributeValues": ON | OFF}}])


def write_skew(fronts: Fronts, seconds: float, threads: int = 4, guarded: bool = True) -> Report:
    """`guarded=False` leaves the ConditionCheck out: write skew by design, which the checker must find."""
    with workload("write skew", fronts) as (report, attempts, table):
        pairs = [[client(fronts.url, attempts), client(fronts.url, attempts)] for _ in range(max(1, threads // 2))]
        stop = time.monotonic() + seconds

        def pair(p: int) -> None:
            a, b, clients = f"d{p}a", f"d{p}b", pairs[p]
            with ThreadPoolExecutor(2) as both:
                r = 0
                while time.monotonic() < stop:
                    put = [call(lambda d=d: clients[0].put_item(TableName=table, Item={"id": {"S": d},
                                                                                        "oncall": ON[":on"]}))
                           for d in (a, b)]
                    if any(o.kind is not Kind.OK for o in put):
                        report.count("rounds not begun")  # its 5xx, if one, is an anomaly already
                        continue
                    sent = [both.submit(call, _off_call(clients[0], table, a, b, guarded)),
                            both.submit(call, _off_call(clients[1], table, b, a, guarded))]
                    outcomes = [s.result() for s in sent]
                    for o in outcomes:
                        report.count(f"{o.kind.value} {o.code}".rstrip())
                    read = [call(lambda d=d: clients[0].get_item(TableName=table, Key={"id": {"S": d}},
                                                                 ConsistentRead=True)) for d in (a, b)]
                    if any(o.kind is not Kind.OK for o in read):
                        report.count("rounds not read")
                        continue
                    oncall = [o.answer["Item"]["oncall"]["BOOL"] for o in read]
                    if not any(oncall):
                        report.anomaly(f"write skew: pair {p} round {r}: both off call "
                                       f"({[o.kind.value for o in outcomes]})")
                    elif sum(o.kind is Kind.OK for o in outcomes) == 2:
                        report.anomaly(f"write skew: pair {p} round {r}: both acknowledged, one applied")
                    report.count("rounds")
                    r += 1

        together(*(lambda p=p: pair(p) for p in range(len(pairs))))
    return report
