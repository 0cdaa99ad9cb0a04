"""A load never claims rows it did not write.

The resume state describes one table on one endpoint; a new emulator, a table created by
`--create-tables`, or a table dropped and recreated under the same name must not make a
load report "complete" over rows that are not there.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from google.cloud.bigtable import Client

from ddb2bigtable.bigtable import emulator
from ddb2bigtable.bigtable.table_admin import ensure_tables
from ddb2bigtable.exports.manifests import FULL_EXPORT, open_export
from ddb2bigtable.load.beam.direct import run_beam_load
from ddb2bigtable.load.chain import Link
from ddb2bigtable.load.local_stage import DEFAULT_PROJECT
from ddb2bigtable.load.run import export_fingerprint, run_load
from ddb2bigtable.load.state import FileCounts, LoadState
from ddb2bigtable.load.work_folder import locked
from ddb2bigtable.plan.planner import plan_stage
from ddb2bigtable.spec.errors import InputError
from ddb2bigtable.spec.reading import read_spec
from ddb2bigtable.spec.stage import load_stage

from ..conftest import ROOT
from .test_load_emulator import PROJECT, options, prepare, read_all

MOVIES = str(ROOT / "exports" / "movies")


def _cli_load(work: Path, address: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ddb2bigtable", "load", "specs/movies.yaml", "--table", "movies",
                           "--export", "exports/movies", "--stage", "local", "--work-dir", str(work),
                           "--format", "json", *extra],
                          cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, emulator.EMULATOR_ENV: address})


def _count(address: str, instance_id: str, table_id: str) -> int:
    """Rows in a table of the local stage's project on the emulator at `address`."""
    project = load_stage("local", ROOT).gcp_project or DEFAULT_PROJECT
    previous = os.environ[emulator.EMULATOR_ENV]
    os.environ[emulator.EMULATOR_ENV] = address
    try:
        return sum(1 for _ in Client(project=project).instance(instance_id).table(table_id).read_rows())
    finally:
        os.environ[emulator.EMULATOR_ENV] = previous


def test_a_new_emulator_gets_every_row_although_the_work_folder_says_done(bigtable_emulator, tmp_path):
    """The scenario of the report: `up`'s emulator is gone, a new one is empty, and
    `load --create-tables` with the same work folder printed "complete, 4609" over 0 rows."""
    work = tmp_path / "work"
    first = _cli_load(work, bigtable_emulator.address, "--create-tables")
    assert first.returncode == 0, first.stderr
    with emulator.start() as fresh:
        second = _cli_load(work, fresh.address, "--create-tables")
        assert second.returncode == 0, second.stderr
        report = json.loads(second.stdout)
        assert report["complete"] and report["loaded"] == 4609
        assert {f["status"] for f in report["files"]} == {"loaded"}  # nothing "resumed"
        assert any("starting over" in n or "just created" in n for n in report["notes"]), report["notes"]
        assert _count(fresh.address, "movies-sample-local", "movies") == 4609
        # and a rerun against this emulator resumes, having checked that the rows are there
        third = json.loads(_cli_load(work, fresh.address).stdout)
        assert third["complete"] and {f["status"] for f in third["files"]} == {"resumed: already loaded"}


def test_a_new_emulator_without_the_table_fails_instead_of_resuming(bigtable_emulator, tmp_path):
    work = tmp_path / "work"
    assert _cli_load(work, bigtable_emulator.address, "--create-tables").returncode == 0
    with emulator.start() as fresh:
        run = _cli_load(work, fresh.address)
    assert run.returncode == 2, run.stdout
    assert f"does not exist on the Bigtable emulator at {fresh.address}" in run.stderr
    assert "--create-tables" in run.stderr and "Traceback" not in run.stderr


def _drop(instance_id: str, table_id: str) -> None:
    Client(project=PROJECT, admin=True).instance(instance_id).table(table_id).delete()


@pytest.mark.parametrize("runner", [run_load, run_beam_load], ids=["local", "beam"])
def test_a_table_recreated_empty_between_runs_fails_then_reloads(bigtable_emulator, tmp_path, runner):
    spec, instance_id = prepare("movies.yaml")
    (table,) = spec.tables
    work = tmp_path / "work"
    assert runner(table, MOVIES, options(instance_id, work)).complete
    _drop(instance_id, "movies")
    (instance,) = plan_stage(load_stage("local", ROOT), [spec]).instances
    ensure_tables(PROJECT, replace(instance, id=instance_id))  # same name, same families, no rows

    again = runner(table, MOVIES, options(instance_id, work))
    assert not again.complete and again.files and all(f.status == "failed" for f in again.files)
    assert "sampled rows that this load counts as loaded are not in" in again.error
    assert "rerun the load" in again.error
    state, _ = LoadState.open(work / "state.json", export_fingerprint(open_export(MOVIES), table))
    assert state.done == {}  # forgotten: the rerun rewrites every file
    rerun = runner(table, MOVIES, options(instance_id, work))
    assert rerun.complete and rerun.total("loaded") == 4609
    assert len(read_all(instance_id, "movies")) == 4609


def test_a_dropped_table_is_named_not_counted(bigtable_emulator, tmp_path):
    spec, instance_id = prepare("movies.yaml")
    (table,) = spec.tables
    work = tmp_path / "work"
    assert run_load(table, MOVIES, options(instance_id, work)).complete
    _drop(instance_id, "movies")
    with pytest.raises(InputError, match="does not exist on the Bigtable emulator"):  # before the state is read
        run_load(table, MOVIES, options(instance_id, work))


def test_fresh_reloads_every_file(bigtable_emulator, tmp_path):
    spec, instance_id = prepare("movies.yaml")
    (table,) = spec.tables
    work = tmp_path / "work"
    assert run_load(table, MOVIES, options(instance_id, work)).complete
    again = run_load(table, MOVIES, options(instance_id, work, fresh="--fresh"))
    assert again.complete and {f.status for f in again.files} == {"loaded"}
    assert again.notes and again.notes[0].startswith("--fresh: the resume state")


@pytest.mark.parametrize("damage", [b"", b'{"fingerprint": "x", "done": {', b"\x00\xff garbage",
                                    b'{"fingerprint": "x", "done": {"f": {"nope": 1}}}', b"[1, 2]",
                                    b'{"fingerprint": "x", "done": {}, "types": 7}'],
                         ids=["empty", "truncated", "garbage", "wrong-fields", "not-an-object", "bad-types"])
def test_a_damaged_resume_state_starts_over_and_says_so(bigtable_emulator, tmp_path, damage):
    spec, instance_id = prepare("movies.yaml")
    work = tmp_path / "work"
    work.mkdir()
    (work / "state.json").write_bytes(damage)
    report = run_load(spec.tables[0], MOVIES, options(instance_id, work))
    assert report.complete and report.total("loaded") == 4609
    assert any("is damaged" in note and "starting over" in note for note in report.notes), report.notes


def test_a_folder_where_the_state_belongs_is_bad_input(tmp_path):
    (tmp_path / "state.json").mkdir()
    with pytest.raises(InputError, match="is not a file, so it cannot hold the load's resume state: delete it"):
        LoadState.open(tmp_path / "state.json", "fingerprint")


def test_a_state_saved_now_or_by_an_earlier_version_opens_the_same(tmp_path):
    """Saved with orjson (#33); a state the standard library wrote (indent=1, names as
    \\u escapes) before that still resumes, nothing lost."""
    where = {"project": "p", "instance": "i", "table": "t", "endpoint": "127.0.0.1:8086"}
    state = LoadState("fp", {"data/a.json.gz": FileCounts(3, 2, dead_lettered=1, forms={"na\u00efve": {"S": 2}})},
                      {"na\u00efve": "S"}, where, {"na\u00efve": "S", "\u65e5": "N"}, (Link("e1", FULL_EXPORT, 1, 2),))
    path = tmp_path / "state.json"
    state.save(path)
    assert LoadState.open(path, "fp", where) == (state, None)
    path.write_text(json.dumps(json.loads(path.read_text(encoding="utf-8")), indent=1, sort_keys=True))
    assert LoadState.open(path, "fp", where) == (state, None)


def test_a_second_load_of_the_same_work_folder_is_refused(bigtable_emulator, tmp_path):
    spec, instance_id = prepare("movies.yaml")
    work = tmp_path / "work"
    with locked(work):
        with pytest.raises(InputError, match=rf"another load \(PID {os.getpid()}\) is using this work folder"):
            run_load(spec.tables[0], MOVIES, options(instance_id, work))
    assert run_load(spec.tables[0], MOVIES, options(instance_id, work)).complete  # released


def test_another_tables_export_is_refused_before_anything_is_written(bigtable_emulator, tmp_path):
    """exports/products loaded as movies used to dead-letter every item and print 'complete'."""
    work = tmp_path / "work"
    run = subprocess.run([sys.executable, "-m", "ddb2bigtable", "load", "specs/movies.yaml", "--table", "movies",
                          "--export", "exports/products", "--stage", "local", "--create-tables",
                          "--work-dir", str(work)], cwd=ROOT, capture_output=True, text=True, timeout=120,
                         env={**os.environ})
    assert run.returncode == 2, run.stdout + run.stderr
    assert "this is an export of DynamoDB table ProductCatalog" in run.stderr and "--allow-other-table" in run.stderr
    assert not (work / "state.json").exists()


def test_an_export_the_mapping_cannot_read_is_not_complete(bigtable_emulator, tmp_path):
    spec, instance_id = prepare("movies.yaml")
    report = run_load(spec.tables[0], str(ROOT / "exports" / "products"),
                      options(instance_id, tmp_path / "work", allow_other_table=True))
    assert report.total("dead_lettered") == report.total("read") == 5
    assert not report.complete and "5 of 5 lines were dead-lettered (more than 50%)" in report.error


def test_a_missing_table_fails_in_seconds_with_the_fix(bigtable_emulator, tmp_path):
    spec, instance_id = prepare("movies.yaml")
    with pytest.raises(InputError, match=r"table .*/movies does not exist on the Bigtable emulator at .*"
                                          r"`load --create-tables`"):
        run_load(spec.tables[0], MOVIES, options(instance_id + "-x", tmp_path / "work"))
    assert not (tmp_path / "work" / "state.json").exists()


def test_a_missing_family_is_named(bigtable_emulator, tmp_path):
    spec, instance_id = prepare("movies.yaml")
    table = spec.tables[0]
    other = replace(table, mapping=replace(table.mapping, default_family="data"))
    with pytest.raises(InputError, match="lacks the column families data that the mapping writes"):
        run_load(other, MOVIES, options(instance_id, tmp_path / "work"))


def test_a_stopped_emulator_is_named_not_retried_for_minutes(tmp_path, monkeypatch):
    spec = read_spec(ROOT / "specs" / "movies.yaml")
    with emulator.start() as gone:
        address = gone.address
    monkeypatch.setenv(emulator.EMULATOR_ENV, address)
    with pytest.raises(InputError, match=rf"cannot reach the Bigtable emulator at {address} within 5 s"):
        run_load(spec.tables[0], MOVIES, options("nowhere", tmp_path / "work"))
