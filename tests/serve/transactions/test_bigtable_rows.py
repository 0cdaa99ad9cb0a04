"""The protocol's machines driven on the real Bigtable emulator (driver.py, cells.py): a
transfer between two rows of two tables commits; a worker that stops after the commit
point leaves a transfer that every reader sees whole and the sweep finishes; one that stops
before it leaves locks that a single-item write meets as a conflict while they live, and
that are aborted once they expire."""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any

import pytest
from google.cloud.bigtable import Client, column_family
from google.cloud.bigtable.data import BigtableDataClientAsync
from google.cloud.bigtable.data import mutations as bt

from ddb2bigtable.serve.store import Store
from ddb2bigtable.serve.transactions import behind, cells
from ddb2bigtable.serve.transactions.driver import Place, Rows, expiry_micros, run
from ddb2bigtable.serve.transactions.resolve import ReadItem, SingleWrite, Sweep
from ddb2bigtable.serve.transactions.snapshot import SnapshotRead
from ddb2bigtable.serve.transactions.steps import LOCK_VERSION, Commit, Finished, View
from ddb2bigtable.serve.transactions.writer import Intents, WriteTxn

PROJECT, INSTANCE = "txn-test", "txn"
TABLES = ("accounts", "ledger")


@pytest.fixture(scope="module")
def tables(bigtable_emulator) -> None:
    admin = Client(project=PROJECT, admin=True).instance(INSTANCE)
    for name in TABLES:
        table = admin.table(name)
        if not table.exists():
            table.create(column_families={"cf": column_family.MaxVersionsGCRule(1),
                                          cells.FAMILY: column_family.MaxVersionsGCRule(1)})


def _balance(view: View) -> int:
    return next((int(c.value) for c in view.data if c.family == "cf" and c.qualifier == b"balance"), 0)


def _set(value: int, at_millis: int) -> bytes:
    return cells.pack_intent([bt.DeleteAllFromRow(), bt.SetCell("cf", b"balance", str(value).encode(), at_millis * 1000)])


def transfer(txn: str, src: tuple[str, bytes], dst: tuple[str, bytes], amount: int, expires: int) -> WriteTxn:
    def decide(views: tuple[View, ...]) -> Intents:
        a, b = _balance(views[0]), _balance(views[1])
        return Intents((_set(a - amount, 1_000 + len(txn)), _set(b + amount, 1_000 + len(txn))), answer="ok")
    return WriteTxn(txn, (src, dst), decide, expires_micros=expires)


async def _world(test: Any) -> Any:
    async with BigtableDataClientAsync(project=PROJECT) as client:
        places = {n: Place(Store(client.get_table(INSTANCE, n), n), ("cf",)) for n in TABLES}

        async def where(name: str) -> Place | None:
            return places.get(name)
        return await test(Rows(where))


async def _balances(rows: Rows, keys: list[tuple[str, bytes]]) -> list[int]:
    return [int(_balance(View(k, (await run(ReadItem(k), rows)).value, None))) for k in keys]


def test_a_transfer_across_two_tables_commits_and_leaves_no_lock(tables) -> None:
    a, b = ("accounts", b"a1"), ("ledger", b"b1")

    async def test(rows: Rows) -> None:
        for key in (a, b):
            await run(SingleWrite(key, lambda _d: _set(100, 10)), rows)
        assert await run(transfer("t-ok", a, b, 30, expiry_micros(0)), rows) == Finished("committed", "ok")
        await behind.drain(10)  # the secondary applied and the primary released behind the answer
        views = [await rows.perform(ReadItem(k).step()) for k in (a, b)]
        assert [v.lock for v in views] == [None, None]
        assert all(c.family != cells.FAMILY for v in views for c in v.data)
        assert await _balances(rows, [a, b]) == [70, 130]
        snapshot = await run(SnapshotRead((a, b)), rows)
        assert [_balance(View(k, d, None)) for k, d in zip((a, b), snapshot.value, strict=True)] == [70, 130]

    asyncio.run(_world(test))


async def _until(machine: Any, rows: Rows, stop: type) -> Any:
    """Run `machine` until it is about to perform a `stop` step: a worker killed there."""
    while not isinstance(step := machine.step(), stop | Finished):
        machine = machine.after(await rows.perform(step))
    return machine


def test_a_worker_killed_after_the_commit_point_leaves_a_whole_transfer(tables) -> None:
    a, b = ("accounts", b"a2"), ("accounts", b"b2")

    async def test(rows: Rows) -> None:
        for key in (a, b):
            await run(SingleWrite(key, lambda _d: _set(100, 10)), rows)
        stopped = await _until(transfer("t-commit", a, b, 40, 2**62), rows, Commit)
        await rows.perform(stopped.step())  # the commit point, then the worker dies
        assert (await rows.perform(ReadItem(b).step())).lock is not None  # b still holds its intent
        assert await _balances(rows, [b, a]) == [140, 60]  # a reader rolls b forward
        assert await run(Sweep((a, b)), rows) == Finished("answered", ())
        assert [(await rows.perform(ReadItem(k).step())).lock for k in (a, b)] == [None, None]

    asyncio.run(_world(test))


def test_a_worker_killed_before_the_commit_point_conflicts_then_is_aborted(tables) -> None:
    a, b = ("accounts", b"a3"), ("ledger", b"b3")

    async def test(rows: Rows) -> None:
        for key in (a, b):
            await run(SingleWrite(key, lambda _d: _set(100, 10)), rows)
        await _until(transfer("t-live", a, b, 50, 2**62), rows, Commit)  # both locked, then killed
        assert await _balances(rows, [a, b]) == [100, 100]  # readers see the rows as before
        assert (await run(SingleWrite(b, lambda _d: _set(1, 20)), rows)).kind == "conflict"
        # TransactGetItems reads around the prepared locks: the rows before the transaction
        snapshot = await run(SnapshotRead((a, b)), rows)
        assert [_balance(View(k, d, None)) for k, d in zip((a, b), snapshot.value, strict=True)] == [100, 100]
        await _until(transfer("t-dead", ("accounts", b"a4"), ("ledger", b"b4"), 5, 0), rows, Commit)  # expired
        assert await run(Sweep((("accounts", b"a4"), ("ledger", b"b4"))), rows) == Finished("answered", ())
        assert [(await rows.perform(ReadItem(k).step())).lock for k in (("accounts", b"a4"), ("ledger", b"b4"))] \
            == [None, None]
        assert await _balances(rows, [("accounts", b"a4"), ("ledger", b"b4")]) == [0, 0]  # never applied

    asyncio.run(_world(test))


def test_a_transaction_meeting_a_live_one_waits_for_it_and_commits(tables) -> None:
    """A transfer meeting the locks of a live transaction (another worker's, mid-commit) pauses
    and reads again until that one has committed, then commits after it, instead of answering
    TransactionConflict at once (as DynamoDB's transactions on an item mostly succeed)."""
    a, b = ("accounts", b"a8"), ("ledger", b"b8")

    async def test(rows: Rows) -> None:
        for key in (a, b):
            await run(SingleWrite(key, lambda _d: _set(100, 10)), rows)
        first = await _until(transfer("t-first", a, b, 10, 2**62), rows, Commit)  # both rows locked, alive
        waiting = asyncio.create_task(run(transfer("t-waits", b, a, 5, expiry_micros(0)), Rows(rows.where)))
        await asyncio.sleep(0.3)
        assert not waiting.done()
        assert await run(first, rows) == Finished("committed", "ok")  # the first commits, then the other
        assert await waiting == Finished("committed", "ok")
        await behind.drain(10)
        assert await _balances(rows, [a, b]) == [95, 105]

    asyncio.run(_world(test))


def test_a_transactions_row_delete_spares_the_reserved_family(tables) -> None:
    """An intent that replaces its item deletes the item's families only: other cells of the
    reserved family in the row (the protocol's own) outlive the transaction's commit."""
    a, b = ("accounts", b"a5"), ("ledger", b"b5")

    async def test(rows: Rows) -> None:
        for key in (a, b):
            await run(SingleWrite(key, lambda _d: _set(100, 10)), rows)
        marker = bt.SetCell(cells.FAMILY, b"marker", b"kept", 5_000)
        await (await rows.place("accounts")).store.handle.mutate_row(a[1], [marker])
        assert await run(transfer("t-spare", a, b, 10, expiry_micros(0)), rows) == Finished("committed", "ok")
        await behind.drain(10)
        row = await (await rows.place("accounts")).store.handle.read_row(a[1])
        assert [(c.family, c.qualifier, c.value) for c in row if c.family == cells.FAMILY] \
            == [(cells.FAMILY, b"marker", b"kept")]
        assert await _balances(rows, [a, b]) == [90, 110]

    asyncio.run(_world(test))


def _stored_lock(row: tuple[str, bytes], txn: str, version: int | None) -> list[bt.Mutation]:
    """A prepared, expired lock of `row` (its own primary) as a release writing stored form
    `version` wrote it (None: issue 44's form, which wrote no version)."""
    about: dict[str, Any] = {"primary": [row[0], base64.b64encode(row[1]).decode()], "expires": 1, "secondaries": []}
    if version is not None:
        about["v"] = version
    return [bt.SetCell(cells.FAMILY, cells.LOCK, f"{txn}:P".encode(), 0),
            bt.SetCell(cells.FAMILY, cells.TXN, json.dumps(about).encode(), 0),
            bt.SetCell(cells.FAMILY, cells.INTENT, _set(999, 30), 0)]


def test_locks_carry_their_stored_forms_version_and_older_ones_are_settled(tables) -> None:
    """This release writes the version beside issue 44's fields, unchanged (what that
    release reads), and settles a lock issue 44's release wrote (version 0)."""
    old = ("accounts", b"a6")

    async def test(rows: Rows) -> None:
        await run(SingleWrite(old, lambda _d: _set(100, 10)), rows)
        await (await rows.place("accounts")).store.handle.mutate_row(old[1], _stored_lock(old, "t-44", None))
        view = await rows.perform(ReadItem(old).step())
        assert view.lock is not None and view.lock.version == 0
        assert (await run(SingleWrite(old, lambda _d: _set(5, 40)), rows)).kind == "written"  # aborted, then written
        assert await _balances(rows, [old]) == [5]
        written = {bytes(c.qualifier): bytes(c.value) for c in
                   await (await rows.place("accounts")).store.handle.read_row(old[1])}  # no lock left
        assert cells.LOCK not in written
        stored = {m._to_pb().set_cell.column_qualifier: m._to_pb().set_cell.value for m in cells.lock_cells(view.lock)}
        about = json.loads(stored[cells.TXN])
        assert set(about) == {"v", "primary", "expires", "secondaries"} and about["v"] == LOCK_VERSION
        assert stored[cells.LOCK] == b"t-44:P"

    asyncio.run(_world(test))


def test_a_lock_of_a_newer_release_is_read_around_and_never_settled(tables) -> None:
    """A worker of this release meeting a lock stored in a later form does not act on it,
    even expired: a write is a conflict, a read answers the row's data as committed, the
    sweep leaves it; the lock is intact for its own release to settle."""
    row = ("accounts", b"a7")

    async def test(rows: Rows) -> None:
        await run(SingleWrite(row, lambda _d: _set(100, 10)), rows)
        await (await rows.place("accounts")).store.handle.mutate_row(row[1], _stored_lock(row, "t-next", LOCK_VERSION + 1))
        assert (await run(SingleWrite(row, lambda _d: _set(5, 40)), rows)).kind == "conflict"
        assert await _balances(rows, [row]) == [100]
        assert await run(Sweep((row,)), rows) == Finished("answered", (row,))
        lock = (await rows.perform(ReadItem(row).step())).lock
        assert lock is not None and (lock.txn, lock.version) == ("t-next", LOCK_VERSION + 1)

    asyncio.run(_world(test))


def test_a_transactgetitems_meeting_a_lock_it_cannot_read_around_waits_for_it(tables) -> None:
    """A TransactGetItems meeting a lock it may not read around (here a newer release's, which
    this release never settles) waits and reads again until the lock is gone, within the
    request's deadline, instead of cancelling at once (TransactionConflict)."""
    row, other = ("accounts", b"a9"), ("ledger", b"b9")

    async def test(rows: Rows) -> None:
        for key in (row, other):
            await run(SingleWrite(key, lambda _d: _set(100, 10)), rows)
        table = (await rows.place("accounts")).store.handle
        await table.mutate_row(row[1], _stored_lock(row, "t-next", LOCK_VERSION + 1))
        reading = asyncio.create_task(run(SnapshotRead((row, other)), Rows(rows.where)))
        await asyncio.sleep(0.3)
        assert not reading.done()
        await table.mutate_row(row[1], cells.unlock_cells())  # its own release settled it
        read = await reading
        assert read.kind == "read"
        assert [_balance(View(k, d, None)) for k, d in zip((row, other), read.value, strict=True)] == [100, 100]

    asyncio.run(_world(test))


class _Counted(Rows):
    """Rows counting its reads of rows (each one ReadRows per table)."""

    reads = 0

    async def read(self, rows: list[Any]) -> list[View]:
        self.reads += 1
        return await super().read(rows)


def test_a_transactgetitems_reads_around_its_workers_uncommitted_prewrites(tables) -> None:
    """A TransactGetItems whose second read finds rows newly prepared by a transaction of its
    own worker that had not sent its commit when asked, between the reads, answers the rows
    as both reads saw them, with no more reads (it read them all again before); when that
    commit was sent, a row it finds so is read again and answered as the transaction left
    it."""
    a, b, c = ("accounts", b"a10"), ("ledger", b"b10"), ("ledger", b"c10")

    async def test(rows: Rows) -> None:
        for key in (a, b, c):
            await run(SingleWrite(key, lambda _d: _set(100, 10)), rows)
        reader, reading = SnapshotRead((a, b)), _Counted(rows.where)
        reader = reader.after(await reading.perform(reader.step()))  # its first read
        writer = await _until(transfer("t-open", a, b, 10, expiry_micros(0) + 2**50), Rows(rows.where), Commit)
        read = await run(reader, reading)  # asked: the commit not sent; the second read: both rows newly prepared
        assert [_balance(View(k, d, None)) for k, d in zip((a, b), read.value, strict=True)] == [100, 100]
        assert reading.reads == 2
        # the commit sent: a reader of c and b (the primary a outside its rows) reads b again
        writer_rows = Rows(rows.where)
        await run(writer, writer_rows)
        await behind.drain(10)
        other, again = SnapshotRead((c, b)), _Counted(rows.where)
        other = other.after(await again.perform(other.step()))
        second = await _until(transfer("t-sent", a, b, 5, expiry_micros(0) + 2**50), writer_rows, Commit)
        await writer_rows.perform(second.step())  # committed at a, b still prepared
        read = await run(other, again)
        assert [_balance(View(k, d, None)) for k, d in zip((c, b), read.value, strict=True)] == [100, 115]
        assert again.reads > 2

    asyncio.run(_world(test))
