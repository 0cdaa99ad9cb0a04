"""`verify` says how many rows a serve transaction still holds (load/locks.py), without
changing its comparison of items: a locked row's items are read as they were before the
transaction, so the verification still passes, and the report says what to do."""

from __future__ import annotations

import asyncio
import io

from google.cloud.bigtable.data import BigtableDataClientAsync
from google.cloud.bigtable.data import mutations as bt
from rich.console import Console

from ddb2bigtable.load.run import run_load
from ddb2bigtable.load.verify import run_verify
from ddb2bigtable.render.load_report import print_verify, verify_json
from ddb2bigtable.spec.families import TXN_FAMILY, TXN_LOCK_COLUMN

from ..conftest import ROOT
from .test_load_emulator import PROJECT, options, prepare, read_all


def _lock(instance_id: str, keys: list[bytes], token_only: bytes) -> None:
    """Lock cells as a TransactWriteItems stopped after prewrite leaves them on `keys`; a
    ClientRequestToken record alone (no lock) on `token_only`."""
    async def go() -> None:
        async with BigtableDataClientAsync(project=PROJECT) as client:
            table = client.get_table(instance_id, "products")
            for key in keys:
                await table.mutate_row(key, [bt.SetCell(TXN_FAMILY, TXN_LOCK_COLUMN, b"t1.0:prepared", 0),
                                             bt.SetCell(TXN_FAMILY, b"token:x", b"{}", 0)])
            await table.mutate_row(token_only, [bt.SetCell(TXN_FAMILY, b"token:y", b"{}", 0)])
    asyncio.run(go())


def test_verify_counts_locked_rows_and_still_passes(bigtable_emulator, tmp_path):
    spec, instance_id = prepare("product-catalog.yaml")
    table = next(t for t in spec.tables if t.id == "products")
    export = str(ROOT / "exports" / "products")
    assert run_load(table, export, options(instance_id, tmp_path)).complete
    before = run_verify(table, export, project=PROJECT, instance_id=instance_id, work_dir=tmp_path)
    assert before.ok and before.locked_rows == 0
    rows = read_all(instance_id, "products")
    _lock(instance_id, [rows[0].row_key, rows[1].row_key], rows[2].row_key)
    after = run_verify(table, export, project=PROJECT, instance_id=instance_id, work_dir=tmp_path)
    assert after.locked_rows == 2
    assert after.ok and (after.matched, after.table_items) == (before.matched, before.table_items)
    assert verify_json(after)["locked_rows"] == 2
    out = io.StringIO()
    print_verify(after, Console(file=out, width=200))
    assert "2 row(s) still hold a serve transaction's lock: not an error of the load" in out.getvalue()
    assert "ddb2bigtable serve" in out.getvalue()
    quiet = io.StringIO()
    print_verify(before, Console(file=quiet, width=200))
    assert "lock" not in quiet.getvalue()
