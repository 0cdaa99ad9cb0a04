"""`verify` on a live table (issue #53): rows written after the export through `serve` are
counted and named, expected, not a failure; a row no later write explains fails the
verification with its reason first and the row named. On the emulator, with serve
started for real and boto3 writing through it; `verify` run as the command a user types."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from ddb2bigtable.bigtable.emulator import stop_process
from ddb2bigtable.codec.codec import Codec
from ddb2bigtable.exports.writer import write_export
from ddb2bigtable.load.later_writes import dated_families
from ddb2bigtable.load.local_stage import up
from ddb2bigtable.load.run import LoadOptions, run_load
from ddb2bigtable.plan.planner import plan_stage
from ddb2bigtable.spec.families import STREAM_FAMILY
from ddb2bigtable.spec.reading import read_spec
from ddb2bigtable.spec.stage import load_stage

from ..conftest import ROOT, write_project
from ..serve.conftest import SCRATCH, start_serve

STAGE = "later"
ARN = "arn:aws:dynamodb:us-east-1:123456789012:table/ProductCatalog"

pytestmark = pytest.mark.slow


def _verify(root: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ddb2bigtable", "verify", str(root / "specs" / "catalog.yaml"),
                           "--table", "products", "--export", str(root / "exports" / "products"), "--stage", STAGE,
                           "--root", str(root), *extra], capture_output=True, text=True, timeout=300,
                          env=os.environ.copy())


@contextmanager
def _through_serve(tmp_path: Path, name: str, spec: str, export: str, suffix: str) -> Iterator[tuple[Path, Any]]:
    """A project of one spec that `up` loaded from the repository's export `export`, and a
    boto3 client (on its defaults) of serve on it; serve stops on leaving."""
    root = write_project(tmp_path, {name: spec},
                         {"emulator": True, "regions": "home", "deletion_protection": False, "autoscaling": False,
                          "instance_suffix": suffix, "load": {"runner": "local", "export": "exports"}},
                         stage_name=STAGE)
    shutil.copytree(ROOT / "exports" / export, root / "exports" / export)
    assert up(root, STAGE).ok
    process, endpoint = start_serve(root, STAGE)
    try:
        import boto3

        yield root, boto3.client("dynamodb", endpoint_url=endpoint, region_name="us-east-1",
                                 aws_access_key_id="any", aws_secret_access_key="any")
    finally:
        stop_process(process)


def _instance(root: Path) -> str:
    spec = read_spec(root / "specs" / "catalog.yaml")
    return plan_stage(load_stage(STAGE, root), [spec]).instances[0].id


def test_rows_written_after_the_export_are_reported_and_a_stray_row_fails_with_its_reason(bigtable_emulator,
                                                                                          tmp_path):
    catalog = (ROOT / "specs" / "product-catalog.yaml").read_text()
    with _through_serve(tmp_path, "catalog", catalog, "products", "-lw") as (root, app):
        app.put_item(TableName="ProductCatalog", Item={"category": {"S": "hats"}, "sku": {"S": "boater#brandZ"},
                                                       "Price": {"N": "12"}})
        key = {"category": {"S": "hats"}, "sku": {"S": "fedoras#brandA"}}
        app.update_item(TableName="ProductCatalog", Key=key, UpdateExpression="SET Price = :p",
                        ExpressionAttributeValues={":p": {"N": "99"}})

    out = _verify(root)
    assert out.returncode == 0, out.stdout + out.stderr
    head = out.stdout.splitlines()[0]
    assert head.endswith(": ok"), out.stdout
    assert "written after the export (2026-11-20T09:00:00Z): 1 changed, 1 added" in " ".join(out.stdout.split())
    # a work folder given and not there is said, with the nearest one beside it (issue #53, finding 2)
    work = root / ".ddb2bigtable" / STAGE / _instance(root)
    misspelt = _verify(root, "--work-dir", str(work / "product"))
    assert misspelt.returncode == 0 and f"warning: --work-dir {work / 'product'}: no such folder" in misspelt.stderr
    assert "did you mean 'products'?" in misspelt.stderr
    report = json.loads(_verify(root, "--format", "json").stdout)
    assert report["ok"] and report["reasons"] == [] and report["export_time"] == "2026-11-20T09:00:00Z"
    assert (report["after_export"]["changed"], report["after_export"]["added"]) == (1, 1)
    assert report["not_in_export"] == {"items": 0, "examples": []}
    assert report["table_items"] == 6 and report["accounted"] == 5 == report["manifest_items"]
    later = {e["problem"]: e for e in report["after_export"]["examples"]}
    assert later["added after the export"]["key"] == {"category": {"S": "hats"}, "sku": {"S": "boater#brandZ"}}
    assert later["changed after the export"]["detail"] == "attributes differ: Price"

    # A row from another export, older than this one: nothing written later explains it.
    other = write_export(tmp_path / "other", ARN, [{"category": {"S": "shoes"}, "sku": {"S": "clogs#brandQ"},
                                                   "Price": {"N": "3"}}],
                         export_time=datetime(2026, 11, 1, tzinfo=UTC))
    spec = read_spec(root / "specs" / "catalog.yaml")
    loaded = run_load(spec.tables[0], str(tmp_path / "other"),
                      LoadOptions(project="test-project", instance_id=_instance(root), app_profile_id="migration-load",
                                  work_dir=tmp_path / "other-work"))
    assert loaded.complete and other.is_dir()
    failed = _verify(root)
    assert failed.returncode == 1
    first_line = failed.stdout.splitlines()[0]
    assert first_line.startswith("verify products: FAILED: 1 item(s) in the table not in the export and not "
                                 "written after it"), failed.stdout
    text = " ".join(failed.stdout.split())
    assert "row shoes#clogs#brandQ (category=shoes, sku=clogs#brandQ): not in the export: written " \
           "2026-11-01T00:00:00Z, not after the export's 2026-11-20T09:00:00Z" in text
    data = json.loads(_verify(root, "--format", "json").stdout)
    assert not data["ok"] and data["not_in_export"]["items"] == 1
    assert data["reasons"] == ["1 item(s) in the table not in the export and not written after it"]
    assert data["not_in_export"]["examples"][0]["row_key"] == "shoes#clogs#brandQ"


def test_which_families_carry_the_write_time(tmp_path):
    """A TTL family's cells carry the expiry and a counter family a fixed time: neither
    dates a row; a family with its own GC rule in a TTL table does."""
    products = read_spec(ROOT / "specs" / "product-catalog.yaml").tables[0]
    assert dated_families(Codec(products, {})) == frozenset({"SKU", STREAM_FAMILY})
    (tmp_path / "scratch.yaml").write_text(SCRATCH)
    scratch = read_spec(tmp_path / "scratch.yaml").tables[0]
    assert dated_families(Codec(scratch, {})) == frozenset({STREAM_FAMILY})


def test_a_ttl_tables_row_written_through_serve_is_dated_by_its_stream_record(tmp_path):
    """Issue #53: a TTL table's item written through serve failed verify, its cells all
    carrying the expiry; on a table with a stream, serve adds the change's record to the
    same mutation at Bigtable's commit time, and that cell dates the write."""
    from ddb2bigtable.codec.mutations import Cell
    from ddb2bigtable.load.later_writes import after_export, written_micros

    (tmp_path / "scratch.yaml").write_text(SCRATCH)
    codec = Codec(read_spec(tmp_path / "scratch.yaml").tables[0], {})
    (family,) = codec.ttl_families
    export = 1_795_165_200_000_000  # 2026-11-20T09:00:00Z
    expiry, written = 4_102_444_800_000_000, export + 3_600_000_000  # expires 2100; written an hour after
    item_cells = [Cell(family, b"title", b"x", expiry), Cell(family, b"n", b"1", expiry)]
    assert written_micros(item_cells, dated_families(codec)) is None  # the expiry dates nothing
    row = [*item_cells, Cell(STREAM_FAMILY, b"\x00" * 8, b"{}", written)]
    assert written_micros(row, dated_families(codec)) == written and after_export(written, export)


def test_a_row_dated_at_the_export_time_is_the_loads_and_says_why_it_cannot_be_told_apart():
    from ddb2bigtable.load.later_writes import after_export, why_not_after

    export = 1_795_165_200_000_000  # 2026-11-20T09:00:00Z
    assert not after_export(export, export) and not after_export(export + 999, export)  # within its millisecond
    assert after_export(export + 1000, export) and not after_export(None, export)
    said = why_not_after(export, export, "2026-11-20T09:00:00Z")
    assert said.startswith("written at the export's very time (2026-11-20T09:00:00Z), as only a load writes")
    assert why_not_after(export - 86_400_000_000, export, "2026-11-20T09:00:00Z") == \
        "written 2026-11-19T09:00:00Z, not after the export's 2026-11-20T09:00:00Z: loaded from another export?"


CARTS = """version: 1
instance: {id: carts-ttl}
tables:
  - id: carts
    source:
      table: Carts
      region: us-east-1
      key: {partition: {name: cartId, type: S}}
      billing: on_demand
      peak: {reads_per_second: 90, writes_per_second: 25}
      average: {reads_per_second: 30, writes_per_second: 8}
      item_size_kb: 4
      storage_gb: 1
      item_count: 1000
      ttl: {attribute: expiresAt}
      stream: new_and_old_images
"""


def test_a_ttl_tables_item_put_through_serve_is_a_later_write(bigtable_emulator, tmp_path):
    """Issue #53, end to end: the shipped carts export (TTL expiresAt) loaded by up, one cart
    put through serve (the table has a stream, so serve stores the change's record), then
    `verify` passes, naming it added after the export (it failed: no write time to date)."""
    with _through_serve(tmp_path, "carts", CARTS, "carts", "-ttl") as (root, app):
        app.put_item(TableName="Carts", Item={"cartId": {"S": "cart-new"}, "expiresAt": {"N": "4102444800"},
                                              "items": {"N": "3"}})
    out = subprocess.run([sys.executable, "-m", "ddb2bigtable", "verify", str(root / "specs" / "carts.yaml"),
                          "--table", "carts", "--export", str(root / "exports" / "carts"), "--stage", STAGE,
                          "--root", str(root), "--format", "json"], capture_output=True, text=True, timeout=300)
    report = json.loads(out.stdout)
    assert out.returncode == 0 and report["ok"], out.stdout[-3000:] + out.stderr[-2000:]
    assert report["after_export"]["added"] == 1 and report["not_in_export"]["items"] == 0
