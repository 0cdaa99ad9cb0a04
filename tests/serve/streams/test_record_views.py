"""What serve's reads take of a row that holds its items' stream records (docs/streams.md:
24 hours of them, images included, in the reserved family), on the real emulator: a read of
items none of them, on Bigtable's side; a writer's read the newest alone (it numbers the
next); and a conditional write's guard compares the row through that same view, so a row
with many records is written at the first try and a record added since stops the write."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from google.cloud.bigtable import Client, column_family
from google.cloud.bigtable.data import BigtableDataClientAsync, SetCell

from ddb2bigtable.codec.mutations import RowMutation
from ddb2bigtable.codec.mutations import SetCell as CodecSetCell
from ddb2bigtable.serve.store import Store, raw_cells
from ddb2bigtable.serve.streams import records
from ddb2bigtable.spec.families import STREAM_FAMILY, TXN_FAMILY

PROJECT, INSTANCE, TABLE = "views-test", "views", "rows"
NEAR = STREAM_FAMILY + "x"  # an item family whose name starts as the stream's


@pytest.fixture(scope="module")
def table(bigtable_emulator) -> None:
    made = Client(project=PROJECT, admin=True).instance(INSTANCE).table(TABLE)
    if not made.exists():
        made.create(column_families={f: column_family.MaxVersionsGCRule(1) for f in ("cf", TXN_FAMILY, NEAR)}
                    | {STREAM_FAMILY: column_family.MaxAgeGCRule(timedelta(days=1))})


def _record(number: int) -> SetCell:
    return SetCell(STREAM_FAMILY, records.qualifier(number), f"record {number}".encode(), -1)


def _run(check) -> None:
    async def world() -> None:
        async with BigtableDataClientAsync(project=PROJECT) as client:
            await check(Store(client.get_table(INSTANCE, TABLE), TABLE, ("cf", NEAR)), client.get_table(INSTANCE, TABLE))
    asyncio.run(world())


def test_item_reads_leave_the_records_out_and_a_writer_takes_the_newest(table):
    async def check(store: Store, handle) -> None:
        await handle.mutate_row(b"r1", [SetCell("cf", b"a", b"1", 1_000), SetCell(TXN_FAMILY, b"token:t", b"{}", 0),
                                        SetCell(NEAR, b"q", b"item", 1_000), *(_record(n) for n in (1, 2, 3))])
        await handle.mutate_row(b"r2", [_record(1)])  # an item deleted: its records stay, no item
        read = await store.read_row(b"r1")
        assert sorted((c.family, c.qualifier) for c in read) == [(NEAR, b"q"), (TXN_FAMILY, b"token:t"),
                                                                 ("cf", b"a")]
        assert await store.read_row(b"r2") is None
        assert set(await store.read_rows([b"r1", b"r2"])) == {b"r1"}
        assert [r.row_key for r in await store.scan(b"r1", b"r3", start_open=False, limit=10)] == [b"r1"]
        writer = [c for c in await store.read_row(b"r1", writer=True) if c.family == STREAM_FAMILY]
        assert [records.number_of(c.qualifier) for c in writer] == [3]
        assert records.next_number(raw_cells(await store.read_row(b"r1", writer=True))) == 4
        assert records.next_number(raw_cells(await store.read_row(b"r2", writer=True))) == 2
    _run(check)


def test_the_guard_compares_the_writers_view(table):
    async def check(store: Store, handle) -> None:
        await handle.mutate_row(b"g1", [SetCell("cf", b"a", b"1", 1_000), *(_record(n) for n in range(1, 30))])
        seen = raw_cells(await store.read_row(b"g1", writer=True))
        write = RowMutation(b"g1", (CodecSetCell("cf", b"b", b"2", 2_000),))
        assert await store.write_if_unchanged(write, seen)  # 29 records, one of them read: written at once
        seen = raw_cells(await store.read_row(b"g1", writer=True))
        await handle.mutate_row(b"g1", [_record(30)])  # another writer's record since
        assert not await store.write_if_unchanged(write, seen)
        await handle.mutate_row(b"g2", [_record(1)])  # records alone: not an empty row to a writer
        assert not await store.write_if_unchanged(RowMutation(b"g2", (CodecSetCell("cf", b"a", b"1", 1_000),)), [])
        seen = raw_cells(await store.read_row(b"g2", writer=True))
        assert await store.write_if_unchanged(RowMutation(b"g2", (CodecSetCell("cf", b"a", b"1", 1_000),)), seen)
    _run(check)
