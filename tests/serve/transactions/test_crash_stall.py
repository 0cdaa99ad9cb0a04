"""A serve process killed mid-commit stalls nothing (issue 50): three threads run
TransactWriteItems of eight items each (boto3's defaults: a ClientRequestToken, so each
transaction's primary is its token's row) on one serve process, which gets SIGKILL while
they hold locks. Another serve process, its sweep off, then reads every item at once, each
group of eight at one transaction's fate (equal values: nothing half-applied), and writes
every item within the locks' expiry plus a second, settling the dead locks from their
primaries itself. Before issue 50 those reads and writes answered 500 for 25-76 s, until a
sweep came (KeyError: the token's table)."""

from __future__ import annotations

import asyncio
import threading
import time
from collections import Counter
from typing import Any

import pytest
from google.cloud.bigtable.data import BigtableDataClientAsync

from ddb2bigtable.bigtable.emulator import stop_process
from ddb2bigtable.cli.serve_cmd import _tables
from ddb2bigtable.serve.catalog import catalog
from ddb2bigtable.serve.session import Session
from ddb2bigtable.serve.transactions import cells
from ddb2bigtable.serve.transactions.driver import LOCK_SECONDS

from ..conftest import STAGE, Served, start_serve
from ..crashes import kill_while_locked, written_again

pytestmark = pytest.mark.slow
GROUPS, ITEMS = 3, 8


def _key(group: int, i: int) -> dict[str, Any]:
    return {"pk": {"S": f"stall-{group}"}, "sk": {"N": str(i)}}


def _transactions(client: Any, group: int, stop: threading.Event, answers: Counter) -> None:
    """+1 on every item of the group, in one transaction, until the process dies."""
    while not stop.is_set():
        try:
            client.transact_write_items(TransactItems=[{"Update": {
                "TableName": "Scratch", "Key": _key(group, i), "UpdateExpression": "ADD n :one",
                "ExpressionAttributeValues": {":one": {"N": "1"}}}} for i in range(ITEMS)])
            answers["committed"] += 1
        except Exception as error:  # noqa: BLE001 - the process is being killed: any answer or none
            answers[type(error).__name__] += 1


def _kill_while_locked(served: Served, victim: Any) -> int:
    """SIGKILL to `victim` while Bigtable shows one of the items locked (read from Bigtable
    itself, while the threads run); how many are locked once it is dead."""
    project, types, _ = _tables(served.root, STAGE)
    tables = catalog(served.root, STAGE, types, project)
    scratch = tables.tables["Scratch"]
    keys = [scratch.row_key(_key(g, i)) for g in range(GROUPS) for i in range(ITEMS)]

    async def kill() -> int:
        async with BigtableDataClientAsync(project=project) as bigtable:
            store = Session(tables, bigtable).store(scratch, consistent=True)

            async def locked() -> int:
                return sum(1 for row in (await store.read_rows(keys)).values() if cells.is_locked(row))
            return await kill_while_locked(victim, locked)
    return asyncio.run(kill())


def test_a_killed_worker_leaves_items_readable_at_once_and_writable_after_the_lock_expiry(served):
    victim, victim_url = start_serve(served.root, STAGE, "--txn-sweep-seconds", "86400")
    survivor, survivor_url = start_serve(served.root, STAGE, "--txn-sweep-seconds", "86400")
    try:
        doomed = Served(served.root, victim_url, victim).client()
        client = Served(served.root, survivor_url, survivor).client()
        stop, answers = threading.Event(), Counter()
        threads = [threading.Thread(target=_transactions, args=(doomed, g, stop, answers)) for g in range(GROUPS)]
        for thread in threads:
            thread.start()
        locked = _kill_while_locked(served, victim)
        killed = time.monotonic()
        stop.set()
        for thread in threads:
            thread.join(10)
        assert locked > 0, f"no item was locked when the worker died ({dict(answers)}): the test proved nothing"
        values = [[client.get_item(TableName="Scratch", Key=_key(g, i), ConsistentRead=True).get("Item", {})
                   .get("n", {}).get("N") for i in range(ITEMS)] for g in range(GROUPS)]
        read_in = time.monotonic() - killed
        assert all(len(set(group)) == 1 for group in values), values  # each group at one transaction's fate
        pending = written_again(client, "Scratch", [_key(g, i) for g in range(GROUPS) for i in range(ITEMS)],
                                killed + LOCK_SECONDS + 1.0)
        assert not pending, f"{len(pending)} item(s) not writable {LOCK_SECONDS + 1.0} s after the kill"
        assert read_in < LOCK_SECONDS, f"reading the items took {read_in:.1f} s"
    finally:
        stop_process(victim)
        stop_process(survivor)
