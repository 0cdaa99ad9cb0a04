"""The sweep settles transaction locks nobody touches (serve/items/lock_sweep.py), on the
emulator: a TransactWriteItems whose worker stops after prewrite is rolled back, one that
stops after the commit point is rolled forward, by the sweep alone (no request reads the
rows in between); no lock cell is left; ClientRequestToken records past 10 minutes go,
younger ones stay."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from google.cloud.bigtable.data import BigtableDataClientAsync, ReadRowsQuery
from google.cloud.bigtable.data import mutations as bt
from google.cloud.bigtable.data import row_filters as rf

from ddb2bigtable.cli.serve_cmd import _tables
from ddb2bigtable.serve.catalog import catalog
from ddb2bigtable.serve.items import lock_sweep, transact_ops
from ddb2bigtable.serve.protocol import transact_requests
from ddb2bigtable.serve.session import Session
from ddb2bigtable.serve.store import now_micros
from ddb2bigtable.serve.transactions import cells, driver
from ddb2bigtable.serve.transactions.steps import Commit

from ..conftest import STAGE

pytestmark = pytest.mark.slow


class Stopped(Exception):
    """The worker running the transaction died here."""


def _transfer(tag: str) -> dict[str, Any]:
    def update(sk: str, delta: str) -> dict[str, Any]:
        return {"Update": {"TableName": "Scratch", "Key": {"pk": {"S": f"sweep-{tag}"}, "sk": {"N": sk}},
                           "UpdateExpression": "SET n = n + :d", "ExpressionAttributeValues": {":d": {"N": delta}}}}
    return {"TransactItems": [update("1", "-30"), update("2", "30")], "ClientRequestToken": f"sweep-{tag}"}


def dies_at(where: str, perform: Any) -> Any:
    """`driver.Rows.perform` of a worker that dies before (`prewrite`: every row locked, not
    committed) or just after (`commit`) the commit point."""
    async def dying(self, step):
        if isinstance(step, Commit) and where == "prewrite":
            raise Stopped
        result = await perform(self, step)
        if isinstance(step, Commit):
            raise Stopped
        return result
    return dying


def _stop(monkeypatch, where: str) -> None:
    """Locks born expired, and the worker stopped before or after the commit point (dies_at)."""
    monkeypatch.setattr(driver, "LOCK_SECONDS", -1.0)
    monkeypatch.setattr(driver.Rows, "perform", dies_at(where, driver.Rows.perform))


async def _family(session: Session) -> list[Any]:
    """Scratch's rows as the reserved family holds them."""
    table = session.catalog.tables["Scratch"]
    query = ReadRowsQuery(row_filter=rf.FamilyNameRegexFilter(cells.FAMILY))
    return list(await session.store(table, consistent=True).handle.read_rows(query))


def _locked(rows: list[Any], tag: str) -> int:
    """The rows of this test's transfer that hold a lock (other tests leave live ones)."""
    return sum(1 for row in rows if cells.is_locked(row) and f"sweep-{tag}".encode() in row.row_key)


def _sweep_after_crash(served, monkeypatch, where: str) -> tuple[int, int]:
    """A transfer stopped at `where`; (locked rows before the sweep, after it)."""
    client = served.client()
    for sk in ("1", "2"):
        client.put_item(TableName="Scratch", Item={"pk": {"S": f"sweep-{where}"}, "sk": {"N": sk}, "n": {"N": "100"}})
    project, types, _ = _tables(served.root, STAGE)
    tables = catalog(served.root, STAGE, types, project)

    async def crash_then_sweep() -> tuple[int, int]:
        async with BigtableDataClientAsync(project=project) as bigtable:
            session = Session(tables, bigtable)
            with monkeypatch.context() as patched:
                _stop(patched, where)
                with pytest.raises(Stopped):
                    await transact_ops.transact_write_items(session, transact_requests.transact_write_items(
                        tables, _transfer(where)))
            before = _locked(await _family(session), where)
            await lock_sweep.sweep_all(session)
            return before, _locked(await _family(session), where)

    return asyncio.run(crash_then_sweep())


def _balances(served, tag: str) -> list[str]:
    client = served.client()
    return [client.get_item(TableName="Scratch", Key={"pk": {"S": f"sweep-{tag}"}, "sk": {"N": sk}},
                            ConsistentRead=True)["Item"]["n"]["N"] for sk in ("1", "2")]


def test_a_transaction_stopped_after_prewrite_is_rolled_back_by_the_sweep(served, monkeypatch):
    assert _sweep_after_crash(served, monkeypatch, "prewrite") == (2, 0)
    assert _balances(served, "prewrite") == ["100", "100"]  # the primary never committed: nothing applied


def test_a_transaction_stopped_after_the_commit_point_is_rolled_forward_by_the_sweep(served, monkeypatch):
    assert _sweep_after_crash(served, monkeypatch, "commit") == (2, 0)
    assert _balances(served, "commit") == ["70", "130"]  # the primary committed: the whole transfer


def test_the_sweep_deletes_token_records_past_ten_minutes_only(served):
    project, types, _ = _tables(served.root, STAGE)
    tables = catalog(served.root, STAGE, types, project)
    old = now_micros() - transact_ops.TOKEN_MICROS - 60_000_000
    key = b"sweep-tokens"

    async def sweep() -> set[bytes]:
        async with BigtableDataClientAsync(project=project) as bigtable:
            session = Session(tables, bigtable)
            handle = session.store(tables.tables["Scratch"], consistent=True).handle
            await handle.mutate_row(key, [bt.SetCell(cells.FAMILY, cells.TOKEN + b"old", b"{}", old // 1000 * 1000),
                                          bt.SetCell(cells.FAMILY, cells.TOKEN + b"new", b"{}",
                                                     now_micros() // 1000 * 1000)])
            await lock_sweep.sweep_all(session)
            row = await handle.read_row(key)
            return {bytes(c.qualifier) for c in row}

    assert asyncio.run(sweep()) == {cells.TOKEN + b"new"}
