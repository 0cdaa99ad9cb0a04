"""A BatchWriteItem whose item meets a live transaction's lock leaves that item in
UnprocessedItems and writes the others, as DynamoDB does for any item it could not write:
BatchWriteItem is not atomic, and TransactionConflictException is not among its errors
(botocore's dynamodb model lists it for PutItem and DeleteItem, not BatchWriteItem). It was
answered TransactionConflictException for the whole batch after the items before it were
written, so the client could not tell what was. In this process over serve's stage on the
emulator, the batch sent while the transaction holds its rows (test_counter_locks' way)."""

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


def _key(pk: str) -> dict[str, Any]:
    return {"pk": {"S": pk}, "sk": {"N": "1"}}


def _put(pk: str) -> dict[str, Any]:
    return {"PutRequest": {"Item": _key(pk) | {"v": {"S": "batch"}}}}


def test_a_batch_item_a_transaction_holds_comes_back_unprocessed(served, monkeypatch) -> None:
    project = load_stage(STAGE, served.root).gcp_project or DEFAULT_PROJECT
    tables = catalog(served.root, STAGE, {}, project)
    perform = driver.Rows.perform
    answers: list[Any] = []

    async def run() -> list[Any]:
        async with BigtableDataClientAsync(project=project) as bigtable:
            session = Session(tables, bigtable)

            async def batch_before_commit(self, step):
                if isinstance(step, Commit) and not answers:  # the transaction's rows are locked
                    try:
                        answers.append(await app.operation("BatchWriteItem")(session, {"RequestItems": {"Scratch": [
                            _put("batch-free-1"), _put("batch-held"), _put("batch-free-2")]}}))
                    except ServeError as error:
                        answers.append(error.name)
                return await perform(self, step)

            monkeypatch.setattr(driver.Rows, "perform", batch_before_commit)
            await app.operation("TransactWriteItems")(session, {"TransactItems": [
                {"Put": {"TableName": "Scratch", "Item": _key("batch-held") | {"v": {"S": "transaction"}}}},
                {"Put": {"TableName": "Scratch", "Item": _key("batch-held-too")}}]})
            monkeypatch.setattr(driver.Rows, "perform", perform)
            found = []
            for pk in ("batch-free-1", "batch-held", "batch-free-2"):
                got = await app.operation("GetItem")(session, {"TableName": "Scratch", "Key": _key(pk),
                                                              "ConsistentRead": True})
                found.append(got.get("Item", {}).get("v"))
            return found

    found = asyncio.run(run())
    assert answers == [{"UnprocessedItems": {"Scratch": [_put("batch-held")]}}]  # before: TransactionConflictException
    assert found == [{"S": "batch"}, {"S": "transaction"}, {"S": "batch"}]  # before: batch-free-2 never written
