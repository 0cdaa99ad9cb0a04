"""The load's readers leave serve's stream records out (bigtable/row_views.py): a row written
through serve holds 24 hours of its item's records, images included, and `verify`, `cutover
check` (load/verify.RowReader) and the load's spot check used to read it whole. On the
emulator, a row holding an item and 30 records: the reader takes the item and the newest
record alone (which dates the row's last write: load/later_writes.py), the spot check one
cell; cells counted as the table handle returns them."""

from __future__ import annotations

import asyncio
from collections import Counter
from datetime import timedelta
from typing import Any

import pytest
from google.cloud.bigtable import Client, column_family
from google.cloud.bigtable.data import BigtableDataClientAsync, SetCell

from ddb2bigtable.codec.codec import Codec
from ddb2bigtable.codec.mutations import SetCell as CodecSetCell
from ddb2bigtable.load import spot_check
from ddb2bigtable.load.verify import RowReader
from ddb2bigtable.serve.streams import records
from ddb2bigtable.spec.families import STREAM_FAMILY, TXN_FAMILY
from ddb2bigtable.spec.reading import read_spec

from ..serve.streams.conftest import SPEC

PROJECT, INSTANCE, TABLE, RECORDS = "test-project", "row-views", "orders", 30
ITEM = {"pk": {"S": "hot"}, "sk": {"N": "1"}, "v": {"S": "value"}}


class Counted:
    """A table handle that counts the cells of each family its reads return."""

    def __init__(self, handle: Any):
        self.handle, self.cells = handle, Counter()

    async def read_rows(self, query, **kwargs):
        rows = await self.handle.read_rows(query, **kwargs)
        self.cells.update(c.family for row in rows for c in row)
        return rows


@pytest.fixture(scope="module")
def codec(bigtable_emulator, tmp_path_factory) -> Codec:
    spec = tmp_path_factory.mktemp("views") / "orders.yaml"
    spec.write_text(SPEC)
    made = Client(project=PROJECT, admin=True).instance(INSTANCE).table(TABLE)
    if not made.exists():
        made.create(column_families={f: column_family.MaxVersionsGCRule(1) for f in ("cf", TXN_FAMILY)}
                    | {STREAM_FAMILY: column_family.MaxAgeGCRule(timedelta(days=1))})
    return Codec(read_spec(spec).tables[0], {})


def _run(check) -> Any:
    async def world() -> Any:
        async with BigtableDataClientAsync(project=PROJECT) as client:
            return await check(client)
    return asyncio.run(world())


NEWEST = 1_700_000_100_000_000 + RECORDS * 1000  # the newest record's commit time


@pytest.fixture(scope="module")
def stored(codec) -> bytes:
    """The item's row with its 30 records (the newest numbered highest, as serve writes them)."""
    written = codec.encode(ITEM, write_time_micros=1_700_000_000_000_000, now_micros=1_700_000_000_000_000)

    async def write(client) -> None:
        await client.get_table(INSTANCE, TABLE).mutate_row(written.key, [
            *(SetCell(m.family, m.qualifier, m.value, m.timestamp_micros) for m in written.mutations
              if isinstance(m, CodecSetCell)),
            *(SetCell(STREAM_FAMILY, records.qualifier(n), b"r" * 200, 1_700_000_100_000_000 + n * 1000)
              for n in range(1, RECORDS + 1))])
    _run(write)
    return written.key


def test_verify_reads_the_item_and_the_newest_record_alone(codec, stored) -> None:
    async def check(client) -> tuple[Counter, Any, int | None]:
        counted = Counted(client.get_table(INSTANCE, TABLE))
        reader = RowReader(counted, codec, codec.ttl_families, 1_800_000_000_000_000)
        found = await reader.lookup([stored])
        return counted.cells, found[stored], reader.written[stored]

    cells, items, when = _run(check)
    assert items == [ITEM]
    assert cells[STREAM_FAMILY] == 1  # before: all 30
    assert when == NEWEST  # the newest record still dates the row


def test_the_spot_check_reads_one_cell_a_row(stored, monkeypatch) -> None:
    key = stored
    counted: list[Counted] = []

    def table(client, *_args):
        counted.append(Counted(client.get_table(INSTANCE, TABLE)))
        return counted[-1]

    monkeypatch.setattr(spot_check, "lookup_table", table)

    async def check(client) -> spot_check.Absent:
        return await spot_check.absent_rows({key: ("part-0", 1), b"absent#1": ("part-0", 2)}, project=PROJECT,
                                            instance_id=INSTANCE, table_id=TABLE, app_profile_id=None, client=client)

    absent = _run(check)
    assert absent.missing == (("part-0", 2),) and absent.checked == 2
    assert sum(counted[0].cells.values()) == 1  # before: the item's cells and every record
