"""A table's record of its types (`_ddb2bigtable_types`) where a table is made again, and
where the spec declares a type: against the real Bigtable emulator."""

from __future__ import annotations

import asyncio
from dataclasses import replace

from google.cloud.bigtable import Client
from google.cloud.bigtable.data import BigtableDataClientAsync

from ddb2bigtable.bigtable.table_admin import ensure_tables
from ddb2bigtable.bigtable.table_types import read_types, record_types
from ddb2bigtable.plan.planner import plan_stage
from ddb2bigtable.spec.reading import read_spec
from ddb2bigtable.spec.stage import load_stage

from ..conftest import ROOT
from .test_load_emulator import PROJECT, prepare


def record(instance_id: str, table_id: str, types: dict[str, str] | None = None) -> dict[str, str]:
    """The table's record, after recording `types` in it when given."""
    async def go():
        async with BigtableDataClientAsync(project=PROJECT) as client:
            if types:
                await record_types(client, PROJECT, instance_id, table_id, types)
            return await read_types(client, instance_id, table_id)
    return asyncio.run(go())


def test_a_table_made_again_under_its_id_starts_without_the_old_tables_types(bigtable_emulator):
    _, instance_id = prepare("movies.yaml")
    (planned,) = plan_stage(load_stage("local", ROOT), [read_spec(ROOT / "specs" / "movies.yaml")]).instances
    instance = replace(planned, id=instance_id)
    assert record(instance_id, "movies", {"info": "M", "rating": "N"}) == {"info": "M", "rating": "N"}
    assert ensure_tables(PROJECT, instance) == []  # the table is there: its record stays
    assert record(instance_id, "movies") == {"info": "M", "rating": "N"}
    # as `cbt deletetable movies` does: the table goes, its row in the record stays
    Client(project=PROJECT, admin=True).instance(instance_id).table("movies").delete()
    assert record(instance_id, "movies") == {"info": "M", "rating": "N"}
    actions = [a.what for a in ensure_tables(PROJECT, instance)]
    assert actions[0] == "created table"
    assert "deleted the types a table movies deleted before had recorded (_ddb2bigtable_types)" in actions
    assert record(instance_id, "movies") == {}  # a new load infers its own types
