"""TTL on a spec table with a stream, in this process (no serve process sweeps the instance),
on the emulator: the stream tests' Orders spec with a TTL added, made by `up`.

- serve's TTL sweep reads only what can have expired (items/ttl_sweep.py): a spec table's TTL
  family cell carries its item's expiry as its time, so a pass scans the TTL families' cells
  stamped before now, and a table of many live items and a few expired ones reads those few
  rows, not the table (rows counted as the store's scans return them);
- an item written already expired gets its INSERT and, at once, its REMOVE by TTL, whether a
  PutItem or a TransactWriteItems wrote it (records read from the rows themselves).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from google.cloud.bigtable.data import BigtableDataClientAsync

from ddb2bigtable.cli.serve_cmd import _tables
from ddb2bigtable.load.local_stage import up
from ddb2bigtable.serve.catalog import catalog
from ddb2bigtable.serve.items import ttl_sweep
from ddb2bigtable.serve.protocol import app
from ddb2bigtable.serve.session import Session
from ddb2bigtable.serve.store import Store
from ddb2bigtable.serve.streams import records
from ddb2bigtable.serve.tables import created_tables
from ddb2bigtable.spec.families import STREAM_FAMILY

from ...conftest import write_project
from . import side_by_side
from .conftest import INSTANCE, SPEC, STAGE

TABLE, LIVE, EXPIRING = "Orders", 40, 3


@pytest.fixture(scope="module")
def stage(bigtable_emulator, tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("ttl-stream")
    spec = SPEC.replace(INSTANCE, "streams-sweep").replace("      stream:", "      ttl: {attribute: expires}\n      stream:")
    write_project(root, {"orders": spec}, {"emulator": True, "regions": "home", "deletion_protection": False,
                                           "autoscaling": False}, stage_name=STAGE)
    assert up(root, STAGE).ok
    return root


def _in_process(root: Path, work: Callable[[Session, Callable[..., Awaitable[dict]]], Awaitable[Any]]) -> Any:
    project, types, _ = _tables(root, STAGE)
    tables = catalog(root, STAGE, types, project)

    async def run() -> Any:
        async with BigtableDataClientAsync(project=project) as client:
            session = Session(tables, client)

            async def call(operation: str, body: dict[str, Any]) -> dict[str, Any]:
                return await app.operation(operation)(session, body)

            return await work(session, call)

    return asyncio.run(run())


async def _two_passes(session: Session, table: Any, monkeypatch: pytest.MonkeyPatch) -> tuple[list[int], list[int]]:
    """Two sweep passes over `table`, one after the other: the items each deleted, and the rows
    each read (as the store's scans return them)."""
    scanned: list[int] = []
    scan = Store.scan

    async def counted(self, *args, **kwargs):
        rows = await scan(self, *args, **kwargs)
        scanned.append(len(rows))
        return rows

    monkeypatch.setattr(Store, "scan", counted)
    deleted, read = [], []
    for _ in range(2):
        scanned.clear()
        deleted.append(await ttl_sweep.sweep_table(session, table))
        read.append(sum(scanned))
    return deleted, read


def test_a_sweep_pass_reads_only_the_rows_of_expired_items(stage, monkeypatch) -> None:
    async def work(session: Session, call) -> tuple[list[int], list[int], int]:
        for n in range(LIVE):
            await call("PutItem", {"TableName": TABLE, "Item": side_by_side.key(f"i{n}", n) | {
                "expires": {"N": str(int(time.time()) + 3600)}}})
        soon = int(time.time()) + 3  # after the writes below: never written already expired
        for n in range(LIVE, LIVE + EXPIRING):
            await call("PutItem", {"TableName": TABLE, "Item": side_by_side.key(f"i{n}", n) | {
                "expires": {"N": str(soon)}}})
        await asyncio.sleep(max(0.0, soon + 0.2 - time.time()))  # the last EXPIRING have expired
        table = session.catalog.tables[TABLE]
        deleted, read = await _two_passes(session, table, monkeypatch)
        left = await call("Scan", {"TableName": TABLE, "Select": "COUNT", "FilterExpression": "begins_with(pk, :i)",
                                   "ExpressionAttributeValues": {":i": {"S": "i"}}})
        return deleted, read, left["Count"]

    deleted, read, left = _in_process(stage, work)
    assert deleted == [EXPIRING, 0]
    assert read == [EXPIRING, 0]  # before: every row of the table, each pass (43, then 40)
    assert left == LIVE


def test_an_item_written_expired_is_inserted_then_removed_by_ttl_by_a_put_and_a_transaction(stage) -> None:
    past = str(int(time.time()) - 60)
    put, txn = side_by_side.key("expired-put", 1), side_by_side.key("expired-txn", 1)

    async def work(session: Session, call) -> dict[str, list[str]]:
        await call("PutItem", {"TableName": TABLE, "Item": put | {"expires": {"N": past}}})
        await call("TransactWriteItems", {"TransactItems": [
            {"Put": {"TableName": TABLE, "Item": txn | {"expires": {"N": past}}}},
            {"Put": {"TableName": TABLE, "Item": side_by_side.key("expired-txn-peer", 1)}}]})
        table = session.catalog.tables[TABLE]
        rows = await session.table_store(table.instance_id, table.spec.id, None, TABLE).read_rows(  # whole rows
            [table.row_key(side_by_side.key(k, 1)) for k in ("expired-put", "expired-txn")])
        found = {}
        for key, row in rows.items():
            stored = [(records.number_of(c.qualifier), records.parsed(c.value)) for c in row if c.family == STREAM_FAMILY]
            found[key] = [s.event + (" by TTL" if s.by_ttl else "") for _, s in sorted(stored, key=lambda p: p[0])]
        return {("put" if b"expired-put" in k else "txn"): v for k, v in found.items()}

    events = _in_process(stage, work)
    assert events == {"put": ["INSERT", "REMOVE by TTL"], "txn": ["INSERT", "REMOVE by TTL"]}


def test_a_sweep_pass_of_a_table_serve_created_reads_only_the_rows_of_expired_items(stage, monkeypatch) -> None:
    """A created table's cells carry their write time, not the expiry; the pass reads the TTL
    attribute's column where its text may be an expiry DynamoDB acts on: the expired items,
    and a live one whose text sorts among them (a far-future 11-digit number), never an item
    whose TTL is more than 5 years old (DynamoDB ignores it) or the live ones."""
    name = "CreatedExpiring"

    async def work(session: Session, call) -> tuple[list[int], list[int], int]:
        await call("CreateTable", {"TableName": name, "BillingMode": "PAY_PER_REQUEST", **side_by_side.TABLES[side_by_side.MAIN],
                                   "StreamSpecification": {"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"}})
        await call("UpdateTimeToLive", {"TableName": name, "TimeToLiveSpecification": {"Enabled": True,
                                                                                       "AttributeName": "expires"}})
        now = int(time.time())
        odd = {"ancient": str(now - 6 * 366 * 86_400), "far-future": f"{now - 10}0"}
        for n in range(LIVE):
            await call("PutItem", {"TableName": name, "Item": side_by_side.key(f"i{n}", n) | {
                "expires": {"N": str(now + 3600)}}})
        for n, (pk, value) in enumerate(odd.items()):
            await call("PutItem", {"TableName": name, "Item": side_by_side.key(pk, n) | {
                "expires": {"N": value}}})
        soon = int(time.time()) + 3
        for n in range(LIVE, LIVE + EXPIRING):
            await call("PutItem", {"TableName": name, "Item": side_by_side.key(f"i{n}", n) | {
                "expires": {"N": str(soon)}}})
        await asyncio.sleep(max(0.0, soon + 0.2 - time.time()))
        await created_tables.resolve_names(session, {name})
        table = session.catalog.created[name]
        deleted, read = await _two_passes(session, table, monkeypatch)
        left = await call("Scan", {"TableName": name, "Select": "COUNT"})
        return deleted, read, left["Count"]

    deleted, read, left = _in_process(stage, work)
    assert deleted == [EXPIRING, 0]
    assert read == [EXPIRING + 1, 1]  # before: every row of the table, each pass (45, then 42)
    assert left == LIVE + 2
