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
from ddb2bigtable.codec.type_inference import UNNAMED
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

from .conftest import FRESH_INSTANCE, FreshTable
from .test_types_record import ARN, PROJECT, SCRATCH_INSTANCE, _record, _scratch


def scratch(root: Path) -> tuple[FreshTable, str]:
    return FreshTable("Scratch", _scratch(root), ARN), SCRATCH_INSTANCE


def export(tmp: Path, name: str, pk: str, attribute: str, values: list[dict], arn: str = ARN) -> str:
    items = [{"pk": {"S": pk}, "sk": {"N": str(i)}, attribute: value} for i, value in enumerate(values)]
    return str(write_export(tmp / name, arn, items, export_time=datetime(2026, 11, 2, tzinfo=UTC), items_per_file=2))


def as_on_dataflow(where: tuple[FreshTable, str], location: str, work: Path) -> None:
    """What `launch_dataflow` launches, on the DirectRunner: the record read at launch, the
    types inferred inside the job."""
    (table, instance_id), manifest = where, open_export(location)
    recorded = asyncio.run(table_record(PROJECT, table.spec, instance_id, None))
    load = BeamLoad(table=table.spec, manifest=manifest, files=tuple(f.key for f in manifest.files), project=PROJECT,
                    instance_id=instance_id, app_profile_id=None, work_dir=str(work), run_id="t", now_micros=0,
                    recorded=recorded)
    with beam.Pipeline(options=direct_options()) as pipeline:
        build_pipeline(pipeline, load)


def on_the_launcher(where: tuple[FreshTable, str], location: str, work: Path):
    table, instance_id = where
    return run_beam_load(table.spec, location, LoadOptions(project=PROJECT, instance_id=instance_id,
                                                           app_profile_id=None, work_dir=work))


def item(client, pk: str, sk: int, table: str = "Scratch") -> dict:
    return client.get_item(TableName=table, Key={"pk": {"S": pk}, "sk": {"N": str(sk)}}).get("Item", {})


@pytest.mark.parametrize("runner", ["job", "launcher"])
def test_a_beam_load_after_serve_wrote_an_attribute_the_record_does_not_name_writes_it_so_serve_reads_it(
        served, tmp_path, runner):
    attribute = f"bnote_{runner}"
    client = served.client()
    client.put_item(TableName="Scratch", Item={"pk": {"S": f"{attribute}-serve"}, "sk": {"N": "1"},
                                               attribute: {"N": "5"}})
    record = _record(SCRATCH_INSTANCE, "scratch")
    assert attribute not in record and record[UNNAMED] == "mixed"
    # alone, this export would infer S and write plain text serve would read as typed JSON
    location = export(tmp_path, "strings", f"{attribute}-beam", attribute, [{"S": f"text {i}"} for i in range(3)])
    if runner == "job":
        as_on_dataflow(scratch(served.root), location, tmp_path / "work")
    else:
        report = on_the_launcher(scratch(served.root), location, tmp_path / "work")
        assert report.complete and report.error is None and report.total("loaded") == 3, report
    assert attribute not in _record(SCRATCH_INSTANCE, "scratch")
    assert item(client, f"{attribute}-beam", 1)[attribute] == {"S": "text 1"}
    assert item(client, f"{attribute}-serve", 1)[attribute] == {"N": "5"}


@pytest.mark.parametrize("runner", ["job", "launcher"])
def test_a_beam_load_whose_inferred_type_disagrees_with_the_record_dead_letters_what_does_not_fit(
        fresh, tmp_path, runner):
    attribute = f"blevel_{runner}"
    where = fresh.take(), FRESH_INSTANCE
    table = where[0]
    location = export(tmp_path, "levels", f"{attribute}-n", attribute, [{"N": str(i)} for i in range(2)], table.arn)
    first = on_the_launcher(where, location, tmp_path / "first")  # records the attribute as N
    assert first.complete and _record(FRESH_INSTANCE, table.spec.id)[attribute] == "N"
    location = export(tmp_path, "strings", f"{attribute}-s", attribute, [{"S": "high"}, {"S": "low"}], table.arn)
    work = tmp_path / "second"
    if runner == "job":
        as_on_dataflow(where, location, work)
    else:
        report = on_the_launcher(where, location, work)
        assert report.total("dead_lettered") == 2 and report.total("loaded") == 0, report
    reasons = {d["reason"] for d in dead_letter_records(work)}
    assert reasons == {f"{attribute} is S in this item, but the table's cells of {attribute} are N (the type "
                       f"recorded with the table, or inferred over this export): keep one type per attribute, or "
                       f"reload the table with the new one"}, reasons
    assert _record(FRESH_INSTANCE, table.spec.id)[attribute] == "N"
    client = fresh.served.client()
    assert item(client, f"{attribute}-s", 1, table.name) == {}
    assert item(client, f"{attribute}-n", 1, table.name)[attribute] == {"N": "1"}


def test_a_type_recorded_after_the_launch_stops_the_job_before_its_first_row(fresh, tmp_path):
    fresh_table = fresh.take()
    table, table_id = fresh_table.spec, fresh_table.spec.id
    location = export(tmp_path, "late", "late", "blate", [{"S": "a"}, {"S": "b"}, {"S": "c"}], fresh_table.arn)
    manifest = open_export(location)
    recorded = asyncio.run(table_record(PROJECT, table, FRESH_INSTANCE, None))
    assert "blate" not in recorded

    async def another_writer():  # between the launch and the job's RecordTypes step
        async with BigtableDataClientAsync(project=PROJECT) as bigtable:
            await record_types(bigtable, PROJECT, FRESH_INSTANCE, table_id, {"blate": "N"})
    asyncio.run(another_writer())
    load = BeamLoad(table=table, manifest=manifest, files=tuple(f.key for f in manifest.files), project=PROJECT,
                    instance_id=FRESH_INSTANCE, app_profile_id=None, work_dir=str(tmp_path / "work"), run_id="t",
                    now_micros=0, recorded=recorded)
    with pytest.raises(ServiceError) as stopped:
        with beam.Pipeline(options=direct_options()) as pipeline:
            build_pipeline(pipeline, load)
    message = str(stopped.value)
    assert f"another writer recorded other types in the table's record of its types (row {table_id} of " \
           f"{FRESH_INSTANCE}/_ddb2bigtable_types) while this load inferred its own: blate would be written as S, " \
           "recorded as N; nothing was written: launch the load again (`pulumi up --replace` of its LoadJob)" \
           in message, message
    assert item(fresh.served.client(), "late", 1, fresh_table.name) == {}
    assert _record(FRESH_INSTANCE, table_id)["blate"] == "N"


def test_the_dataflow_launch_refuses_a_spec_declaring_another_type_than_the_table_holds(fresh, tmp_path,
                                                                                       monkeypatch):
    monkeypatch.setattr(dataflow, "require_gcp_extra", lambda: None)  # apache-beam[gcp] is not installed here
    fresh_table = fresh.take()
    table = fresh_table.spec
    asyncio.run(_record_mixed(table.id, "bdeclared"))
    table = replace(table, mapping=replace(table.mapping, attributes=(
        *table.mapping.attributes, AttributeMapping(name="bdeclared", type="N"))))
    location = export(tmp_path, "declared", "declared", "bdeclared", [{"N": "1"}], fresh_table.arn)
    job = LoadJobPlan(instance_id=FRESH_INSTANCE, table_id=table.id, export=location, project=PROJECT,
                      region="us-west2", app_profile_id="migration-load", sample=None, temp_location="gs://t/tmp",
                      service_account=None, spec_file="specs/fresh.yaml", fingerprint="0" * 32)
    with pytest.raises(InputError, match="declares bdeclared as N, but the table's record of its types .* holds it "
                                         "as mixed"):
        dataflow.launch_dataflow(job, table)


async def _record_mixed(table_id: str, attribute: str) -> None:
    async with BigtableDataClientAsync(project=PROJECT) as bigtable:
        await record_types(bigtable, PROJECT, FRESH_INSTANCE, table_id, {attribute: "mixed"})
