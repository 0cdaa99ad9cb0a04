"""`up --stage local [SPEC...] [--export DIR] [--verbose]`: a team's own spec and exports on
the local stage without a stage file of its own, and one screen of output by default."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

from ..conftest import ROOT, SHIPPED_SPECS, shipped_project


def _project(tmp_path: Path) -> Path:
    return shipped_project(tmp_path, "exports")


def _up(root: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "BIGTABLE_EMULATOR_HOST"}  # up starts its own
    return subprocess.run([sys.executable, "-m", "ddb2bigtable", "up", "--stage", "local", "--root", str(root),
                           *args], capture_output=True, text=True, env=env, timeout=600)


def test_up_takes_the_given_spec_and_exports_instead_of_the_stages(tmp_path):
    root = _project(tmp_path / "project")
    mine = tmp_path / "mine"
    (mine / "specs").mkdir(parents=True)
    spec = mine / "specs" / "catalog.yaml"
    shutil.copy(ROOT / "specs" / "product-catalog.yaml", spec)
    shutil.copytree(ROOT / "exports" / "products", mine / "exports" / "products")
    out = _up(root, str(spec), "--export", str(mine / "exports"), "--format", "json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert [r["table"] for r in report["loads"]] == ["products"]  # not the stage's five specs
    assert report["loads"][0]["export"].startswith(str(mine / "exports" / "products"))
    assert report["verifies"][0]["ok"] and report["verifies"][0]["matched"] == 5
    assert report["without_export"] == []

    verbose = _up(root, str(spec), "--export", str(mine / "exports"), "--verbose")
    assert verbose.returncode == 0, verbose.stderr
    assert "Stage local" in verbose.stdout and "product-catalog-local" in verbose.stdout  # the whole plan


def test_up_refuses_an_export_folder_that_is_not_there_or_is_one_export(tmp_path):
    root = _project(tmp_path)
    out = _up(root, "--export", str(tmp_path / "nowhere"))
    assert out.returncode == 2 and "--export" in out.stderr and "no such folder" in out.stderr
    assert "Traceback" not in out.stderr
    one = _up(root, "--export", str(root / "exports" / "products"))  # an export, not a folder of them
    assert one.returncode == 2 and "give its parent" in one.stderr


def test_the_quick_start_fits_one_screen_and_the_rest_is_in_the_report(tmp_path):
    root = _project(tmp_path)
    out = _up(root)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    # scripts/up-local.sh adds one line per spec (validate) and one at the end: 60 at most in all
    assert len(lines) + len(SHIPPED_SPECS) + 1 <= 60, out.stdout
    assert lines[-1] == "local stage ready"
    assert "Stage local" not in out.stdout and "mapping keeps less" not in out.stdout
    assert all(table in out.stdout for table in ("movies", "products", "videos", "invoices", "carts"))
    report = root / ".ddb2bigtable" / "local" / "up-report.txt"
    assert str(report) in out.stdout.replace("\n", "")  # where the rest is
    text = " ".join(report.read_text().split())
    assert "Stage local" in text and "mapping keeps less than the item" in text and "verify movies" in text
    assert stat.S_IMODE(report.stat().st_mode) == 0o600


def test_an_export_folder_named_after_the_dynamodb_table_is_refused_when_nothing_would_load(tmp_path):
    """Issue #53: `ProductCatalog/` (the DynamoDB table's name) instead of `products/` (the
    table id) loaded nothing, yet `up` said ready. Now: exit 2 naming the folder and the table
    id it was meant for, before any emulator starts."""
    root = _project(tmp_path / "project")
    mine = tmp_path / "mine"
    shutil.copytree(ROOT / "exports" / "products", mine / "exports" / "ProductCatalog")
    out = _up(root, str(root / "specs" / "product-catalog.yaml"), "--export", str(mine / "exports"))
    assert out.returncode == 2, out.stdout + out.stderr
    assert f"{mine / 'exports' / 'ProductCatalog'}/: matches no table id; did you mean products? " \
           "(rename the folder to products); nothing would be loaded" in out.stderr
    assert "Traceback" not in out.stderr and "local stage ready" not in out.stdout


def test_an_export_folder_no_table_id_names_is_a_warning_beside_what_loads(tmp_path):
    root = _project(tmp_path / "project")
    mine = tmp_path / "mine"
    shutil.copytree(ROOT / "exports" / "invoices", mine / "exports" / "invoices")
    shutil.copytree(ROOT / "exports" / "products", mine / "exports" / "prodcuts")  # misspelt
    shutil.copytree(ROOT / "exports" / "products", mine / "exports" / "archive-2025")  # like no table id
    specs = [str(root / "specs" / name) for name in ("invoices-adjacency.yaml", "product-catalog.yaml")]
    out = _up(root, *specs, "--export", str(mine / "exports"))
    assert out.returncode == 0, out.stderr
    text = " ".join(out.stderr.split())
    assert f"warning: {mine / 'exports' / 'prodcuts'}/ matches no table id; did you mean products? (rename the " \
           "folder to products): not loaded" in text
    assert f"{mine / 'exports'}/ holds export folders that match no table id, not loaded: archive-2025/" in text
    report = json.loads(_up(root, *specs, "--export", str(mine / "exports"), "--format", "json").stdout)
    assert len(report["unused_exports"]) == 2 and "did you mean products?" in report["unused_exports"][0]
    assert [r["table"] for r in report["loads"]] == ["invoices"]


def test_an_index_keyed_on_an_attribute_no_item_has_is_a_note_of_the_load(tmp_path):
    """Issue #53: a GSI keyed on `statuss` while the items hold `status` loaded without a
    word; verify reads every item, so its report (and up's screen) says so."""
    root = _project(tmp_path / "project")
    spec = (ROOT / "specs" / "product-catalog.yaml").read_text()
    spec = spec.replace("      item_count: 250000\n", "      item_count: 250000\n      gsis:\n        - name: by-stock\n"
                        "          key: {partition: {name: Stocks, type: S}}\n          reads: 10\n"
                        "          writes: 10\n")
    (tmp_path / "catalog.yaml").write_text(spec)
    mine = tmp_path / "mine"
    shutil.copytree(ROOT / "exports" / "products", mine / "exports" / "products")
    out = _up(root, str(tmp_path / "catalog.yaml"), "--export", str(mine / "exports"))
    assert out.returncode == 0, out.stderr
    note = "index by-stock is keyed on Stocks, which none of the 5 export items read has"
    assert f"products: note: {note}" in " ".join(out.stdout.split())
    report = json.loads(_up(root, str(tmp_path / "catalog.yaml"), "--export", str(mine / "exports"),
                            "--format", "json").stdout)
    assert report["verifies"][0]["ok"] and report["verifies"][0]["notes"][0].startswith(note)


def test_the_shipped_exports_give_the_quick_start_no_unused_folder_and_a_users_is_named(tmp_path):
    """Issue #53: the quick start named movies-incremental/, movies-ion/ and orders-sharded/
    (the shipped exports no stage loads) as unused; they live in exports/other/ now, where
    `up` does not look, while a folder of one's own beside movies/ is still named."""
    from ddb2bigtable.load.export_folders import export_folders, unused_exports
    from ddb2bigtable.spec.reading import read_specs

    tables = [t for spec in read_specs([str(ROOT / s) for s in SHIPPED_SPECS]) for t in spec.tables]
    assert unused_exports(export_folders(ROOT / "exports"), tables) == []
    exports = tmp_path / "exports"
    shutil.copytree(ROOT / "exports", exports)
    shutil.copytree(ROOT / "exports" / "movies", exports / "Movies-copy")
    assert [u.folder for u in unused_exports(export_folders(exports), tables)] == ["Movies-copy"]
