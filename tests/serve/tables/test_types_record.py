"""Each table's attribute types recorded with the table (`_ddb2bigtable_types` in its
instance), written by load and serve alike and read by both, against the real emulator:
serve needs no work folder, serve records no attribute names (it marks the record: the
attributes it does not name are mixed) and a load after serve writes serve's attributes
so serve reads them, two writers racing on one attribute agree, and a work folder that
disagrees with the table's record is an error naming both."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from botocore.exceptions import ClientError
from google.cloud.bigtable import Client
from google.cloud.bigtable.data import BigtableDataClientAsync

from ddb2bigtable.bigtable.emulator import stop_process
from ddb2bigtable.bigtable.table_types import STATE, read_types, record_types
from ddb2bigtable.codec.type_inference import UNNAMED
from ddb2bigtable.exports.manifests import open_export
from ddb2bigtable.exports.reader import read_records
from ddb2bigtable.exports.writer import write_export
from ddb2bigtable.load.local_stage import WORK_DIR
from ddb2bigtable.load.run import LoadOptions, run_load
from ddb2bigtable.load.work_folder import dead_letter_records
from ddb2bigtable.serve.wire import item_to_wire
from ddb2bigtable.spec.errors import InputError
from ddb2bigtable.spec.reading import read_specs

from ...conftest import ROOT
from ..conftest import STAGE, start_serve
from .conftest import FRESH_INSTANCE, FreshTable

PROJECT = "test-project"  # the stage file's gcp:project (tests/conftest.py write_project)
SCRATCH_INSTANCE = "serve-scratch"
ARN = "arn:aws:dynamodb:us-west-2:123456789012:table/Scratch"


def _record(instance_id: str, table_id: str) -> dict[str, str]:
    async def go():
        async with BigtableDataClientAsync(project=PROJECT) as client:
            return await read_types(client, instance_id, table_id)
    return asyncio.run(go())


def _movies_state(root: Path) -> Path:
    return next((root / WORK_DIR).glob(f"{STAGE}/*/movies/state.json"))


def _scratch(root: Path):
    (spec,) = read_specs([str(root / "specs" / "scratch.yaml")])
    return spec.tables[0]


def _load_scratch(root: Path, tmp: Path, name: str, items: list[dict]):
    return _load(FreshTable("Scratch", _scratch(root), ARN), SCRATCH_INSTANCE, tmp, name, items)


def _load(table: FreshTable, instance_id: str, tmp: Path, name: str, items: list[dict]):
    export = tmp / name
    write_export(export, table.arn, items, export_time=datetime(2026, 11, 1, tzinfo=UTC), items_per_file=100)
    options = LoadOptions(project=PROJECT, instance_id=instance_id, app_profile_id=None, work_dir=tmp / f"work-{name}")
    return run_load(table.spec, str(export), options)


def _rows(instance_id: str, table_id: str) -> dict[bytes, set[bytes]]:
    """The rows of the table's record, each with its columns."""
    rows = Client(project=PROJECT).instance(instance_id).table("_ddb2bigtable_types").read_rows()
    return {row.row_key: {q for columns in row.cells.values() for q in columns} for row in rows
            if row.row_key == table_id.encode() or row.row_key.startswith(table_id.encode() + b"\x00")}


def test_a_load_records_its_types_in_the_table(served):
    state = _movies_state(served.root)
    folder = json.loads(state.read_text())["table_types"]
    instance_id = state.parent.parent.name
    assert folder["info"] == "M"
    assert _record(instance_id, "movies") == folder  # every attribute the load wrote, the same type


def test_serve_without_the_work_folder_reads_movies_right(served, tmp_path):
    root = tmp_path / "no-work-folder"  # what a Cloud Run image holds: stacks/ and specs/ only
    shutil.copytree(served.root, root, ignore=shutil.ignore_patterns("serve.log", WORK_DIR))
    assert not (root / WORK_DIR).exists()
    manifest = open_export(str(ROOT / "exports" / "movies"))
    wanted = next(r.item for f in manifest.files for r in read_records(manifest, f)
                  if r.item is not None and "info" in r.item)
    process, endpoint = start_serve(root, STAGE)
    try:
        from ..conftest import Served
        client = Served(root, endpoint, process).client()
        got = client.get_item(TableName="Movies", Key={"year": wanted["year"], "title": wanted["title"]})
    finally:
        stop_process(process)
    assert got["Item"] == item_to_wire(wanted)  # info decoded as the map it was loaded as


def test_serve_marks_the_record_for_its_new_attribute_and_a_later_load_writes_it_so_serve_reads_it(served, tmp_path):
    client = served.client()
    client.put_item(TableName="Scratch", Item={"pk": {"S": "rec-1"}, "sk": {"N": "1"}, "note": {"N": "5"}})
    record = _record(SCRATCH_INSTANCE, "scratch")
    assert "note" not in record and record[UNNAMED] == "mixed"  # no name kept: what the record does not name is mixed
    # An export bringing `note` as a string: alone it would infer S and write plain cells
    report = _load_scratch(served.root, tmp_path, "with-note", [
        {"pk": {"S": "rec-2"}, "sk": {"N": str(i)}, "note": {"S": f"text {i}"}} for i in range(3)])
    assert report.complete and report.total("loaded") == 3, report
    assert "note" not in _record(SCRATCH_INSTANCE, "scratch")  # the load took the record: written mixed
    got = client.get_item(TableName="Scratch", Key={"pk": {"S": "rec-2"}, "sk": {"N": "1"}})
    assert got["Item"]["note"] == {"S": "text 1"}
    assert client.get_item(TableName="Scratch", Key={"pk": {"S": "rec-1"}, "sk": {"N": "1"}})["Item"]["note"] == \
        {"N": "5"}


def test_names_made_from_data_leave_nothing_in_the_record_and_still_read_back_after_a_load(fresh, tmp_path):
    """Issue 50: a table whose items bring attribute names made from data (a date each) kept
    every name ever written, a row each, after its items were deleted. serve now records
    none: the record holds the table's head row alone (the spec's declared types, recorded
    when serve marked it), before and after the items go, and a load bringing one of those
    names later writes it self-describing, so serve reads both writers' cells."""
    table = fresh.take()
    client = fresh.served.client()
    days = [f"2026-12-{day:02d}" for day in range(1, 31)]
    for i, day in enumerate(days):
        client.put_item(TableName=table.name, Item={"pk": {"S": "daily"}, "sk": {"N": str(i)}, day: {"N": str(i)}})
    head = table.spec.id.encode() + b"\x00"
    declared = {b"pk", b"sk", b"color", b"size", b"hits"}
    assert _rows(FRESH_INSTANCE, table.spec.id) == {head: {*declared, STATE}}
    record = _record(FRESH_INSTANCE, table.spec.id)
    assert record == {"pk": "S", "sk": "N", "color": "S", "size": "N", "hits": "counter", UNNAMED: "mixed"}
    report = _load(table, FRESH_INSTANCE, tmp_path, "a-day", [
        {"pk": {"S": "loaded"}, "sk": {"N": "1"}, days[4]: {"S": "five"}}])
    assert report.complete and report.total("loaded") == 1, report
    assert client.get_item(TableName=table.name, Key={"pk": {"S": "loaded"}, "sk": {"N": "1"}})["Item"][days[4]] == \
        {"S": "five"}
    assert client.get_item(TableName=table.name, Key={"pk": {"S": "daily"}, "sk": {"N": "4"}})["Item"][days[4]] == \
        {"N": "4"}
    for i in range(len(days)):
        client.delete_item(TableName=table.name, Key={"pk": {"S": "daily"}, "sk": {"N": str(i)}})
    assert _record(FRESH_INSTANCE, table.spec.id) == record
    assert _rows(FRESH_INSTANCE, table.spec.id) == {head: {*declared, STATE}}


def test_an_update_inside_a_transaction_marks_the_record_before_its_new_attribute(fresh):
    table = fresh.take()
    assert UNNAMED not in _record(FRESH_INSTANCE, table.spec.id)
    fresh.served.client().transact_write_items(TransactItems=[{"Update": {
        "TableName": table.name, "Key": {"pk": {"S": "txn"}, "sk": {"N": "1"}}, "UpdateExpression": "SET tnote = :v",
        "ExpressionAttributeValues": {":v": {"BOOL": True}}}}])
    record = _record(FRESH_INSTANCE, table.spec.id)
    assert record[UNNAMED] == "mixed" and "tnote" not in record


def test_a_type_a_load_recorded_first_refuses_serve_and_later_loads_another_type(fresh, tmp_path):
    # serve already runs, and has written no attribute this table's record does not name; a load records
    # `level` as N and writes it
    table = fresh.take()
    key = {"pk": {"S": "lvl"}, "sk": {"N": "2"}}
    first = _load(table, FRESH_INSTANCE, tmp_path, "level-n", [
        {"pk": {"S": "lvl"}, "sk": {"N": str(i)}, "level": {"N": str(i)}} for i in range(3)])
    assert first.complete and _record(FRESH_INSTANCE, table.spec.id)["level"] == "N"
    client = fresh.served.client(retries={"max_attempts": 3, "mode": "standard"})  # a 500 the SDK retries
    assert client.get_item(TableName=table.name, Key=key)["Item"]["level"] == {"N": "2"}
    # serve learns the record when it would write `level` first: another type is refused
    with pytest.raises(ClientError) as refused:
        client.put_item(TableName=table.name, Item={"pk": {"S": "lvl"}, "sk": {"N": "9"}, "level": {"S": "high"}})
    assert refused.value.response["Error"]["Code"] == "ValidationException"
    assert "level is S in this item" in refused.value.response["Error"]["Message"]
    # another export, from another work folder, with `level` as a string: dead letters, no unreadable cell
    second = _load(table, FRESH_INSTANCE, tmp_path, "level-s", [
        {"pk": {"S": "lvl-s"}, "sk": {"N": str(i)}, "level": {"S": "high"}} for i in range(2)])
    assert second.total("dead_lettered") == 2 and second.total("loaded") == 0
    reasons = {d["reason"] for d in dead_letter_records(tmp_path / "work-level-s")}
    assert reasons == {"level is S in this item, but the table's cells of level are N (the type recorded with the "
                       "table, or inferred over this export): keep one type per attribute, or reload the table with "
                       "the new one"}, reasons
    assert _record(FRESH_INSTANCE, table.spec.id)["level"] == "N"
    assert "Item" not in client.get_item(TableName=table.name, Key={"pk": {"S": "lvl-s"}, "sk": {"N": "1"}})


def test_two_writers_racing_on_new_attributes_agree(served):
    async def race(attribute: str):
        async with BigtableDataClientAsync(project=PROJECT) as one, \
                BigtableDataClientAsync(project=PROJECT) as two:
            return await asyncio.gather(
                record_types(one, PROJECT, SCRATCH_INSTANCE, "race-table", {attribute: "N"}),
                record_types(two, PROJECT, SCRATCH_INSTANCE, "race-table", {attribute: "S"}))

    for i in range(8):
        a, b = asyncio.run(race(f"attr{i}"))
        assert a == b and a[f"attr{i}"] in ("N", "S")  # both read the one type that was recorded
        assert _record(SCRATCH_INSTANCE, "race-table")[f"attr{i}"] == a[f"attr{i}"]


def test_a_work_folder_disagreeing_with_the_tables_record_is_an_error_naming_both(served, tmp_path):
    root = tmp_path / "other-types"  # the same stage and specs, the work folder of another load
    shutil.copytree(served.root, root, ignore=shutil.ignore_patterns("serve.log"))
    state = _movies_state(root)
    recorded = json.loads(state.read_text())
    state.write_text(json.dumps(recorded | {"table_types": recorded["table_types"] | {"info": "S"}}))
    out = subprocess.run([sys.executable, "-m", "ddb2bigtable", "serve", "--stage", STAGE, "--root", str(root),
                          "--port", "1"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
    assert str(state) in out.stderr and "_ddb2bigtable_types" in out.stderr
    assert "info is S there and M in the table" in out.stderr
    # a load with that folder refuses too, before writing anything
    (spec,) = read_specs([str(root / "specs" / "movies.yaml")])
    options = LoadOptions(project=PROJECT, instance_id=state.parent.parent.name, app_profile_id=None,
                          work_dir=state.parent)
    with pytest.raises(InputError, match="info is S there and M in the table"):
        run_load(spec.tables[0], str(root / "exports" / "movies"), options)
