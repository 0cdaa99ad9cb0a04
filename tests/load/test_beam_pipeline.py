"""The Beam pipeline (DirectRunner) against the real Bigtable emulator, and its Dataflow options.

Each emulator test loads into its own instance id, as in test_load_emulator.py.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import shutil
import stat
import sys
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest
from apache_beam.options.pipeline_options import GoogleCloudOptions, SetupOptions, StandardOptions, WorkerOptions

from ddb2bigtable.codec.type_inference import infer_types, merge_types
from ddb2bigtable.exports.manifests import open_export
from ddb2bigtable.exports.reader import read_records
from ddb2bigtable.exports.writer import IncrementalChange, write_incremental_export
from ddb2bigtable.load.beam import dataflow
from ddb2bigtable.load.beam.dataflow import DataflowUnavailable, find_table, launch_dataflow, pipeline_options_for
from ddb2bigtable.load.beam.direct import direct_options, run_beam_load
from ddb2bigtable.load.beam.pipeline import BeamLoad, WriteRows, build_pipeline
from ddb2bigtable.load.jobs import LoadJobPlan, load_jobs
from ddb2bigtable.load.run import export_fingerprint, run_load
from ddb2bigtable.load.state import LoadState, target
from ddb2bigtable.load.verify import run_verify
from ddb2bigtable.load.work_folder import dead_letter_records
from ddb2bigtable.load.writer import WriteSettings
from ddb2bigtable.plan.operations import load_job_prefix
from ddb2bigtable.program import plan_for_stack
from ddb2bigtable.spec.errors import InputError
from ddb2bigtable.spec.reading import read_spec

from ..conftest import ROOT
from .test_load_emulator import PROJECT, options, prepare, read_all

MOVIES = ROOT / "exports" / "movies"


def cells(instance_id: str, table_id: str) -> dict[bytes, list[tuple]]:
    return {row.row_key: sorted((c.family, c.qualifier, c.value, c.timestamp_micros) for c in row)
            for row in read_all(instance_id, table_id)}


def test_the_movies_export_through_beam_loads_4609_rows_that_verify(bigtable_emulator, tmp_path):
    spec, instance_id = prepare("movies.yaml")
    (table,) = spec.tables
    report = run_beam_load(table, str(MOVIES), options(instance_id, tmp_path))
    assert report.complete and report.error is None, report
    assert report.total("loaded") == 4609 == report.manifest_items == report.accounted
    assert [f.status for f in report.files] == ["loaded"] * len(report.files)
    assert all(f.counts.read == f.manifest_items for f in report.files)
    assert report.dead_letters is None
    assert len(read_all(instance_id, "movies")) == 4609
    verified = run_verify(table, str(MOVIES), project=PROJECT, instance_id=instance_id, work_dir=tmp_path)
    assert verified.ok and verified.matched == 4609 and verified.table_items == 4609
    again = run_beam_load(table, str(MOVIES), options(instance_id, tmp_path))  # resumes: nothing to do
    assert again.complete and {f.status for f in again.files} == {"resumed: already loaded"}


def corrupt(export: Path, line_no: int, replacement: bytes) -> tuple[str, Path]:
    """Replace one line of the first data file, and fix its md5 in the manifest on purpose."""
    manifest_path = next(export.glob("AWSDynamoDB/*/manifest-files.json"))
    entries = [json.loads(line) for line in manifest_path.read_text().splitlines() if line]
    key = entries[0]["dataFileS3Key"]
    data = next(export.glob(f"AWSDynamoDB/*/data/{Path(key).name}"))
    lines = gzip.decompress(data.read_bytes()).splitlines(keepends=True)
    lines[line_no - 1] = replacement + b"\n"
    data.write_bytes(gzip.compress(b"".join(lines)))
    entries[0]["md5Checksum"] = base64.b64encode(hashlib.md5(data.read_bytes()).digest()).decode()
    manifest_path.write_text("".join(json.dumps(e, separators=(",", ":")) + "\n" for e in entries))
    return key, data


def test_corrupt_lines_become_dead_letters_and_every_item_is_accounted_for(bigtable_emulator, tmp_path):
    export = tmp_path / "export"
    shutil.copytree(MOVIES, export)
    key, _ = corrupt(export, 7, b'{"Item": {"year": {"N": "2013"}, "title": ')  # cut short: not JSON
    corrupt(export, 12, b'{"Item": {"year": {"N": "2013"}, "rating": {"N": "5"}}}')  # no sort key: the codec refuses
    spec, instance_id = prepare("movies.yaml")
    (table,) = spec.tables
    work = tmp_path / "work"
    report = run_beam_load(table, str(export), options(instance_id, work))
    assert report.total("dead_lettered") == 2 and report.total("loaded") == 4607
    assert report.accounted == report.manifest_items == 4609 and report.complete
    dead = sorted(dead_letter_records(work), key=lambda d: d["line"])
    assert [(d["file"], d["line"]) for d in dead] == [(key, 7), (key, 12)]
    assert "not valid JSON" in dead[0]["reason"] and dead[0]["raw"].startswith('{"Item"')
    assert "title" in dead[1]["reason"]
    assert report.dead_letters == str(work / "dead-letters")
    assert len(read_all(instance_id, "movies")) == 4607
    verified = run_verify(table, str(export), project=PROJECT, instance_id=instance_id, work_dir=work)
    assert verified.ok and verified.dead_lettered == 2 and verified.matched == 4607


def test_an_md5_mismatch_fails_the_load_with_the_file_named(bigtable_emulator, tmp_path):
    export = tmp_path / "export"
    shutil.copytree(MOVIES, export)
    key, data = corrupt(export, 3, b'{"Item": {"year": {"N": "1999"}, "title": {"S": "changed"}}}')
    data.write_bytes(data.read_bytes() + b"\0")  # the manifest's md5 no longer matches
    spec, instance_id = prepare("movies.yaml")
    (table,) = spec.tables
    first = run_beam_load(table, str(export), options(instance_id, tmp_path / "fresh"))  # caught before inference
    assert not first.complete and "md5" in first.error and Path(key).name in first.error
    work = tmp_path / "typed"  # types already known (a rerun): the pipeline's own md5 check catches it
    manifest = open_export(str(export))
    types = infer_types((r.item for f in manifest.files for r in read_records(manifest, f) if r.item), table)
    LoadState(export_fingerprint(manifest, table), {}, types, target(PROJECT, instance_id, table.id)).save(
        work / "state.json")
    report = run_beam_load(table, str(export), options(instance_id, work))
    assert not report.complete and "md5" in report.error and "[while running" not in report.error
    failed = {f.file: f for f in report.files}
    assert all(f.status == "failed" for f in report.files) and failed[key].error == report.error
    assert LoadState.open(work / "state.json", export_fingerprint(manifest, table))[0].done == {}  # a rerun loads all


@pytest.mark.parametrize("types_in", ["launcher", "pipeline"])
def test_the_local_writer_and_beam_write_identical_cells(bigtable_emulator, tmp_path, types_in):
    export = str(ROOT / "exports" / "products")
    spec, local_id = prepare("product-catalog.yaml")
    _, beam_id = prepare("product-catalog.yaml")
    table = next(t for t in spec.tables if t.id == "products")
    local = run_load(table, export, options(local_id, tmp_path / "local"))
    assert local.complete
    if types_in == "launcher":
        report = run_beam_load(table, export, options(beam_id, tmp_path / "beam"))
        assert report.complete and report.total("loaded") == local.total("loaded")
    else:  # as on Dataflow: the job infers the types itself (per file, merged, a side input);
        # tiny batcher limits: the writer drains its batcher (close, reopen) every 10 mutations
        # and runs a full collection every 20 rows
        manifest = open_export(export)
        load = BeamLoad(table=table, manifest=manifest, files=tuple(f.key for f in manifest.files), project=PROJECT,
                        instance_id=beam_id, app_profile_id="migration-load", work_dir=str(tmp_path / "beam"),
                        run_id="t", now_micros=0, types=None,
                        writer=WriteSettings(flush_limit_mutation_count=1, flow_control_max_mutation_count=2,
                                             rows_per_collection=20))
        assert WriteRows(load).drain_every == 10
        import apache_beam as beam

        with beam.Pipeline(options=direct_options()) as pipeline:
            build_pipeline(pipeline, load)
    written, expected = cells(beam_id, "products"), cells(local_id, "products")
    assert written and list(written) == list(expected)  # same row keys, same order
    for key in expected:
        assert written[key] == expected[key], key  # family, qualifier, value, timestamp


def test_a_stage_sample_keeps_the_same_rows_as_the_local_loader(bigtable_emulator, tmp_path):
    spec, local_id = prepare("movies.yaml")
    _, beam_id = prepare("movies.yaml")
    (table,) = spec.tables
    local = run_load(table, str(MOVIES), options(local_id, tmp_path / "local", sample=0.25))
    small_batches = WriteSettings(flush_limit_mutation_count=100, flow_control_max_mutation_count=200)
    report = run_beam_load(table, str(MOVIES), options(beam_id, tmp_path / "beam", sample=0.25, writer=small_batches))
    assert report.complete and 0 < report.total("loaded") < 4609  # ~1,150 rows: the batcher drained each 1,000
    assert (report.total("loaded"), report.total("sampled_out")) == (local.total("loaded"), local.total("sampled_out"))
    assert list(cells(beam_id, "movies")) == list(cells(local_id, "movies"))


@pytest.mark.parametrize("export", ["movies", "other/movies-ion", "products", "videos", "invoices"])
def test_types_merged_per_file_are_the_types_of_the_whole_export(export):
    spec_file = {"movies": "movies.yaml", "other/movies-ion": "movies.yaml", "products": "product-catalog.yaml",
                 "videos": "video-single-table.yaml", "invoices": "invoices-adjacency.yaml"}[export]
    table_id = {"other/movies-ion": "movies"}.get(export, export)
    table = next(t for t in read_spec(ROOT / "specs" / spec_file).tables if t.id == table_id)
    manifest = open_export(str(ROOT / "exports" / export))
    items = lambda files: (r.item for f in files for r in read_records(manifest, f) if r.item is not None)  # noqa: E731
    merged = {}
    for f in manifest.files:
        merged = merge_types(merged, infer_types(items([f]), table))
    assert merged == infer_types(items(manifest.files), table)


def test_merging_types_marks_disagreements_mixed():
    assert merge_types({"a": "S", "b": "M"}, {"a": "N", "b": "mixed", "c": "L"}) == {"a": "mixed", "b": "mixed",
                                                                                      "c": "L"}


# --- Dataflow ---------------------------------------------------------------------------

JOB = LoadJobPlan(instance_id="shop-global-stg", table_id="orders_v2", export="gs://shop-exports/2026-11-20/orders",
                  project="my-project-staging", region="us-east4", app_profile_id="migration-load", sample=None,
                  temp_location="gs://shop-tmp/dataflow/", service_account="loader@my-project.iam.gserviceaccount.com",
                  spec_file="specs/shop-global.yaml", fingerprint="0123456789abcdef0123456789abcdef")


def test_pipeline_options_for_a_dataflow_job(monkeypatch, tmp_path):
    monkeypatch.delenv(dataflow.CONTAINER_IMAGE_ENV, raising=False)
    options = pipeline_options_for(JOB, tmp_path)
    gcp, setup = options.view_as(GoogleCloudOptions), options.view_as(SetupOptions)
    assert options.view_as(StandardOptions).runner == "DataflowRunner"
    assert (gcp.project, gcp.region) == ("my-project-staging", "us-east4")
    assert gcp.temp_location == "gs://shop-tmp/dataflow/temp"
    assert gcp.staging_location == "gs://shop-tmp/dataflow/staging"
    assert gcp.service_account_email == "loader@my-project.iam.gserviceaccount.com"
    assert gcp.job_name == "ddb2bigtable-shop-global-stg-orders-v2-01234567"
    # the plan's dead-letter alert watches jobs by this prefix: a renamed job would go unwatched
    assert gcp.job_name.startswith(load_job_prefix(JOB.instance_id))
    assert gcp.labels == ["ddb2bigtable-instance=shop-global-stg", "ddb2bigtable-table=orders_v2"]
    assert setup.save_main_session is False
    (wheel,) = setup.extra_packages
    assert wheel.endswith("-py3-none-any.whl") and Path(wheel).name.startswith("ddb2bigtable-")
    assert Path(wheel).parent == tmp_path
    assert setup.requirements_file is None  # the wheel's dependencies read gs:// and s3:// exports
    assert options.view_as(WorkerOptions).sdk_container_image is None


def test_each_launch_builds_in_its_own_private_folder_and_leaves_nothing():
    """Two stages deployed at once (a GitOps runner in parallel) shared one folder and
    deleted each other's worker wheel; now each launch has its own, removed after."""
    with dataflow.launch_folder() as one, dataflow.launch_folder() as two:
        assert one != two and one.is_dir() and two.is_dir()
        assert stat.S_IMODE(one.stat().st_mode) == 0o700
        assert dataflow.worker_wheel(one).parent == one
    assert not one.exists() and not two.exists()


def test_a_prebuilt_worker_image_replaces_the_staged_wheel(monkeypatch, tmp_path):
    monkeypatch.setenv(dataflow.CONTAINER_IMAGE_ENV, "us-docker.pkg.dev/p/r/loader:1")
    options = pipeline_options_for(JOB, tmp_path)
    assert options.view_as(WorkerOptions).sdk_container_image == "us-docker.pkg.dev/p/r/loader:1"
    assert options.view_as(SetupOptions).extra_packages is None


def test_a_dataflow_job_needs_a_temp_location_and_a_project():
    with pytest.raises(DataflowUnavailable, match="load.temp_location"):
        pipeline_options_for(replace(JOB, temp_location=None), Path("unused"))
    with pytest.raises(DataflowUnavailable, match="gcp:project"):
        pipeline_options_for(replace(JOB, project=None), Path("unused"))


def test_launching_without_the_gcp_extra_says_what_to_install(monkeypatch):
    """Here apache-beam[gcp] is not installed; the modules are also hidden so this holds anywhere."""
    monkeypatch.setitem(sys.modules, "apache_beam.runners.dataflow.internal.apiclient", None)
    monkeypatch.setitem(sys.modules, "google.cloud.dataflow", None)
    with pytest.raises(DataflowUnavailable, match=r"pip install 'apache-beam\[gcp\]'"):
        launch_dataflow(JOB)
    from components import load_job  # the post-deploy hook's path, from the resource's props

    with pytest.raises(DataflowUnavailable, match=r"pip install 'apache-beam\[gcp\]'"):
        load_job.launch({**JOB.__dict__, "job_id": None})


def test_an_incremental_export_is_never_launched_on_dataflow(monkeypatch, tmp_path):
    """Dataflow keeps no chain state: an incremental applied alone could undo later deletes."""
    monkeypatch.setattr(dataflow, "require_gcp_extra", lambda: None)  # apache-beam[gcp] is not installed here
    when = datetime(2026, 11, 20, tzinfo=UTC)
    increment = write_incremental_export(tmp_path, "arn:aws:dynamodb:us-east-1:123456789012:table/Orders",
                                         [IncrementalChange({"pk": {"S": "a"}}, 1)], export_time=when)
    with pytest.raises(InputError, match="incremental export: a Dataflow load cannot tell") as error:
        launch_dataflow(replace(JOB, export=str(increment)))
    assert "load --chain" in str(error.value) and str(increment) in str(error.value)


def test_launching_without_the_gcp_extra_fails_with_the_clear_message(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "apache_beam.runners.dataflow.internal.apiclient", None)  # as if missing
    with pytest.raises(DataflowUnavailable, match=r"pip install 'apache-beam\[gcp\]'") as error:
        dataflow.require_gcp_extra()
    assert not isinstance(error.value, ImportError)


def test_a_job_finds_the_spec_table_its_fingerprint_was_made_from():
    import yaml

    config = yaml.safe_load((ROOT / "stacks" / "Pulumi.staging.yaml").read_text())["config"]
    config["ddb2bigtable:stage"]["load"] = {"runner": "dataflow", "export": "gs://shop-exports/2026-11-20",
                                            "temp_location": "gs://shop-tmp/dataflow"}
    stage, specs, plan = plan_for_stack("staging", ROOT, config)
    jobs = load_jobs(stage, specs, plan)
    assert jobs
    tables = {t.id: t for s in specs for t in s.tables}
    for job in jobs:  # the job names its spec relative to the project, where `pulumi up` runs
        assert replace(find_table(job), location=None) == replace(tables[job.table_id], location=None)
    with pytest.raises(DataflowUnavailable, match="no longer has this table"):
        find_table(replace(jobs[0], fingerprint="f" * 32))  # the mapping changed since the plan
