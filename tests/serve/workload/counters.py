"""Plain ADD mixed with transactions: some clients add 1 to a shared counter with UpdateItem
(ADD, no condition), others add 1 to it and to a counter of their own in one
TransactWriteItems. Afterwards the shared counter equals the increments acknowledged, plus
at most the ambiguous ones (a timeout, a 5xx, a cut connection: applied or not, the client
cannot know; counted apart, and caused by killing a process mid-run if asked), and each
client's own counter equals its transactions acknowledged, plus at most its ambiguous ones.
botocore retries a 5xx or a cut connection itself, which applies a plain ADD twice if the
first was applied: every such hidden attempt widens the bound too (a 5xx is an anomaly of
its own besides)."""

from __future__ import annotations

import random
import time
from collections import Counter
from functools import partial
from typing import Any

from .fronts import Fronts
from .harness import Kind, Report, call, client, settled, together, workload

SHARED = "shared"


def _add(table: str, key: str) -> dict[str, Any]:
    return {"TableName": table, "Key": {"id": {"S": key}}, "UpdateExpression": "ADD n :one",
            "ExpressionAttributeValues": {":one": {"N": "1"}}}


def mixed_counters(fronts: Fronts, seconds: float, threads: int = 4, kill: bool = False) -> Report:
    """`kill`: one of the two processes is killed (SIGKILL) a third of the way in and started again,
    so some answers are lost on the way: ambiguous."""
    with workload("mixed counters" + (" and a SIGKILL" if kill else ""), fronts) as (report, attempts, table):
        plains = [client(fronts.url, attempts) for _ in range(max(1, threads // 2))]
        transactors = [client(fronts.url, attempts) for _ in range(max(1, threads - threads // 2))]
        stop = time.monotonic() + seconds
        acked, ambiguous = Counter[str](), Counter[str]()

        def tally(key: str, kind: Kind) -> None:
            with report.lock:
                if kind is Kind.OK:
                    acked[key] += 1
                elif kind is Kind.AMBIGUOUS:
                    ambiguous[key] += 1

        def plain(c: Any) -> None:
            while time.monotonic() < stop:
                o = call(lambda: c.update_item(**_add(table, SHARED)))
                report.count(f"UpdateItem {o.kind.value} {o.code}".rstrip())
                tally(SHARED, o.kind)

        def transacting(c: Any, n: int) -> None:
            own = f"own{n}"
            while time.monotonic() < stop:
                o = call(lambda: c.transact_write_items(TransactItems=[{"Update": _add(table, SHARED)},
                                                                       {"Update": _add(table, own)}]))
                report.count(f"TransactWriteItems {o.kind.value} {o.code}".rstrip())
                tally(SHARED, o.kind)
                tally(own, o.kind)

        def killing() -> None:
            time.sleep(seconds / 3)
            fronts.kill(random.randrange(2))  # noqa: S311
            report.count("SIGKILLs")

        together(*(partial(plain, c) for c in plains), *(partial(transacting, c, n) for n, c in enumerate(transactors)),
                 *([killing] if kill else []))
        reader = client(fronts.url, attempts)
        hidden = sum(n for what, n in report.counts.items()
                     if what.startswith("attempt ") and not what.startswith(("attempt 2", "attempt 4")))
        for key in sorted(set(acked) | set(ambiguous)):
            item = settled(lambda k=key: reader.get_item(TableName=table, Key={"id": {"S": k}}, ConsistentRead=True))
            final = int(item.get("Item", {}).get("n", {}).get("N", "0"))
            high = acked[key] + ambiguous[key] + hidden
            report.count(f"ambiguous {key}", ambiguous[key])
            if not acked[key] <= final <= high:
                report.anomaly(f"lost or doubled increments: {key} = {final}, acknowledged {acked[key]}, "
                               f"ambiguous {ambiguous[key]}, attempts failing unseen {hidden}")
    return report
