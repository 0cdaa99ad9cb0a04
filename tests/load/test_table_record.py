"""A table's record of its types (`_ddb2bigtable_types`) where a table is made again, and
where the spec declares a type: against the real Bigtable emulator."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import UTC, datetime

import pytest
from google.cloud.bigtable import Client
from google.cloud.bigtable.data import BigtableDataClientAsync, TableAsync
from google.cloud.bigtable.data.mutations import SetCell

from ddb2bigtable.bigtable.table_admin import ensure_tables
from ddb2bigtable.bigtable.table_types import RECORDING, read_types, record_types
from ddb2bigtable.codec.type_inference import held_types
from ddb2bigtable.exports.writer import write_export
from ddb2bigtable.load.beam.direct import run_beam_load
from ddb2bigtable.load.run import run_load
from ddb2bigtable.load.state import target
from ddb2bigtable.load.verify import run_verify
from ddb2bigtable.plan.planner import plan_stage
from ddb2bigtable.replicate.opening import recorded_types
from ddb2bigtable.spec.errors import InputError
from ddb2bigtable.spec.reading import read_spec
from ddb2bigtable.spec.stage import load_stage

from ..conftest import ROOT
from .test_load_emulator import PROJECT, options, prepare, read_all


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


def test_new_attributes_are_recorded_each_in_its_own_row_and_the_first_writer_of_each_still_wins(bigtable_emulator,
                                                                                                 monkeypatch):
    """A first export's attributes go in one CheckAndMutateRow each, all at once, each on a
    row of its own that holds its one cell (issue 50: one row per table grew with every name
    ever written, and recording one more cost a call over all of them); when another writer
    recorded one of them first, its type stays and the others are still recorded."""
    _, instance_id = prepare("movies.yaml")
    calls: list[int] = []
    real = TableAsync.check_and_mutate_row

    async def counted(self, row_key, predicate, **kwargs):
        calls.append(len(kwargs.get("false_case_mutations") or []))
        return await real(self, row_key, predicate, **kwargs)

    monkeypatch.setattr(TableAsync, "check_and_mutate_row", counted)
    assert record(instance_id, "movies", {"info": "M", "rating": "N", "title": "S"}) == {
        "info": "M", "rating": "N", "title": "S"}
    assert calls == [1, 1, 1]
    rows = Client(project=PROJECT).instance(instance_id).table("_ddb2bigtable_types").read_rows()
    held = {row.row_key: [c for cells in row.cells.values() for column in cells.values() for c in column]
            for row in rows if row.row_key.startswith(b"movies\x00")}
    assert sorted(held) == [b"movies\x00info", b"movies\x00rating", b"movies\x00title"]
    assert all(len(cells) == 1 for cells in held.values())
    calls.clear()
    assert record(instance_id, "other", {"plot": "S"}) == {"plot": "S"}  # another writer's, after our read:

    async def racing() -> dict[str, str]:
        async with BigtableDataClientAsync(project=PROJECT) as client:
            return await record_types(client, PROJECT, instance_id, "other", {"actors": "L", "plot": "N", "rank": "N"},
                                      known={})
    assert asyncio.run(racing()) == {"actors": "L", "plot": "S", "rank": "N"}
    assert calls == [1, 1, 1, 1]  # plot found recorded, kept as S; actors and rank recorded

    async def batch_over_known() -> dict[str, str]:  # what a load does with the record it read at its start
        async with BigtableDataClientAsync(project=PROJECT) as client:
            known = await read_types(client, instance_id, "other")
            return await record_types(client, PROJECT, instance_id, "other", {"plot": "S", "year": "N"},
                                      known=known)
    assert asyncio.run(batch_over_known()) == record(instance_id, "other") == {
        "actors": "L", "plot": "S", "rank": "N", "year": "N"}


def test_a_first_export_of_many_attributes_records_them_a_bounded_number_at_a_time(bigtable_emulator, monkeypatch):
    """300 new attributes at once (a load's first export) are all recorded, with no more than
    RECORDING CheckAndMutateRows in flight: they share the client's channel with the load's
    own writes (issue 50: one call per attribute, all at once)."""
    _, instance_id = prepare("movies.yaml")
    flying, most = [0], [0]
    real = TableAsync.check_and_mutate_row

    async def counted(self, row_key, predicate, **kwargs):
        flying[0] += 1
        most[0] = max(most[0], flying[0])
        try:
            return await real(self, row_key, predicate, **kwargs)
        finally:
            flying[0] -= 1

    monkeypatch.setattr(TableAsync, "check_and_mutate_row", counted)
    names = {f"a{i:03}": "S" for i in range(300)}
    assert record(instance_id, "wide", names) == names
    assert most[0] == RECORDING  # bounded, and still side by side


def test_a_name_an_older_release_recorded_in_the_tables_row_of_before_is_its_type(bigtable_emulator):
    """During an upgrade a worker of a release before issue 50 records a new name as a column
    of the table's one row, which the attribute rows' predicate does not see: a writer of this
    release that recorded the same name after it in its own row takes the older cell's type
    (every reader does), not its own."""
    _, instance_id = prepare("movies.yaml")

    async def go() -> tuple[dict[str, str], dict[str, str]]:
        async with BigtableDataClientAsync(project=PROJECT) as client:
            await record_types(client, PROJECT, instance_id, "upgrading", {"seen": "S"})  # the record table exists
            old = client.get_table(instance_id, "_ddb2bigtable_types")
            await old.mutate_row(b"upgrading", [SetCell("a", b"rating", b"N")])  # as the older release writes it
            await asyncio.sleep(0.01)
            mine = await record_types(client, PROJECT, instance_id, "upgrading", {"rating": "mixed"}, known={})
            return mine, await read_types(client, instance_id, "upgrading")
    mine, record_now = asyncio.run(go())
    assert mine == {"rating": "N"} and record_now == {"rating": "N", "seen": "S"}


# --- the spec's declared types and the table's record: one rule for every reader and writer ---

SPEC = """version: 1
instance: {id: declared-types, display_name: Declared types}
tables:
  - id: notes
    source:
      table: Notes
      region: us-west-2
      key:
        partition: {name: pk, type: S}
      billing: provisioned
      reads: 5
      writes: 5
      item_size_kb: 1
      storage_gb: 0.001
    mapping:
      attributes:
        - {name: info, type: M}
        - {name: rating, type: DECLARED}
"""
ARN = "arn:aws:dynamodb:us-west-2:123456789012:table/Notes"
ITEMS = [{"pk": {"S": f"n{i}"}, "info": {"M": {"tags": {"SS": ["a", "b"]}} if i == 0 else {"n": {"N": str(i)}}},
          "rating": {"N": str(i)}} for i in range(4)]
_made = iter(range(1000))


def declaring(tmp_path, rating: str):
    """A spec whose table declares `rating` as `rating`, on a fresh instance with its tables."""
    path = tmp_path / f"notes-{rating}.yaml"
    path.write_text(SPEC.replace("DECLARED", rating))
    spec = read_spec(path)
    (planned,) = plan_stage(load_stage("local", ROOT), [spec]).instances
    instance_id = f"dt{next(_made)}-{tmp_path.name[-12:]}".lower()
    ensure_tables(PROJECT, replace(planned, id=instance_id))
    return spec.tables[0], instance_id, path


def export(tmp_path):
    return str(write_export(tmp_path / "export", ARN, ITEMS, export_time=datetime(2026, 11, 1, tzinfo=UTC)))


def test_a_declared_map_the_table_holds_as_mixed_is_written_mixed(bigtable_emulator, tmp_path):
    """info is declared M; the table's record says mixed (a first load met a map holding a
    set). A later load used to encode it as the spec's M (plain JSON, unreadable next to the
    typed cells) and stop with "another writer recorded other types"."""
    table, instance_id, _ = declaring(tmp_path, "N")
    assert record(instance_id, "notes", {"info": "mixed"})["info"] == "mixed"
    report = run_load(table, export(tmp_path), options(instance_id, tmp_path / "work"))
    assert report.complete and report.error is None and report.total("loaded") == 4, report
    assert record(instance_id, "notes") == {"pk": "S", "info": "mixed", "rating": "N"}
    verified = run_verify(table, export(tmp_path), project=PROJECT, instance_id=instance_id, work_dir=tmp_path / "work")
    assert verified.ok and verified.matched == 4, verified


def test_a_declared_type_the_table_does_not_hold_stops_every_reader_and_writer_at_its_line(
        bigtable_emulator, tmp_path):
    table, instance_id, path = declaring(tmp_path, "N")
    assert record(instance_id, "notes", {"rating": "S"})["rating"] == "S"  # e.g. an earlier load of strings
    line, text = next((i, text) for i, text in enumerate(path.read_text().splitlines(), 1) if "rating" in text)
    wanted = (f"{path}:{line}:{text.index('type: N') + 7}: tables.notes.mapping.attributes[1].type: declares rating as N, but the table's "
              f"record of its types (row notes of {instance_id}/_ddb2bigtable_types) holds it as S: the table's "
              f"cells of rating are S")
    calls = {
        "load": lambda: run_load(table, export(tmp_path), options(instance_id, tmp_path / "local")),
        "load --runner beam": lambda: run_beam_load(table, export(tmp_path), options(instance_id, tmp_path / "beam")),
        "verify": lambda: run_verify(table, export(tmp_path), project=PROJECT, instance_id=instance_id,
                                     work_dir=tmp_path / "verify"),
        "replicate, cutover check": lambda: asyncio.run(recorded_types(table, tmp_path / "replicate", target(
            PROJECT, instance_id, "notes"))),
    }
    for what, call in calls.items():
        with pytest.raises(InputError) as refused:
            call()
        assert str(refused.value).startswith(wanted), (what, str(refused.value))
        assert "declare rating as S here (or drop its type)" in str(refused.value)
    assert read_all(instance_id, "notes") == []  # nothing written
    assert record(instance_id, "notes") == {"rating": "S"}


def test_the_rule_between_declared_and_held_types():
    table = read_spec(ROOT / "specs" / "movies.yaml").tables[0]
    assert held_types(table, {"info": "mixed", "other": "S"}) == {"info": "mixed", "other": "S"}
    assert held_types(table, {}) == {}
    for held in ({"info": "S"}, {"year": "S"}, {"title": "N"}, {"info": "L"}):
        with pytest.raises(InputError, match="movies.yaml:[0-9]+:[0-9]+: tables.movies"):
            held_types(table, held)
    with pytest.raises(InputError) as two:
        held_types(table, {"year": "S", "info": "S"})
    assert len(two.value.problems) == 2  # every declaration that disagrees, each at its line
