"""After the load, an application's write to a TTL table must follow the load's timestamps.

Shown on the emulator with the Carts export: a write stamped "now" is hidden behind the
loaded cell (stamped with the 2099 expiry) and reads keep returning the old value; the
same change made with `codec.app_writes.item_write` is what reads return.
"""

from __future__ import annotations

import asyncio
import json
import time

from google.cloud.bigtable.data import BigtableDataClientAsync, SetCell

from ddb2bigtable.codec.app_writes import expiry_cell_time, item_write
from ddb2bigtable.codec.codec import Codec
from ddb2bigtable.codec.timestamps import FAR_FUTURE_MICROS
from ddb2bigtable.load.run import run_load
from ddb2bigtable.load.writer import Source, row_entry

from ..conftest import ROOT
from .test_load_emulator import PROJECT, options, prepare

CART = {"cartId": {"S": "cart-00001"}, "customerId": {"S": "cust-0001"}, "expiresAt": {"N": "4070908800"},
        "lines": {"L": [{"M": {"qty": {"N": "2"}, "sku": {"S": "sku-0007"}}},
                        {"M": {"qty": {"N": "3"}, "sku": {"S": "sku-0008"}}}]}, "total": {"N": "49.95"}}


def _read(instance_id: str, codec: Codec) -> list:
    async def go():
        async with BigtableDataClientAsync(project=PROJECT) as client:
            row = await client.get_table(instance_id, "carts").read_row(codec.row_key(CART))
            return codec.decode(row.row_key, row.cells)
    return asyncio.run(go())


def _write(instance_id: str, *, key: bytes, mutations=None, entry=None) -> None:
    async def go():
        async with BigtableDataClientAsync(project=PROJECT) as client:
            table = client.get_table(instance_id, "carts")
            if entry is not None:
                await table.bulk_mutate_rows([entry])
            else:
                await table.mutate_row(key, mutations)
    asyncio.run(go())


def test_a_write_stamped_now_is_hidden_and_item_write_is_not(bigtable_emulator, tmp_path):
    spec, instance_id = prepare("shop-global.yaml")
    table = next(t for t in spec.tables if t.id == "carts")
    report = run_load(table, str(ROOT / "exports" / "carts"), options(instance_id, tmp_path / "work"))
    assert report.complete and report.total("loaded") == 666
    codec = Codec(table, json.loads((tmp_path / "work" / "state.json").read_text())["types"])
    assert _read(instance_id, codec)[0]["total"] == {"N": "49.95"}
    now = int(time.time()) * 1_000_000
    _write(instance_id, key=codec.row_key(CART), mutations=[SetCell("cf", b"total", b"0", timestamp_micros=now)])
    assert _read(instance_id, codec)[0]["total"] == {"N": "49.95"}  # the application's write is lost
    changed = {**CART, "total": {"N": "12.5"}}
    _write(instance_id, key=b"", entry=row_entry(item_write(codec, changed), Source("app", 1)))
    assert _read(instance_id, codec) == [changed]


def test_expiry_cell_time_is_the_loads_cell_time():
    assert expiry_cell_time(4070908800) == 4070908800 * 1_000_000
    assert expiry_cell_time("1735689600.1234") == 1735689600123000  # whole milliseconds
    assert expiry_cell_time(None) == FAR_FUTURE_MICROS
