"""`replicate` and the table's record of its types (bigtable/table_types.py): before the
cells of an attribute the record does not name are written, the record is marked (what it
does not name is mixed) and the attribute's name is not recorded; one another writer
recorded first with another type is a dead letter, never a cell nothing can read back."""

from __future__ import annotations

import asyncio
import json

from google.cloud.bigtable.data import BigtableDataClientAsync

from ddb2bigtable.bigtable.table_types import read_types, record_types
from ddb2bigtable.codec.type_inference import UNNAMED
from ddb2bigtable.replicate.opening import start_point
from ddb2bigtable.replicate.run import run_replicate

from .scenario import PROJECT, create, differences, export_and_load
from .test_replicate_emulator import credentials, movie


def _record(instance_id: str, table_id: str, first: dict[str, str] | None = None) -> dict[str, str]:
    async def go():
        async with BigtableDataClientAsync(project=PROJECT) as client:
            if first:
                await record_types(client, PROJECT, instance_id, table_id, first)
            return await read_types(client, instance_id, table_id)
    return asyncio.run(go())


def test_new_attributes_of_the_stream_are_recorded_and_a_conflicting_one_is_dead_lettered(
        dynamodb, bigtable_emulator, tmp_path, monkeypatch):
    credentials(monkeypatch)
    scenario = create(dynamodb, tmp_path)
    db = dynamodb.client()
    for i in range(5):
        db.put_item(TableName=scenario.dynamo_table, Item=movie(2000, f"Film {i}"))
    export = export_and_load(dynamodb, scenario, tmp_path)
    assert set(_record(scenario.instance_id, "movies")) == {"year", "title", "info"}  # the load's
    _record(scenario.instance_id, "movies", {"poster": "S"})  # another writer (serve, a load) was first
    for i in range(3):
        db.put_item(TableName=scenario.dynamo_table, Item=movie(2001, f"Noted {i}", note={"N": str(i)}))
    for i in range(2):
        db.put_item(TableName=scenario.dynamo_table, Item=movie(2002, f"Poster {i}", poster={"B": b"\x00\x01"}))

    report = run_replicate(scenario.table, scenario.replicate_options(dynamodb, since_micros=start_point(str(export))))
    assert _record(scenario.instance_id, "movies") == {"year": "N", "title": "S", "info": "M", "poster": "S",
                                                       UNNAMED: "mixed"}  # note: mixed, its name not kept
    assert report.dead_letters == 2
    reasons = [json.loads(line)["reason"] for line in open(report.dead_letter_file, encoding="utf-8")]
    assert all("poster is B in this item" in reason for reason in reasons), reasons
    missing = differences(dynamodb, scenario)
    assert len(missing) == 2 and all("Poster" in line and "only in DynamoDB" in line for line in missing), missing
