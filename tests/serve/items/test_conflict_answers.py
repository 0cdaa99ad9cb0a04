"""What a transaction that meets a conflict answers (issue 50): TransactionCanceledException
with TransactionConflict on the action whose row conflicted, and TransactionInProgressException
only while the first request under its ClientRequestToken is in flight.

The conflicts are made on the emulator, in the test's own process, by a real writer: a plain
write lands on one action's row between the transaction's read and its prewrite, at every
attempt. Before issue 50 the answer named the row the abort loop ended on: the token's row
(read as "in progress") or another action's."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest
from google.cloud.bigtable.data import BigtableDataClientAsync

from ddb2bigtable.cli.serve_cmd import _tables
from ddb2bigtable.serve.catalog import catalog
from ddb2bigtable.serve.errors import ServeError
from ddb2bigtable.serve.items import transact_ops
from ddb2bigtable.serve.protocol import transact_requests
from ddb2bigtable.serve.session import Session
from ddb2bigtable.serve.tables import created_tables
from ddb2bigtable.serve.transactions import driver
from ddb2bigtable.serve.transactions.steps import Commit, Prewrite

from ..client_calls import PARTITION_ONLY
from ..conftest import STAGE

CREATED = "ConflictAnswers"


@pytest.fixture(scope="module")
def client(served):
    client = served.client()
    client.create_table(TableName=CREATED, **PARTITION_ONLY)
    yield client
    client.delete_table(TableName=CREATED)


def _body(tag: str, token: str | None) -> dict[str, Any]:
    """Two updates, the created table's item first, then Scratch's."""
    return {"TransactItems": [
        {"Update": {"TableName": CREATED, "Key": {"p": {"S": tag}}, "UpdateExpression": "SET n = :n",
                    "ExpressionAttributeValues": {":n": {"N": "1"}}}},
        {"Update": {"TableName": "Scratch", "Key": {"pk": {"S": tag}, "sk": {"N": "1"}},
                    "UpdateExpression": "SET n = :n", "ExpressionAttributeValues": {":n": {"N": "1"}}}}],
            **({"ClientRequestToken": token} if token else {})}


def _answer(served, monkeypatch, body: dict[str, Any], perform: Any = None, lock_seconds: float | None = None
            ) -> tuple[str, list[str]]:
    """The transaction's answer in this process: ('ok', []) or the error's name and its
    cancellation reasons' codes. `perform` replaces driver.Rows.perform (it gets the original)."""
    project, types, _ = _tables(served.root, STAGE)
    tables = catalog(served.root, STAGE, types, project)
    original = driver.Rows.perform

    async def run() -> tuple[str, list[str]]:
        async with BigtableDataClientAsync(project=project) as bigtable:
            session = Session(tables, bigtable)
            await created_tables.resolve(session, body)
            try:
                await transact_ops.transact_write_items(session, transact_requests.transact_write_items(tables, body))
            except ServeError as error:
                return error.name, [r["Code"] for r in (error.extra or {}).get("CancellationReasons", [])]
            return "ok", []

    with monkeypatch.context() as patched:
        if perform is not None:
            async def performing(self, step):
                return await perform(original, self, step)
            patched.setattr(driver.Rows, "perform", performing)
        if lock_seconds is not None:
            patched.setattr(driver, "LOCK_SECONDS", lock_seconds)
        return asyncio.run(run())


def _writer_before_prewrite_of(client: Any, table: str, item: dict[str, Any]) -> Any:
    """A PutItem of `item` through serve just before each prewrite of its row: the row is no
    longer as the transaction read it, at every attempt."""
    async def perform(original, rows, step):
        if isinstance(step, Prewrite) and step.seen.row[0] == table:
            client.put_item(TableName=table, Item={**item, "n": {"N": str(uuid.uuid4().int % 1000)}})
        return await original(rows, step)
    return perform


@pytest.mark.parametrize("token", [True, False], ids=["token", "no-token"])
@pytest.mark.parametrize(("table", "reasons"), [(CREATED, ["TransactionConflict", "None"]),
                                                ("Scratch", ["None", "TransactionConflict"])], ids=["first", "second"])
def test_a_row_changed_under_every_attempt_is_that_actions_conflict(served, monkeypatch, client, token, table,
                                                                     reasons):
    tag = f"changed-{table}-{token}"
    body = _body(tag, str(uuid.uuid4()) if token else None)
    item = next(a["Update"]["Key"] for a in body["TransactItems"] if a["Update"]["TableName"] == table)
    answer = _answer(served, monkeypatch, body, _writer_before_prewrite_of(client, table, item))
    assert answer == ("TransactionCanceledException", reasons)


class Stopped(Exception):
    """The worker running the transaction died here."""


async def _stop_at_commit(original, rows, step):
    if isinstance(step, Commit):
        raise Stopped
    return await original(rows, step)


def test_a_token_is_in_progress_only_while_its_first_request_holds_it(served, monkeypatch, client):
    """The first request stops after its prewrite: the same request again is in progress
    while its locks live (botocore retries that), and runs once they expired; then a retry
    is answered from the record."""
    body = _body("in-flight", str(uuid.uuid4()))
    with pytest.raises(Stopped):
        _answer(served, monkeypatch, body, _stop_at_commit, lock_seconds=60.0)
    assert _answer(served, monkeypatch, body) == ("TransactionInProgressException", [])
    body = _body("expired", str(uuid.uuid4()))
    with pytest.raises(Stopped):
        _answer(served, monkeypatch, body, _stop_at_commit, lock_seconds=-1.0)
    assert _answer(served, monkeypatch, body) == ("ok", [])
    assert _answer(served, monkeypatch, body) == ("ok", [])
    item = client.get_item(TableName="Scratch", Key={"pk": {"S": "expired"}, "sk": {"N": "1"}}, ConsistentRead=True)
    assert item["Item"]["n"] == {"N": "1"}
