"""The data load against the real Bigtable emulator, with the shipped DynamoDB exports.

Every test loads into its own instance name (the emulator creates instances implicitly),
so tests never see each other's rows.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
from datetime import UTC
from pathlib import Path

import pytest
from google.cloud.bigtable.data import BigtableDataClientAsync, ReadRowsQuery, RowRange

from ddb2bigtable.bigtable.table_admin import ensure_tables
from ddb2bigtable.exports.manifests import open_export
from ddb2bigtable.exports.reader import read_records
from ddb2bigtable.load.run import LoadOptions, run_load
from ddb2bigtable.load.verify import run_verify
from ddb2bigtable.plan.planner import plan_stage
from ddb2bigtable.spec.reading import read_spec
from ddb2bigtable.spec.stage import load_stage

from ..conftest import ROOT

PROJECT = "test-project"
_instances = itertools.count()


def prepare(spec_file: str, stage: str = "local") -> tuple:
    """A fresh instance holding the spec's tables, families and GC rules."""
    spec = read_spec(ROOT / "specs" / spec_file)
    (instance,) = plan_stage(load_stage(stage, ROOT), [spec]).instances
    instance_id = f"t{next(_instances)}-{instance.id}"[:33]
    ensure_tables(PROJECT, _renamed(instance, instance_id))
    return spec, instance_id


def _renamed(instance, instance_id):
    from dataclasses import replace

    return replace(instance, id=instance_id)


def options(instance_id: str, work_dir: Path, **kw) -> LoadOptions:
    return LoadOptions(project=PROJECT, instance_id=instance_id, app_profile_id="migration-load",
                       work_dir=work_dir, **kw)


def read_all(instance_id: str, table_id: str) -> list:
    async def go():
        async with BigtableDataClientAsync(project=PROJECT) as client:
            return await client.get_table(instance_id, table_id).read_rows(ReadRowsQuery(row_ranges=[RowRange()]))
    return asyncio.run(go())


def test_movies_load_into_4609_rows_and_verify_every_item(bigtable_emulator, tmp_path):
    spec, instance_id = prepare("movies.yaml")
    (table,) = spec.tables
    report = run_load(table, str(ROOT / "exports/movies"), options(instance_id, tmp_path))
    assert report.complete and report.total("loaded") == 4609 == report.manifest_items
    rows = read_all(instance_id, "movies")
    assert len(rows) == 4609  # year + title: not 92 rows of one per year
    assert [r.row_key for r in rows] == sorted(r.row_key for r in rows)
    years = [r.row_key.split(b"#")[0] for r in rows]
    assert years == sorted(years)  # numeric year order in the row keys
    verified = run_verify(table, str(ROOT / "exports/movies"), project=PROJECT, instance_id=instance_id,
                          work_dir=tmp_path)
    assert verified.ok and verified.matched == 4609 and verified.table_items == 4609
    assert verified.missing == verified.mismatched == 0


def test_the_ion_export_loads_the_same_items(bigtable_emulator, tmp_path):
    spec, instance_id = prepare("movies.yaml")
    (table,) = spec.tables
    report = run_load(table, str(ROOT / "exports/other/movies-ion"), options(instance_id, tmp_path))
    assert report.complete and report.output_format == "ION" and report.total("loaded") == 4609
    verified = run_verify(table, str(ROOT / "exports/movies"), project=PROJECT, instance_id=instance_id)
    assert verified.ok and verified.matched == 4609  # the JSON export's items, read from the ION load


def test_an_incremental_export_applies_inserts_updates_and_deletes(bigtable_emulator, tmp_path):
    spec, instance_id = prepare("movies.yaml")
    (table,) = spec.tables
    assert run_load(table, str(ROOT / "exports/movies"), options(instance_id, tmp_path)).complete
    increment = str(ROOT / "exports/other/movies-incremental")
    report = run_load(table, increment, options(instance_id, tmp_path))  # the same work folder: it continues the chain
    assert report.complete and report.export_type == "INCREMENTAL_EXPORT"
    manifest = open_export(increment)
    records = [r for f in manifest.files for r in read_records(manifest, f)]
    deletes = [r for r in records if r.kind == "delete"]
    puts = [r for r in records if r.kind == "put"]
    assert deletes and puts
    verified = run_verify(table, increment, project=PROJECT, instance_id=instance_id)
    assert verified.ok and verified.deleted_absent == len(deletes) and verified.matched == len(records)
    inserted = sum(1 for r in puts if r.item and "year" in r.item) - 0
    rows = read_all(instance_id, "movies")
    full = open_export(str(ROOT / "exports/movies"))
    full_keys = {(r.item["year"]["N"], r.item["title"]["S"]) for f in full.files for r in read_records(full, f)}
    put_keys = {(r.item["year"]["N"], r.item["title"]["S"]) for r in puts}
    delete_keys = {(r.keys["year"]["N"], r.keys["title"]["S"]) for r in deletes}
    assert len(rows) == len((full_keys | put_keys) - delete_keys) and inserted


def test_loaded_plus_expired_plus_dead_lettered_is_the_export_and_a_rerun_resumes(bigtable_emulator, tmp_path):
    spec, instance_id = prepare("movies.yaml")
    (table,) = spec.tables
    export = str(ROOT / "exports/movies")
    first = run_load(table, export, options(instance_id, tmp_path))
    again = run_load(table, export, options(instance_id, tmp_path))
    assert all(f.status == "resumed: already loaded" for f in again.files)
    assert again.complete and again.total("loaded") == first.total("loaded") == 4609
    assert len(read_all(instance_id, "movies")) == 4609  # idempotent: no duplicates


def test_json_reports_from_the_cli(bigtable_emulator, tmp_path):
    import subprocess
    import sys

    spec, instance_id = prepare("movies.yaml")
    env_root = ROOT
    out = subprocess.run([sys.executable, "-m", "ddb2bigtable", "load", "specs/movies.yaml", "--table", "movies",
                          "--export", "exports/movies", "--stage", "local", "--create-tables", "--format", "json",
                          "--work-dir", str(tmp_path)], cwd=env_root, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["complete"] and report["loaded"] == 4609 and report["accounted"] == report["manifest_items"]
    out = subprocess.run([sys.executable, "-m", "ddb2bigtable", "verify", "specs/movies.yaml", "--table", "movies",
                          "--export", "exports/movies", "--sample", "200", "--format", "json",
                          "--work-dir", str(tmp_path)], cwd=env_root, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    verified = json.loads(out.stdout)
    assert verified["ok"] and verified["checked"] == 200 and verified["sampled"]


@pytest.mark.parametrize("spec_file,table_id", [("product-catalog.yaml", "products"),
                                                 ("invoices-adjacency.yaml", "invoices"),
                                                 ("video-single-table.yaml", "videos")])
def test_the_seed_designs_load_and_verify(bigtable_emulator, tmp_path, spec_file, table_id):
    spec, instance_id = prepare(spec_file)
    table = next(t for t in spec.tables if t.id == table_id)
    export = str(ROOT / "exports" / table_id)
    report = run_load(table, export, options(instance_id, tmp_path))
    assert report.complete, report
    verified = run_verify(table, export, project=PROJECT, instance_id=instance_id, work_dir=tmp_path)
    assert verified.ok, verified.examples


def test_the_writer_closes_its_batcher_every_n_rows_and_loses_nothing(bigtable_emulator, tmp_path):
    """Memory stays bounded by rows_per_batcher (each close waits for the rows in flight)
    and rows_per_collection (the client's finished operations are freed)."""
    from ddb2bigtable.load.writer import WriteSettings

    spec, instance_id = prepare("movies.yaml")
    report = run_load(spec.tables[0], str(ROOT / "exports/movies"),
                      options(instance_id, tmp_path, writer=WriteSettings(rows_per_batcher=300, rows_per_collection=1000)))
    assert report.complete and len(read_all(instance_id, "movies")) == 4609


def slow_answers(monkeypatch) -> list[int]:
    """Every MutateRows answer 0.3 s late, as from a distant cluster; the list holds the
    most MutateRows in flight at once, once the load is over."""
    from ddb2bigtable.load import client_hooks

    raw = client_hooks._async_raw
    in_flight, peak = [0], [0]

    def slow(call):
        answered = raw(call)

        async def mutate_rows(*args, **kwargs):
            in_flight[0] += 1
            peak[0] = max(peak[0], in_flight[0])
            stream = await answered(*args, **kwargs)

            async def answers():
                try:
                    await asyncio.sleep(0.3)
                    async for answer in stream:
                        yield answer
                finally:
                    in_flight[0] -= 1
            return answers()
        return mutate_rows

    monkeypatch.setattr(client_hooks, "_async_raw", slow)
    return peak


def test_a_lanes_next_file_is_sent_while_the_rows_before_it_land(bigtable_emulator, tmp_path, monkeypatch):
    """With batchers of 1,000 rows, one at a time, a Movies data file (1,000 rows or fewer)
    is one batcher, so one MutateRows at its close. While Bigtable is slow to answer it,
    the next file of the same encoder lane is read and sent: more MutateRows are in flight
    than there are lanes, and never more than the bound on open files (one per lane plus
    one), so memory stays bounded."""
    from ddb2bigtable.load.writer import WriteSettings

    peak = slow_answers(monkeypatch)
    spec, instance_id = prepare("movies.yaml")
    files = len(open_export(str(ROOT / "exports/movies")).files)
    settings = WriteSettings(rows_per_batcher=1000, batchers_in_flight=1)
    report = run_load(spec.tables[0], str(ROOT / "exports/movies"), options(instance_id, tmp_path, writer=settings))
    assert report.complete and len(read_all(instance_id, "movies")) == 4609
    lanes = min(os.cpu_count() or 1, files)
    assert peak[0] == min(lanes + 1, files)


def test_a_files_batchers_land_side_by_side_up_to_the_bound(bigtable_emulator, tmp_path, monkeypatch):
    """A file's rows go through batchers of `rows_per_batcher` rows, and while Bigtable is
    slow to answer, up to `batchers_in_flight` of them wait for their answers at once
    (one at a time, a file went out one batcher per round trip): more MutateRows are in
    flight than files are open, and never more than the bound that keeps memory flat."""
    from ddb2bigtable.load.writer import WriteSettings

    peak = slow_answers(monkeypatch)
    spec, instance_id = prepare("movies.yaml")
    settings = WriteSettings(rows_per_batcher=250, batchers_in_flight=3)
    report = run_load(spec.tables[0], str(ROOT / "exports/movies"), options(instance_id, tmp_path, writer=settings))
    assert report.complete and len(read_all(instance_id, "movies")) == 4609
    files = len(open_export(str(ROOT / "exports/movies")).files)
    open_files = min(min(os.cpu_count() or 1, files) + 1, files)
    assert open_files < peak[0] <= open_files * 3


def test_an_incremental_delete_removes_only_that_items_cells_in_a_rule_based_design(bigtable_emulator, tmp_path):
    """A comment is one version of UserComments:Content: its old image says which one."""
    from datetime import datetime

    from ddb2bigtable.exports.writer import IncrementalChange, write_incremental_export

    spec, instance_id = prepare("video-single-table.yaml")
    (table,) = spec.tables
    full = open_export(str(ROOT / "exports/videos"))
    items = [r.item for f in full.files for r in read_records(full, f)]
    assert run_load(table, str(ROOT / "exports/videos"), options(instance_id, tmp_path / "work")).complete
    comments = [i for i in items if i["SK"]["S"].startswith("VideoComment#") and i["VideoId"]["S"] == "0123"]
    gone, kept = comments[0], comments[1:]
    assert kept

    def versions() -> list[int]:
        row = next(r for r in read_all(instance_id, "videos") if r.row_key == b"0123")
        return sorted(c.timestamp_micros for c in row if c.family == "UserComments")

    before = versions()
    keys = {k: gone[k] for k in ("VideoId", "SK")}
    change = IncrementalChange(keys=keys, write_time_micros=1_800_000_000_000_000, old_image=gone)
    increment = write_incremental_export(tmp_path / "inc", "arn:aws:dynamodb:us-east-1:123456789012:table/Videos", [change],
                             export_time=datetime(2027, 1, 15, tzinfo=UTC),
                             export_from_time=datetime.fromtimestamp(full.export_time_micros / 1e6, UTC))
    report = run_load(table, str(increment), options(instance_id, tmp_path / "work"))
    assert report.complete and report.total("deleted") == 1
    after = versions()
    assert len(after) == len(before) - 1 and len(after) == len(kept)


def test_a_row_bigtable_refuses_is_named_by_its_export_line_and_the_others_land(bigtable_emulator, monkeypatch):
    """The writer reads MutateRows answers as raw protobuf (writer.read_responses_raw): each
    row's result must still reach the row it belongs to, with the server's reason."""
    from ddb2bigtable.codec.mutations import RowMutation, SetCell
    from ddb2bigtable.load import client_hooks, writer

    spec, instance_id = prepare("movies.yaml")
    raw_reads = []
    read_raw = client_hooks._RESPONSE_PB
    monkeypatch.setattr(client_hooks, "_RESPONSE_PB", lambda response: raw_reads.append(1) or read_raw(response))
    rows = [writer.row_entry(RowMutation(f"ok{i}".encode(), (SetCell("cf", b"q", b"v", 1000),)),
                             writer.Source("data/a.json.gz", i)) for i in (1, 2, 4)]
    rows.insert(2, writer.row_entry(RowMutation(b"bad", (SetCell("no_such_family", b"q", b"v", 1000),)),
                                    writer.Source("data/a.json.gz", 3)))

    async def chunks():
        yield rows

    async def go():
        async with writer.Writer(PROJECT, instance_id, "movies", None,
                                 writer.WriteSettings(operation_timeout_seconds=1)) as w:
            await w.write(chunks(), lambda source, reason: None)

    with pytest.raises(writer.WriteError, match=r"1 row\(s\).*data/a.json.gz line 3: .*no_such_family"):
        asyncio.run(go())
    assert raw_reads, "the client read its answers through proto-plus again"
    assert [r.row_key for r in read_all(instance_id, "movies")] == [b"ok1", b"ok2", b"ok4"]
