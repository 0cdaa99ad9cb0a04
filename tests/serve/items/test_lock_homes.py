"""Locks settle from wherever they point (issue 50): a transaction left half-done by a worker
that stopped (here, in the test's own process, before or after its commit point, its locks
in Scratch and in a table created through serve) is met by the operations of the served
process, which knows neither the request nor, when a token was used, the table its primary
lives in. Every operation answers, none with a 5xx: a read at once with the last committed
values (or the committed transaction, rolled forward); a write, once the locks have expired,
after rolling the transaction back from its primary itself (no sweep).

Before issue 50 these answered 500 (KeyError: the primary's table, which `rows_of` did not
know)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import pytest
from google.cloud.bigtable.data import BigtableDataClientAsync

from ddb2bigtable.cli.serve_cmd import _tables
from ddb2bigtable.serve.catalog import catalog
from ddb2bigtable.serve.items import lock_sweep, transact_ops
from ddb2bigtable.serve.protocol import transact_requests
from ddb2bigtable.serve.session import Session
from ddb2bigtable.serve.tables import created_tables
from ddb2bigtable.serve.transactions import cells, driver

from ..client_calls import PARTITION_ONLY
from ..conftest import STAGE
from .test_lock_sweep import Stopped, dies_at

CREATED = "LockHomes"
LOCK_SECONDS = 3.0  # how long the stopped transactions' locks live, in the sweep test


@pytest.fixture(scope="module")
def client(served) -> Iterator[Any]:
    client = served.client()
    client.create_table(TableName=CREATED, **PARTITION_ONLY)
    yield client
    client.delete_table(TableName=CREATED)


def _keys(tag: str) -> tuple[dict[str, Any], dict[str, Any]]:
    return {"pk": {"S": f"homes-{tag}"}, "sk": {"N": "1"}}, {"p": {"S": f"homes-{tag}"}}


def _transfer(tag: str, token: bool) -> dict[str, Any]:
    """30 from the created table's item to Scratch's, the created table first (the primary
    when there is no token)."""
    scratch, created = _keys(tag)
    body: dict[str, Any] = {"TransactItems": [
        {"Update": {"TableName": CREATED, "Key": created, "UpdateExpression": "SET n = n - :d",
                    "ExpressionAttributeValues": {":d": {"N": "30"}}}},
        {"Update": {"TableName": "Scratch", "Key": scratch, "UpdateExpression": "SET n = n + :d",
                    "ExpressionAttributeValues": {":d": {"N": "30"}}}}]}
    return body | ({"ClientRequestToken": f"homes-{tag}"} if token else {})


def _stopped(served, monkeypatch, client, tag: str, *, token: bool, where: str, lock_seconds: float) -> None:
    """Both items at 100, then the transfer run in this process and stopped before (`prewrite`:
    every row locked, nothing committed) or after (`commit`) its commit point."""
    scratch, created = _keys(tag)
    client.put_item(TableName="Scratch", Item={**scratch, "n": {"N": "100"}})
    client.put_item(TableName=CREATED, Item={**created, "n": {"N": "100"}})
    project, types, _ = _tables(served.root, STAGE)
    tables = catalog(served.root, STAGE, types, project)
    body = _transfer(tag, token)

    async def run() -> None:
        async with BigtableDataClientAsync(project=project) as bigtable:
            session = Session(tables, bigtable)
            await created_tables.resolve(session, body)
            with pytest.raises(Stopped):
                await transact_ops.transact_write_items(session, transact_requests.transact_write_items(tables, body))

    with monkeypatch.context() as patched:
        patched.setattr(driver, "LOCK_SECONDS", lock_seconds)
        patched.setattr(driver.Rows, "perform", dies_at(where, driver.Rows.perform))
        asyncio.run(run())


def _reads(client, tag: str) -> list[str]:
    """Both items' `n` by every read there is: GetItem (both consistencies), Query, Scan,
    BatchGetItem."""
    scratch, created = _keys(tag)
    seen = []
    for table, key in (("Scratch", scratch), (CREATED, created)):
        for consistent in (True, False):
            seen.append(client.get_item(TableName=table, Key=key, ConsistentRead=consistent)["Item"]["n"]["N"])
    seen.append(client.query(TableName="Scratch", KeyConditionExpression="pk = :p",
                             ExpressionAttributeValues={":p": scratch["pk"]}, ConsistentRead=True)["Items"][0]["n"]["N"])
    seen.append(next(i["n"]["N"] for i in client.scan(TableName=CREATED, ConsistentRead=True)["Items"]
                     if i["p"] == created["p"]))
    batch = client.batch_get_item(RequestItems={"Scratch": {"Keys": [scratch], "ConsistentRead": True},
                                                CREATED: {"Keys": [created]}})["Responses"]
    seen += [batch["Scratch"][0]["n"]["N"], batch[CREATED][0]["n"]["N"]]
    return seen


def _transact_get(client, tag: str) -> list[str]:
    scratch, created = _keys(tag)
    got = client.transact_get_items(TransactItems=[{"Get": {"TableName": CREATED, "Key": created}},
                                                   {"Get": {"TableName": "Scratch", "Key": scratch}}])
    return [r["Item"]["n"]["N"] for r in got["Responses"]]


@pytest.mark.parametrize("token", [True, False], ids=["token", "no-token"])
def test_reads_of_a_live_transactions_rows_answer_at_once_with_the_committed_values(served, monkeypatch, client,
                                                                                       token):
    tag = f"live-{token}"
    _stopped(served, monkeypatch, client, tag, token=token, where="prewrite", lock_seconds=60.0)
    assert _reads(client, tag) == ["100"] * 8
    # TransactGetItems reads around the live transaction's prepared locks, once its primary
    # (the token's row, or the first item's) shows it has not committed: the values before it
    assert _transact_get(client, tag) == ["100", "100"]
    scratch, _ = _keys(tag)
    with pytest.raises(client.exceptions.TransactionConflictException):  # and refuses a plain write
        client.update_item(TableName="Scratch", Key=scratch, UpdateExpression="SET n = :n",
                           ExpressionAttributeValues={":n": {"N": "1"}})


@pytest.mark.parametrize("token", [True, False], ids=["token", "no-token"])
def test_every_write_meeting_an_expired_lock_rolls_it_back_from_its_primary(served, monkeypatch, client, token):
    """Locks born expired: each write (UpdateItem, ADD on a counter, PutItem, DeleteItem,
    BatchWriteItem, TransactWriteItems) goes through at once."""
    writes = {
        "update": lambda tag: client.update_item(TableName="Scratch", Key=_keys(tag)[0], UpdateExpression="SET n = n + :d",
                                                 ExpressionAttributeValues={":d": {"N": "1"}}),
        "add": lambda tag: client.update_item(TableName="Scratch", Key=_keys(tag)[0], UpdateExpression="ADD hits :d",
                                              ExpressionAttributeValues={":d": {"N": "1"}}),
        "put": lambda tag: client.put_item(TableName=CREATED, Item={**_keys(tag)[1], "n": {"N": "7"}}),
        "delete": lambda tag: client.delete_item(TableName="Scratch", Key=_keys(tag)[0]),
        "batch": lambda tag: client.batch_write_item(RequestItems={
            "Scratch": [{"PutRequest": {"Item": {**_keys(tag)[0], "n": {"N": "7"}}}}]}),
        "transact": lambda tag: client.transact_write_items(TransactItems=[{"Update": {
            "TableName": CREATED, "Key": _keys(tag)[1], "UpdateExpression": "SET n = n + :d",
            "ExpressionAttributeValues": {":d": {"N": "1"}}}}]),
    }
    for name, write in writes.items():
        tag = f"expired-{name}-{token}"
        _stopped(served, monkeypatch, client, tag, token=token, where="prewrite", lock_seconds=-1.0)
        write(tag)
    tag = f"expired-read-{token}"
    _stopped(served, monkeypatch, client, tag, token=token, where="prewrite", lock_seconds=-1.0)
    assert _transact_get(client, tag) == ["100", "100"]  # rolled back: nothing of the transfer applied
    scratch, created = _keys("expired-update-" + str(token))
    assert client.get_item(TableName="Scratch", Key=scratch, ConsistentRead=True)["Item"]["n"]["N"] == "101"
    assert client.get_item(TableName=CREATED, Key=created, ConsistentRead=True)["Item"]["n"]["N"] == "100"


@pytest.mark.parametrize("token", [True, False], ids=["token", "no-token"])
def test_a_transaction_stopped_after_its_commit_point_is_read_whole(served, monkeypatch, client, token):
    """The primary committed: every read sees the whole transfer (the reader rolls the
    secondaries forward), whichever table the primary lives in."""
    tag = f"committed-{token}"
    _stopped(served, monkeypatch, client, tag, token=token, where="commit", lock_seconds=60.0)
    assert _reads(client, tag)[:4] == ["130", "130", "70", "70"]
    assert _transact_get(client, tag) == ["70", "130"]


@pytest.mark.parametrize("where", ["prewrite", "commit"])
def test_a_worker_that_never_served_the_tables_sweeps_their_locks(served, monkeypatch, client, where):
    """Expired locks in a created table, in Scratch and (the primary) in the token table, swept
    by a worker whose catalog knows no created table (before issue 50 it swept only the
    tables it had served, and settling raised KeyError for the others)."""
    tag = f"sweep-{where}"
    # The locks expire only after `before` is read: expired at once, the shared serve
    # process's own sweep (every 60 s) could settle them first, and on a loaded machine it did.
    _stopped(served, monkeypatch, client, tag, token=True, where=where, lock_seconds=LOCK_SECONDS)
    expired = time.monotonic() + LOCK_SECONDS
    project, types, _ = _tables(served.root, STAGE)
    tables = catalog(served.root, STAGE, types, project)
    scratch, created = _keys(tag)

    async def locked(session: Session) -> list[bool]:
        await created_tables.resolve_names(session, {CREATED})
        rows = [(session.catalog.tables["Scratch"], scratch), (session.catalog.created[CREATED], created)]
        return [cells.is_locked(await session.store(t, consistent=True).read_row(t.row_key(k)) or [])
                for t, k in rows]

    async def sweep() -> tuple[list[bool], list[bool]]:
        async with BigtableDataClientAsync(project=project) as bigtable:
            before = await locked(Session(catalog(served.root, STAGE, types, project), bigtable))
            await asyncio.sleep(max(0.0, expired - time.monotonic()) + 0.05)
            session = Session(tables, bigtable)  # a worker that never served the created table
            await lock_sweep.sweep_all(session)
            return before, await locked(session)

    assert asyncio.run(sweep()) == ([True, True], [False, False])
    values = [client.get_item(TableName=t, Key=k, ConsistentRead=True)["Item"]["n"]["N"]
              for t, k in (("Scratch", scratch), (CREATED, created))]
    assert values == (["100", "100"] if where == "prewrite" else ["130", "70"])

