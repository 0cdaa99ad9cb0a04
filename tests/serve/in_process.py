"""An operation answered in the test's own process on the served stage (a real data client
on the same emulator, the tables' recorded types), counting the rows each Bigtable read
returned: what a test needs to see how much a request reads."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

Operation = Callable[[Any, dict], Awaitable[dict]]


def answered(served, operation: Operation, bodies: list[dict], monkeypatch) -> tuple[list[dict], list[int], Any]:
    """Each body's answer in turn, in one session; the rows each read returned (-1: a reverse
    scan the server refused); the session, to look at afterwards."""
    from google.cloud.bigtable.data import BigtableDataClientAsync

    from ddb2bigtable.cli.serve_cmd import _tables
    from ddb2bigtable.serve.catalog import catalog
    from ddb2bigtable.serve.session import Session
    from ddb2bigtable.serve.store import Store
    from ddb2bigtable.serve.tables import created_tables

    from .conftest import STAGE

    read: list[int] = []

    def counting(original):
        async def counted(self, *args, **kwargs):
            rows = await original(self, *args, **kwargs)
            read.append(-1 if rows is None else len(rows))
            return rows
        return counted

    for name in ("scan", "scan_reversed"):
        monkeypatch.setattr(Store, name, counting(getattr(Store, name)))
    project, types, _ = _tables(served.root, STAGE)
    tables = catalog(served.root, STAGE, types, project)

    async def answer() -> tuple[list[dict], Session]:
        async with BigtableDataClientAsync(project=project) as client:
            session = Session(tables, client)
            found = []
            for body in bodies:
                await created_tables.resolve(session, body)
                found.append(await operation(session, body))
            return found, session

    found, session = asyncio.run(answer())
    return found, read, session
