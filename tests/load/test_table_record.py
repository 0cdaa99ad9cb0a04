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
from ddb2bigtable.bigtable.table_types import STATE, mark_unnamed, read_types, record_types
from ddb2bigtable.codec.cell_values import MIXED
from ddb2bigtable.codec.type_inference import UNNAMED, held_types, with_recorded
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


def _head_columns(instance_id: str, table_id: str) -> dict[bytes, dict[bytes, int]]:
    """Each row of the table's record: its columns and how many cells each holds."""
    rows = Client(project=PROJECT).instance(instance_id).table("_ddb2bigtable_types").read_rows()
    return {row.row_key: {q: len(cells) for columns in row.cells.values() for q, cells in columns.items()}
            for row in rows if row.row_key == table_id.encode() or row.row_key.startswith(table_id.encode() + b"\x00")}


def test_a_loads_attributes_go_in_one_write_of_the_tables_head_row_and_the_first_writer_still_wins(
        bigtable_emulator, monkeypatch):
    """A first export's attributes go in one CheckAndMutateRow of the table's head row, which
    holds a column each and the state the next load's write is conditioned on; when another
    writer recorded one of them first, its type stays and the others are still recorded."""
    _, instance_id = prepare("movies.yaml")
    calls: list[int] = []
    real = TableAsync.check_and_mutate_row

    async def counted(self, row_key, predicate, **kwargs):
        calls.append(len(kwargs.get("false_case_mutations") or kwargs.get("true_case_mutations") or []))
        return await real(self, row_key, predicate, **kwargs)

    monkeypatch.setattr(TableAsync, "check_and_mutate_row", counted)
    assert record(instance_id, "movies", {"info": "M", "rating": "N", "title": "S"}) == {
        "info": "M", "rating": "N", "title": "S"}
    assert calls == [3 + 2]  # three names, and the state moved on (its old cell deleted, the new set)
    assert _head_columns(instance_id, "movies") == {b"movies\x00": {b"info": 1, b"rating": 1, b"title": 1, STATE: 1}}
    calls.clear()
    assert record(instance_id, "other", {"plot": "S"}) == {"plot": "S"}  # another writer's, after our read:

    async def racing() -> dict[str, str]:
        async with BigtableDataClientAsync(project=PROJECT) as client:
            return await record_types(client, PROJECT, instance_id, "other", {"actors": "L", "plot": "N", "rank": "N"},
                                      known={})
    assert asyncio.run(racing()) == {"actors": "L", "plot": "S", "rank": "N"}
    assert calls == [1 + 2, 2 + 2]  # plot found recorded, kept as S; actors and rank recorded

    async def batch_over_known() -> dict[str, str]:  # what a load does with the record it read at its start
        async with BigtableDataClientAsync(project=PROJECT) as client:
            known = await read_types(client, instance_id, "other")
            return await record_types(client, PROJECT, instance_id, "other", {"plot": "S", "year": "N"},
                                      known=known)
    assert asyncio.run(batch_over_known()) == record(instance_id, "other") == {
        "actors": "L", "plot": "S", "rank": "N", "year": "N"}


def test_a_first_export_of_many_attributes_is_recorded_in_one_call(bigtable_emulator, monkeypatch):
    """300 new attributes at once (a load's first export) are one CheckAndMutateRow, not one
    each (issue 50's first layout sent 300, at most 32 at a time, sharing the load's channel)."""
    _, instance_id = prepare("movies.yaml")
    calls = []
    real = TableAsync.check_and_mutate_row

    async def counted(self, row_key, predicate, **kwargs):
        calls.append(row_key)
        return await real(self, row_key, predicate, **kwargs)

    monkeypatch.setattr(TableAsync, "check_and_mutate_row", counted)
    names = {f"a{i:03}": "S" for i in range(300)}
    assert record(instance_id, "wide", names) == names
    assert calls == [b"wide\x00"]


def test_a_load_racing_the_marking_of_serves_first_new_name_agrees_with_it(bigtable_emulator):
    """A load recording `score` as N and serve marking the record (its first write of a name
    the record does not name, `score` among them) at the same moment: whichever came first,
    both end with the one type every later reader takes (N recorded before the marking, or
    mixed by the marking), never N for one and mixed for the other."""
    _, instance_id = prepare("movies.yaml")

    async def race(table_id: str, load_first: bool) -> tuple[str, str, str]:
        async with BigtableDataClientAsync(project=PROJECT) as one, BigtableDataClientAsync(project=PROJECT) as two:
            await record_types(one, PROJECT, instance_id, table_id, {"seen": "S"})  # an earlier load's names
            load = record_types(one, PROJECT, instance_id, table_id, {"score": "N"})
            mark = mark_unnamed(two, PROJECT, instance_id, table_id, {"title": "S"})
            loaded, marked = await asyncio.gather(load, mark) if load_first else reversed(
                await asyncio.gather(mark, load))
            now = await read_types(one, instance_id, table_id)
        return loaded["score"], marked.get("score", MIXED), now.get("score", now[UNNAMED])

    outcomes = {asyncio.run(race(f"race{i}", i % 2 == 0)) for i in range(8)}
    assert outcomes <= {("N", "N", "N"), (MIXED, MIXED, MIXED)}, outcomes  # whichever came first, agreed

    async def one_after_the_other(table_id: str, load_first: bool) -> str:
        async with BigtableDataClientAsync(project=PROJECT) as client:
            load = lambda: record_types(client, PROJECT, instance_id, table_id, {"score": "N"})  # noqa: E731
            mark = lambda: mark_unnamed(client, PROJECT, instance_id, table_id, {"title": "S"})  # noqa: E731
            for step in (load, mark) if load_first else (mark, load):
                await step()
            return (await read_types(client, instance_id, table_id)).get("score", MIXED)
    assert asyncio.run(one_after_the_other("loaded-first", True)) == "N"
    assert asyncio.run(one_after_the_other("marked-first", False)) == MIXED
    assert record(instance_id, "race0")["title"] == "S"  # what the marking writer held is recorded with it


def test_a_load_on_a_marked_record_records_nothing_and_its_new_attributes_stand_as_mixed(bigtable_emulator):
    """After serve's marking (which records the types its worker held, `title` here), a
    load's new attribute is not recorded: the record stands for it as `mixed`, which the
    load compares with what it meant to write (`plot` as S: it stops, and a rerun infers
    over the record); a name recorded before the marking keeps its type."""
    _, instance_id = prepare("movies.yaml")
    assert record(instance_id, "marked", {"year": "N"}) == {"year": "N"}

    async def go() -> tuple[dict[str, str], dict[str, str]]:
        async with BigtableDataClientAsync(project=PROJECT) as client:
            marked = await mark_unnamed(client, PROJECT, instance_id, "marked", {"title": "S", "year": "N"})
            loaded = await record_types(client, PROJECT, instance_id, "marked",
                                        {"plot": "S", "year": "N", UNNAMED: MIXED})
            return marked, loaded
    marked, loaded = asyncio.run(go())
    assert marked == {"year": "N", "title": "S", UNNAMED: MIXED}
    assert loaded["plot"] == MIXED and loaded["year"] == "N"
    assert record(instance_id, "marked") == marked  # plot is not named


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


def test_a_name_in_issue_50s_first_layout_is_still_read_and_kept(bigtable_emulator):
    """Issue 50's first layout kept a row per attribute (table id, NUL, name): such a row
    is still read by name and whole, and a load recording the same name after it takes
    its type, not its own."""
    _, instance_id = prepare("movies.yaml")

    async def go() -> tuple[dict[str, str], dict[str, str]]:
        async with BigtableDataClientAsync(project=PROJECT) as client:
            await record_types(client, PROJECT, instance_id, "layout", {"seen": "S"})  # the record table exists
            old = client.get_table(instance_id, "_ddb2bigtable_types")
            await old.mutate_row(b"layout\x00rating", [SetCell("a", b"rating", b"N")])  # as that layout wrote it
            mine = await record_types(client, PROJECT, instance_id, "layout", {"rating": "S", "plot": "S"})
            return mine, await read_types(client, instance_id, "layout")
    mine, whole = asyncio.run(go())
    assert mine["rating"] == "N" and whole == {"plot": "S", "rating": "N", "seen": "S"}


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


def test_a_marked_record_holds_what_it_does_not_name_as_mixed_for_the_spec_and_a_later_load():
    """Once serve or replicate wrote an attribute the record does not name (UNNAMED: mixed),
    any such attribute may have self-describing cells: a declared plain type for one is
    refused, a declared M agrees, and a load's inference for one is `mixed`."""
    table = read_spec(ROOT / "specs" / "movies.yaml").tables[0]
    marked = {UNNAMED: "mixed", "year": "N", "title": "S"}
    assert held_types(table, marked) == marked  # info is declared M: agrees with mixed
    with pytest.raises(InputError, match="declares year as N, but the table's record of its types names no type for "
                                         "it and holds every attribute it does not name as mixed"):
        held_types(table, {UNNAMED: "mixed", "title": "S"})
    assert with_recorded({"year": "N", "title": "S", "info": "M", "plot": "S"}, marked, table) == {
        "year": "N", "title": "S", "info": "mixed", "plot": "mixed", UNNAMED: "mixed"}
    assert with_recorded({"year": "N", "title": "S", "plot": "S"}, {"year": "N"}, table) == {
        "year": "N", "title": "S", "plot": "S"}  # not marked: the inference stands


def test_the_release_before_the_head_row_still_reads_a_record_this_one_wrote(bigtable_emulator):
    """A Cloud Run rollback, or an older `load` beside this release: the release of issue 50's
    first layout (529633b) read every cell of the table's rows as name = the qualifier's
    UTF-8, type = the value's UTF-8 (its `table_types._oldest`), and its serve stopped at
    startup on a cell that did not decode. Every cell this release writes, a load's names
    and the state through its versions and the marking, still decodes so, and the name the
    state reads as there ("") is none an item can bring."""
    _, instance_id = prepare("movies.yaml")
    record(instance_id, "movies", {"info": "M", "rating": "N"})
    record(instance_id, "movies", {"title": "S"})

    async def marked() -> None:
        async with BigtableDataClientAsync(project=PROJECT) as client:
            await mark_unnamed(client, PROJECT, instance_id, "movies", {"year": "N"})
    asyncio.run(marked())
    rows = Client(project=PROJECT).instance(instance_id).table("_ddb2bigtable_types").read_rows()
    as_read_before = {bytes(q).decode(): bytes(cell.value).decode()
                      for row in rows if row.row_key.startswith(b"movies\x00")
                      for columns in row.cells.values() for q, cells in columns.items() for cell in cells}
    assert as_read_before == {"info": "M", "rating": "N", "title": "S", "year": "N", "": MIXED}
