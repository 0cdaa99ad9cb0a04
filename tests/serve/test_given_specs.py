"""`serve --stage S SPEC...` (and `up --keep-running SPEC...`, which starts it so): the stage
served with the given spec files instead of its list, every other setting of the stage as
it is; the list reaches each worker with serve's other settings, and nothing is written."""

from __future__ import annotations

import shutil

import pytest

from ddb2bigtable.bigtable.emulator import stop_process
from ddb2bigtable.exports.manifests import open_export
from ddb2bigtable.exports.reader import read_records
from ddb2bigtable.serve.catalog import catalog, served_specs
from ddb2bigtable.spec.errors import InputError
from ddb2bigtable.spec.stage import load_stage

from ..conftest import ROOT, shipped_project
from .conftest import STAGE, Served, start_serve


def _project(tmp_path):
    shipped_project(tmp_path)
    mine = tmp_path / "elsewhere" / "catalog.yaml"  # a spec outside the project, as a team's own
    mine.parent.mkdir()
    shutil.copy(ROOT / "specs" / "product-catalog.yaml", mine)
    return mine


def test_the_catalog_holds_the_given_specs_tables_with_the_stages_settings(tmp_path, monkeypatch):
    mine = _project(tmp_path)
    monkeypatch.chdir(mine.parent)  # a relative path is the working folder's, as on a command line
    stage, specs = served_specs(tmp_path, "local", ["catalog.yaml"])
    original = load_stage("local", tmp_path)
    assert [spec.path for spec in specs] == [str(mine.resolve())]
    assert (stage.instance_suffix, stage.emulator, stage.regions) == \
        (original.instance_suffix, original.emulator, original.regions)
    served = catalog(tmp_path, "local", {}, "p", ["catalog.yaml"])
    assert list(served.tables) == ["ProductCatalog"]
    assert served.tables["ProductCatalog"].instance_id == "product-catalog" + original.instance_suffix
    assert "Movies" in catalog(tmp_path, "local", {}, "p").tables  # no specs given: the stage's list
    assert not (tmp_path / ".ddb2bigtable").exists()


def test_a_given_spec_that_is_not_there_is_refused_before_anything_is_written(tmp_path):
    _project(tmp_path)
    with pytest.raises(InputError) as raised:
        served_specs(tmp_path, "local", [str(tmp_path / "missing.yaml")])
    assert "missing.yaml" in str(raised.value.problems[0])
    assert not (tmp_path / ".ddb2bigtable").exists()


def test_serve_with_a_given_spec_answers_for_its_tables_only_in_every_worker(served, tmp_path):
    """Two worker processes, each building its catalog from the settings serve hands them:
    the given spec's Movies answers in both, the stage's other tables in neither."""
    root = tmp_path / "project"
    shutil.copytree(served.root, root, ignore=shutil.ignore_patterns("serve.log"))
    mine = tmp_path / "mine" / "movies.yaml"
    mine.parent.mkdir()
    shutil.copy(root / "specs" / "movies.yaml", mine)
    manifest = open_export(str(ROOT / "exports" / "movies"))
    wanted = next(r.item for f in manifest.files for r in read_records(manifest, f) if r.item is not None)
    process, endpoint = start_serve(root, STAGE, "--workers", "2", str(mine))
    try:
        client = Served(root, endpoint, process).client()
        for _ in range(8):  # connections spread over the workers
            got = client.get_item(TableName="Movies", Key={"year": wanted["year"], "title": wanted["title"]})
            assert got["Item"]["title"] == wanted["title"]
            with pytest.raises(client.exceptions.ResourceNotFoundException):
                client.get_item(TableName="ProductCatalog", Key={"id": {"S": "x"}})
    finally:
        stop_process(process)
    assert "serving Movies (stage serve)" in (root / "serve.log").read_text()
    assert not (root / ".ddb2bigtable" / STAGE / "given-specs").exists()  # nothing of the tool's own written
