"""An `ADD` to a counter (AddToCell, no read: items/counters.py) on a row a transaction
holds, between its prewrite and its commit, on the emulator: it must either be refused
(TransactionConflictException, as any single-item write meeting a live transaction) or
count in the end. Landing on the locked row, it was overwritten by the transaction's intent,
computed from the counter as read before it: an increment acknowledged and lost."""

from __future__ import annotations

import asyncio
from typing import Any

from google.cloud.bigtable.data import BigtableDataClientAsync

from ddb2bigtable.load.local_stage import DEFAULT_PROJECT
from ddb2bigtable.serve.catalog import catalog
from ddb2bigtable.serve.errors import ServeError
from ddb2bigtable.serve.protocol import app
from ddb2bigtable.serve.session import Session
from ddb2bigtable.serve.transactions import driver
from ddb2bigtable.serve.transactions.steps import Commit
from ddb2bigtable.spec.stage import load_stage

from ..conftest import STAGE

KEY = {"pk": {"S": "counter-held"}, "sk": {"N": "1"}}


def _add(amount: int) -> dict[str, Any]:
    return {"TableName": "Scratch", "Key": KEY, "UpdateExpression": "ADD hits :n",
            "ExpressionAttributeValues": {":n": {"N": str(amount)}}}


def test_an_add_to_a_counter_a_transaction_holds_is_refused_or_counted(served, monkeypatch) -> None:
    project = load_stage(STAGE, served.root).gcp_project or DEFAULT_PROJECT  # Scratch's types: its spec's
    tables = catalog(served.root, STAGE, {}, project)
    perform = driver.Rows.perform
    answers: list[str] = []

    async def run() -> int:
        async with BigtableDataClientAsync(project=project) as bigtable:
            session = Session(tables, bigtable)
            await app.operation("UpdateItem")(session, _add(5))

            async def adding_before_commit(self, step):
                if isinstance(step, Commit) and not answers:  # both rows locked by the transaction
                    try:
                        await app.operation("UpdateItem")(session, _add(1))
                        answers.append("added")
                    except ServeError as error:
                        answers.append(error.name)
                return await perform(self, step)

            monkeypatch.setattr(driver.Rows, "perform", adding_before_commit)
            await app.operation("TransactWriteItems")(session, {"TransactItems": [
                {"Update": _add(10)},
                {"Put": {"TableName": "Scratch", "Item": {"pk": {"S": "counter-held"}, "sk": {"N": "2"}}}}]})
            monkeypatch.setattr(driver.Rows, "perform", perform)
            item = await app.operation("GetItem")(session, {"TableName": "Scratch", "Key": KEY, "ConsistentRead": True})
            return int(item["Item"]["hits"]["N"])

    hits = asyncio.run(run())
    assert answers in (["added"], ["TransactionConflictException"])
    assert hits == 15 + (1 if answers == ["added"] else 0), f"the ADD was answered {answers} and the counter is {hits}"
    assert answers == ["TransactionConflictException"]  # a live transaction's row: refused, as DynamoDB does
