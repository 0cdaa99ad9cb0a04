"""Fractured reads: writers add 1 to every item of a group of three in one TransactWriteItems,
so all three always hold the same count. Readers must never see a transaction half-applied:
a TransactGetItems of the three sees three equal counts (DynamoDB: serializable), and plain
GetItems one after the other (ConsistentRead, serializable with transactions too) never see an item read
later hold less than one read before, in either order (AWS's isolation levels, as
docs/transactions.md quotes them, read 2026-11-29). A reader whose TransactGetItems is
cancelled by a conflict tries again after a jittered pause doubling from 5 ms to 100 ms, as
DynamoDB asks of its callers."""

from __future__ import annotations

import random
import time
from functools import partial
from typing import Any

from .fronts import Fronts
from .harness import Kind, Report, call, client, together, workload

GROUP = ("g0", "g1", "g2")


def _adds(table: str) -> list[dict[str, Any]]:
    return [{"Update": {"TableName": table, "Key": {"id": {"S": k}}, "UpdateExpression": "ADD v :one",
                        "ExpressionAttributeValues": {":one": {"N": "1"}}}} for k in GROUP]


def _add_to_all(c: Any, table: str) -> Any:
    return lambda: c.transact_write_items(TransactItems=_adds(table))


def _count(item: dict | None) -> int:
    return int(item["v"]["N"]) if item and "v" in item else 0


def fractured_reads(fronts: Fronts, seconds: float, threads: int = 6, atomic: bool = True) -> Report:
    """`atomic=False` writes the three items with three UpdateItems: fractured by design, which the
    checker must find."""
    with workload("fractured reads", fronts) as (report, attempts, table):
        writers = max(1, threads // 3)
        transact_readers = max(1, (threads - writers) // 2)
        ordered_readers = max(1, threads - writers - transact_readers)
        clients = [client(fronts.url, attempts) for _ in range(writers + transact_readers + ordered_readers)]
        stop = time.monotonic() + seconds

        def writer(c: Any) -> None:
            while time.monotonic() < stop:
                o = call(_add_to_all(c, table) if atomic else lambda: [c.update_item(**u["Update"]) for u in _adds(table)])
                report.count(f"write {o.kind.value} {o.code}".rstrip())

        def transact_reader(c: Any) -> None:
            pause = 0.005
            gets = [{"Get": {"TableName": table, "Key": {"id": {"S": k}}}} for k in GROUP]
            while time.monotonic() < stop:
                o = call(lambda: c.transact_get_items(TransactItems=gets))
                report.count(f"TransactGetItems {o.kind.value} {o.code}".rstrip())
                if o.kind is Kind.OK:
                    pause = 0.005
                    counts = [_count(r.get("Item")) for r in o.answer["Responses"]]
                    if len(set(counts)) > 1:
                        report.anomaly(f"fractured TransactGetItems: {dict(zip(GROUP, counts, strict=True))}")
                else:
                    time.sleep(random.uniform(0, pause))  # noqa: S311 - jitter
                    pause = min(pause * 2, 0.1)

        def ordered_reader(c: Any, n: int) -> None:
            while time.monotonic() < stop:
                order, seen = (GROUP if n % 2 == 0 else GROUP[::-1]), []
                for k in order:
                    o = call(lambda k=k: c.get_item(TableName=table, Key={"id": {"S": k}}, ConsistentRead=True))
                    report.count(f"GetItem {o.kind.value} {o.code}".rstrip())
                    if o.kind is not Kind.OK:
                        break
                    seen.append(_count(o.answer.get("Item")))
                if any(later < earlier for earlier, later in zip(seen, seen[1:], strict=False)):
                    report.anomaly(f"fractured GetItems: read in the order {order}: {seen}")
                n += 1

        kinds = [writer] * writers + [transact_reader] * transact_readers
        together(*(partial(kind, c) for kind, c in zip(kinds, clients, strict=False)),
                 *(partial(ordered_reader, c, n) for n, c in enumerate(clients[len(kinds):])))
    return report
