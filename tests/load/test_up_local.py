"""`ddb2bigtable up --stage local`, the README's main job, end to end on its own emulator."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

from ..conftest import ROOT, shipped_project, write_project


def test_up_creates_loads_and_verifies_every_table_with_an_export(tmp_path):
    shipped_project(tmp_path, "exports")
    env = {k: v for k, v in os.environ.items() if k != "BIGTABLE_EMULATOR_HOST"}  # up starts its own
    out = subprocess.run([sys.executable, "-m", "ddb2bigtable", "up", "--stage", "local", "--format", "json",
                          "--root", str(tmp_path)], capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["ok"] and report["emulator"].startswith("127.0.0.1:")
    loads = {r["table"]: r for r in report["loads"]}
    assert set(loads) == {"movies", "products", "videos", "invoices", "carts"}
    assert loads["movies"]["loaded"] == 4609
    carts = loads["carts"]
    assert carts["expired"] == 334 and carts["loaded"] + carts["expired"] == carts["manifest_items"] == 1000
    assert all(v["ok"] and v["accounted"] == v["manifest_items"] for v in report["verifies"])
    assert sorted(report["without_export"]) == ["shop-global-local/customers", "shop-global-local/events",
                                                 "shop-global-local/orders"]
    families = [line for line in report["tables_created"] if line.startswith("carts: set GC")]
    assert sorted(families) == [  # the TTL pattern; serve's transaction locks never aged (docs/transactions.md)
        "carts: set GC of _ddb2bigtable_txn: max_versions 1", "carts: set GC of cf: max_age 1s union max_versions 1"]


def test_up_refuses_a_cloud_stage_and_says_what_to_run():
    out = subprocess.run([sys.executable, "-m", "ddb2bigtable", "up", "--stage", "prod"], cwd=ROOT,
                         capture_output=True, text=True)
    assert out.returncode == 2 and "pulumi up --stack prod" in out.stderr and "Traceback" not in out.stderr


def test_up_leaves_the_process_environment_as_it_found_it(tmp_path, monkeypatch):
    """`up` started and stopped its own emulator: BIGTABLE_EMULATOR_HOST must not go on
    pointing later clients of this process at the stopped one."""
    from ddb2bigtable.load.local_stage import up

    monkeypatch.delenv("BIGTABLE_EMULATOR_HOST", raising=False)
    shutil.copytree(ROOT / "exports" / "products", tmp_path / "exports" / "products")
    write_project(tmp_path, {"product-catalog": (ROOT / "specs" / "product-catalog.yaml").read_text()},
                  {"emulator": True, "regions": "home", "autoscaling": False, "failover_headroom": False,
                   "deletion_protection": False, "load": {"runner": "local", "export": "exports"}}, "local")
    result = up(tmp_path, "local")
    assert result.ok and [r.total("loaded") for r in result.loads] == [5]
    assert "BIGTABLE_EMULATOR_HOST" not in os.environ
