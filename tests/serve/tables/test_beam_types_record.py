"""The Beam load and the table's record of its types, on the DirectRunner against the real
emulator, read back through serve: both ways the pipeline gets its types (inferred on the
launcher, `load --runner beam`; inferred inside the job, as on Dataflow) adopt the record
before inferring and record their own before the first row."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import apache_beam as beam
import pytest
from google.cloud.bigtable.data import BigtableDataClientAsync

from ddb2bigtable.bigtable.table_types import record_types
from ddb2bigtable.exports.manifests import open_export
from ddb2bigtable.exports.writer import write_export
from ddb2bigtable.load.beam import dataflow
from ddb2bigtable.load.beam.direct import direct_options, run_beam_load
from ddb2bigtable.load.beam.pipeline import BeamLoad, build_pipeline
from ddb2bigtable.load.jobs import LoadJobPlan
from ddb2bigtable.load.run import LoadOptions
from ddb2bigtable.load.table_record import table_record
from ddb2bigtable.load.work_folder import dead_letter_records
from ddb2bigtable.spec.errors import InputError, ServiceError
from ddb2bigtable.spec.model import AttributeMapping

from .test_types_record import ARN, PROJECT, SCRATCH_INSTANCE, _record, _scratch


def export(tmp: Path, name: str, pk: str, attribute: str, values: list[dict]) -> str:
    items = [{"pk": {"S": pk}, "sk": {"N": str(i)}, attribute: value} for i, value in enumerate(values)]
    return str(write_export(tmp / name, ARN, items, export_time=datetime(2026, 11, 2, tzinfo=UTC), items_per_file=2))


def as_on_dataflow(root: Path, location: str, work: Path) -> None:
    """What `launch_dataflow` launches, on the DirectRunner: the record read at launch, the
    types inferred inside the job."""
    table, manifest = _scratch(root), open_export(location)
    recorded = asyncio.run(table_record(PROJECT, table, SCRATCH_INSTANCE, None))
    load = BeamLoad(table=table, manifest=manifest, files=tuple(f.key for f in manifest.files), project=PROJECT,
                    instance_id=SCRATCH_INSTANCE, app_profile_id=None, work_dir=str(work), run_id="t", now_micros=0,
                    recorded=recorded)
    with beam.Pipeline(options=direct_options()) as pipeline:
        build_pipeline(pipeline, load)


def on_the_launcher(root: Path, location: str, work: Path):
    return run_beam_load(_scratch(root), location, LoadOptions(project=PROJECT, instance_id=SCRATCH_INSTANCE,
                                                               app_profile_id=None, work_dir=work))


def item(client, pk: str, sk: int) -> dict:
    return client.get_item(TableName="Scratch", Key={"pk": {"S": pk}, "sk": {"N": str(sk)}}).get("Item", {})


@pytest.mark.parametrize("runner", ["job", "launcher"])
def test_a_beam_load_after_serve_recorded_an_attribute_as_mixed_writes_it_so_serve_reads_it(served, tmp_path, runner):
    attribute = f"bnote_{runner}"
    client = served.client()
    client.put_item(TableName="Scratch", Item={"pk": {"S": f"{attribute}-serve"}, "sk": {"N": "1"},
                                               attribute: {"N": "5"}})
    assert _record(SCRATCH_INSTANCE, "scratch")[attribute] == "mixed"
    # alone, this export would infer S and write plain text serve would read as typed JSON
    location = export(tmp_path, "strings", f"{attribute}-beam", attribute, [{"S": f"text {i}"} for i in range(3)])
    if runner == "job":
        as_on_dataflow(served.root, location, tmp_path / "work")
    else:
        report = on_the_launcher(served.root, location, tmp_path / "work")
        assert report.complete and report.error is None and report.total("loaded") == 3, report
    assert _record(SCRATCH_INSTANCE, "scratch")[attribute] == "mixed"
    assert item(client, f"{attribute}-beam", 1)[attribute] == {"S": "text 1"}
    assert item(client, f"{attribute}-serve", 1)[attribute] == {"N": "5"}


@pytest.mark.parametrize("runner", ["job", "launcher"])
def test_a_beam_load_whose_inferred_type_disagrees_with_the_record_dead_letters_what_does_not_fit(
        served, tmp_path, runner):
    attribute = f"blevel_{runner}"
    location = export(tmp_path, "levels", f"{attribute}-n", attribute, [{"N": str(i)} for i in range(2)])
    first = on_the_launcher(served.root, location, tmp_path / "first")  # records the attribute as N
    assert first.complete and _record(SCRATCH_INSTANCE, "scratch")[attribute] == "N"
    location = export(tmp_path, "strings", f"{attribute}-s", attribute, [{"S": "high"}, {"S": "low"}])
    work = tmp_path / "second"
    if runner == "job":
        as_on_dataflow(served.root, location, work)
    else:
        report = on_the_launcher(served.root, location, work)
        assert report.total("dead_lettered") == 2 and report.total("loaded") == 0, report
    reasons = {d["reason"] for d in dead_letter_records(work)}
    assert reasons == {f"{attribute} is S in this item, but the table's cells of {attribute} are N (the type "
                       f"recorded with the table, or inferred over this export): keep one type per attribute, or "
                       f"reload the table with the new one"}, reasons
    assert _record(SCRATCH_INSTANCE, "scratch")[attribute] == "N"
    client = served.client()
    assert item(client, f"{attribute}-s", 1) == {} and item(client, f"{attribute}-n", 1)[attribute] == {"N": "1"}


def test_a_type_recorded_after_the_launch_stops_the_job_before_its_first_row(served, tmp_path):
    table = _scratch(served.root)
    location = export(tmp_path, "late", "late", "blate", [{"S": "a"}, {"S": "b"}, {"S": "c"}])
    manifest = open_export(location)
    recorded = asyncio.run(table_record(PROJECT, table, SCRATCH_INSTANCE, None))
    assert "blate" not in recorded

    async def another_writer():  # between the launch and the job's RecordTypes step
        async with BigtableDataClientAsync(project=PROJECT) as bigtable:
            await record_types(bigtable, PROJECT, SCRATCH_INSTANCE, "scratch", {"blate": "N"})
    asyncio.run(another_writer())
    load = BeamLoad(table=table, manifest=manifest, files=tuple(f.key for f in manifest.files), project=PROJECT,
                    instance_id=SCRATCH_INSTANCE, app_profile_id=None, work_dir=str(tmp_path / "work"), run_id="t",
                    now_micros=0, recorded=recorded)
    with pytest.raises(ServiceError) as stopped:
        with beam.Pipeline(options=direct_options()) as pipeline:
            build_pipeline(pipeline, load)
    message = str(stopped.value)
    assert "another writer recorded other types in the table's record of its types (row scratch of " \
           "serve-scratch/_ddb2bigtable_types) while this load inferred its own: blate would be written as S, " \
           "recorded as N; nothing was written: launch the load again (`pulumi up --replace` of its LoadJob)" \
           in message, message
    assert item(served.client(), "late", 1) == {}
    assert _record(SCRATCH_INSTANCE, "scratch")["blate"] == "N"


def test_the_dataflow_launch_refuses_a_spec_declaring_another_type_than_the_table_holds(served, tmp_path,
                                                                                       monkeypatch):
    monkeypatch.setattr(dataflow, "require_gcp_extra", lambda: None)  # apache-beam[gcp] is not installed here
    asyncio.run(_record_mixed("bdeclared"))
    table = _scratch(served.root)
    table = replace(table, mapping=replace(table.mapping, attributes=(
        *table.mapping.attributes, AttributeMapping(name="bdeclared", type="N"))))
    location = export(tmp_path, "declared", "declared", "bdeclared", [{"N": "1"}])
    job = LoadJobPlan(instance_id=SCRATCH_INSTANCE, table_id="scratch", export=location, project=PROJECT,
                      region="us-west2", app_profile_id="migration-load", sample=None, temp_location="gs://t/tmp",
                      service_account=None, spec_file="specs/scratch.yaml", fingerprint="0" * 32)
    with pytest.raises(InputError, match="declares bdeclared as N, but the table's record of its types .* holds it "
                                         "as mixed"):
        dataflow.launch_dataflow(job, table)


async def _record_mixed(attribute: str) -> None:
    async with BigtableDataClientAsync(project=PROJECT) as bigtable:
        await record_types(bigtable, PROJECT, SCRATCH_INSTANCE, "scratch", {attribute: "mixed"})
