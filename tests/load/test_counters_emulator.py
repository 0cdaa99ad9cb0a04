"""Counters in aggregate (int64 Sum) families on the real Bigtable emulator (#35).

What the emulator does (cbtemulator of the Google Cloud CLI, google-cloud-bigtable 2.50.2):
a family created with `Type.Aggregate(sum, input_type=Int64 big-endian)` through the table
admin API keeps that type (SCHEMA_VIEW shows it); three `AddToCell` of 5 at one timestamp
read back as one cell, b"\\x00..\\x0f" (15, 8-byte big-endian); additions at two timestamps
stay two cells; DeleteFromColumn then AddToCell in one MutateRow sets the value (twice: the
same value); AddToCell into a plain family is refused; a request to change a family's type
is accepted and ignored (the family keeps its old type), so the table admin refuses first.

The video design's export (exports/videos) holds video 0123's counters: Likes 3, Views 156.
"""

from __future__ import annotations

import asyncio
import itertools
from dataclasses import replace
from pathlib import Path

import pytest
from google.cloud.bigtable import Client
from google.cloud.bigtable.data import BigtableDataClientAsync

from ddb2bigtable.bigtable.preflight import family_kind
from ddb2bigtable.bigtable.table_admin import ensure_tables
from ddb2bigtable.codec.app_writes import counter_add
from ddb2bigtable.codec.codec import Codec
from ddb2bigtable.load import client_hooks, writer
from ddb2bigtable.load.client_hooks import Source
from ddb2bigtable.load.run import LoadOptions, run_load
from ddb2bigtable.load.verify import run_verify
from ddb2bigtable.load.writer import row_entry
from ddb2bigtable.plan.planner import plan_stage
from ddb2bigtable.replicate.apply import record_rows
from ddb2bigtable.replicate.stream_records import StreamRecord
from ddb2bigtable.serve.store import client_mutations
from ddb2bigtable.spec.errors import InputError, ServiceError
from ddb2bigtable.spec.families import TXN_FAMILY
from ddb2bigtable.spec.reading import read_spec
from ddb2bigtable.spec.stage import load_stage

from ..conftest import ROOT
from .test_client_hooks import unknown_client_version  # noqa: F401 - a fixture

PROJECT = "test-project"
EXPORT = str(ROOT / "exports" / "videos")
_instances = itertools.count()


def prepare() -> tuple:
    """A fresh instance with the video design's tables as `up --stage local` creates them."""
    spec = read_spec(ROOT / "specs" / "video-single-table.yaml")
    (instance,) = plan_stage(load_stage("local", ROOT), [spec]).instances
    instance = replace(instance, id=f"c{next(_instances)}-{instance.id}"[:33])
    ensure_tables(PROJECT, instance)
    return spec.tables[0], instance


def counters(instance_id: str, key: bytes = b"0123") -> dict[str, tuple[int, ...]]:
    """Stats:<qualifier> -> every cell's value (int64), newest first."""
    async def go():
        async with BigtableDataClientAsync(project=PROJECT) as client:
            return await client.get_table(instance_id, "videos").read_row(key)
    row = asyncio.run(go())
    found: dict[str, list[int]] = {}
    for cell in row.cells if row else []:
        if cell.family == "Stats":
            found.setdefault(cell.qualifier.decode(), []).append(int.from_bytes(cell.value, "big", signed=True))
    return {k: tuple(v) for k, v in found.items()}


def load(table, instance_id: str, work_dir: Path, **kw):
    return run_load(table, EXPORT, LoadOptions(project=PROJECT, instance_id=instance_id,
                                               app_profile_id="migration-load", work_dir=work_dir, **kw))


def test_up_local_creates_the_counter_family_as_an_int64_sum_aggregate(bigtable_emulator):
    _, instance = prepare()
    admin = Client(project=PROJECT, admin=True).table_admin_client
    found = admin.get_table(request={"name": f"projects/{PROJECT}/instances/{instance.id}/tables/videos",
                                     "view": "SCHEMA_VIEW"})
    kinds = {name: family_kind(f.value_type) for name, f in found.column_families.items()}
    assert kinds == {"cf": None, "Video": None, "Stats": "int64_sum", "UserComments": None,
                     TXN_FAMILY: None}  # serve's transaction locks: every table has the family (docs/transactions.md)


def test_the_export_loads_likes_3_and_views_156_and_verify_reads_them_back(bigtable_emulator, tmp_path):
    table, instance = prepare()
    report = load(table, instance.id, tmp_path)
    assert report.complete and report.total("dead_lettered") == 0
    assert counters(instance.id) == {"Likes": (3,), "Views": (156,)}  # one merged cell each
    verified = run_verify(table, EXPORT, project=PROJECT, instance_id=instance.id, work_dir=tmp_path)
    assert verified.ok and verified.mismatched == 0 and verified.matched == report.manifest_items


def test_increments_from_several_clients_through_the_serving_profile_sum_exactly(bigtable_emulator, tmp_path):
    table, instance = prepare()
    assert load(table, instance.id, tmp_path).complete
    codec = Codec(table, {})
    likes = {"VideoId": {"S": "0123"}, "SK": {"S": "VideoStatsLikes"}}
    clients, each = 6, 40

    async def client(n: int) -> None:
        async with BigtableDataClientAsync(project=PROJECT) as c:
            videos = c.get_table(instance.id, "videos", app_profile_id="serving")
            for i in range(each):
                row = counter_add(codec, likes, "Count", 1 + (n + i) % 3, now_micros=1_800_000_000_000_000)
                await videos.mutate_row(row.key, client_mutations(row))

    async def all_clients() -> None:
        await asyncio.gather(*(client(n) for n in range(clients)))
    asyncio.run(all_clients())
    added = sum(1 + (n + i) % 3 for n in range(clients) for i in range(each))
    assert counters(instance.id) == {"Likes": (3 + added,), "Views": (156,)}


def test_a_fresh_rerun_sets_the_exports_values_instead_of_adding_them(bigtable_emulator, tmp_path):
    table, instance = prepare()
    assert load(table, instance.id, tmp_path).complete
    codec = Codec(table, {})
    views = counter_add(codec, {"VideoId": {"S": "0123"}, "SK": {"S": "VideoStatsViews"}}, "Count", 44,
                        now_micros=1_800_000_000_000_000)

    async def add() -> None:
        async with BigtableDataClientAsync(project=PROJECT) as c:
            await c.get_table(instance.id, "videos").mutate_row(views.key, client_mutations(views))
    asyncio.run(add())
    assert counters(instance.id) == {"Likes": (3,), "Views": (200,)}
    again = load(table, instance.id, tmp_path, fresh="--fresh")
    assert again.complete and all(f.status != "resumed: already loaded" for f in again.files)
    assert counters(instance.id) == {"Likes": (3,), "Views": (156,)}  # the export's values, not 6 and 312


def test_a_replicated_stream_record_sets_the_counter_and_a_replay_changes_nothing(bigtable_emulator, tmp_path):
    table, instance = prepare()
    assert load(table, instance.id, tmp_path).complete
    codec = Codec(table, {})
    keys = {"VideoId": {"S": "0123"}, "SK": {"S": "VideoStatsLikes"}}
    record = StreamRecord("shard-1", "100", "modify", 1_800_000_000_000_000, keys,
                          {**keys, "Count": {"N": "10"}}, {**keys, "Count": {"N": "3"}})
    (row,) = record_rows(codec, record, start_micros=0, now_micros=1_800_000_000_000_000).rows

    async def apply() -> None:
        async with BigtableDataClientAsync(project=PROJECT) as c:
            videos = c.get_table(instance.id, "videos")
            await videos.bulk_mutate_rows([row_entry(row, Source("stream", 100))])  # the writer's own entry
    asyncio.run(apply())
    assert counters(instance.id)["Likes"] == (10,)
    asyncio.run(apply())  # the same record replayed
    assert counters(instance.id)["Likes"] == (10,)


def test_a_family_of_another_type_stops_the_table_admin_before_any_change(bigtable_emulator):
    spec = read_spec(ROOT / "specs" / "video-single-table.yaml")
    (planned,) = plan_stage(load_stage("local", ROOT), [spec]).instances
    instance = replace(planned, id=f"c{next(_instances)}-{planned.id}"[:33])
    (videos,) = instance.tables
    plain = replace(videos, families=tuple(replace(f, aggregate=None) for f in videos.families))
    ensure_tables(PROJECT, replace(instance, tables=(plain,)))  # an older plan: Stats was a plain family
    with pytest.raises(ServiceError, match=r"family Stats is a plain family, the plan makes it int64_sum; "
                                           r"Bigtable cannot convert a family's type: delete the family"):
        ensure_tables(PROJECT, instance)
    admin = Client(project=PROJECT, admin=True).table_admin_client
    found = admin.get_table(request={"name": f"projects/{PROJECT}/instances/{instance.id}/tables/videos",
                                     "view": "SCHEMA_VIEW"})
    assert family_kind(found.column_families["Stats"].value_type) is None



def test_a_load_into_a_counter_family_created_plain_stops_before_writing(bigtable_emulator, tmp_path):
    """Every AddToCell into a plain family fails (the emulator says UNKNOWN, which the client
    retries for minutes): the load's preflight names the family and the fix at once."""
    table, planned = prepare()
    instance = replace(planned, id=f"c{next(_instances)}-{planned.id}"[:33])
    (videos,) = instance.tables
    ensure_tables(PROJECT, replace(instance, tables=(
        replace(videos, families=tuple(replace(f, aggregate=None) for f in videos.families)),)))
    with pytest.raises(InputError, match=r"family Stats of .*/videos on the Bigtable emulator at .* is a plain family, "
                                         r"the mapping needs int64_sum \(it holds counters\); Bigtable cannot convert"):
        load(table, instance.id, tmp_path)
    assert counters(instance.id) == {}


@pytest.mark.usefixtures("unknown_client_version")
def test_the_public_write_path_sets_a_counter_as_the_fast_one_does(bigtable_emulator):
    """With another client version the writer sends the client's own AddToCell, after the
    column's delete in the same row: idempotent as a whole, so it is retried, and a second
    write leaves the same number."""
    table, instance = prepare()
    views = Codec(table, {}).encode({"VideoId": {"S": "0123"}, "SK": {"S": "VideoStatsViews"}, "Count": {"N": "156"}},
                                    write_time_micros=1_700_000_000_000_000, now_micros=1_700_000_000_000_000)
    entry = writer.row_entry(views, Source("data/a.json.gz", 5))
    assert type(entry) is client_hooks.PublicEntry and entry.is_idempotent()
    assert [type(m).__name__ for m in entry.mutations] == ["DeleteRangeFromColumn", "AddToCell"]

    async def chunks():
        yield [writer.row_entry(views, Source("data/a.json.gz", 5))]

    async def write_twice() -> None:
        async with writer.Writer(PROJECT, instance.id, "videos", None, writer.WriteSettings()) as w:
            for _ in range(2):
                await w.write(chunks(), lambda source, reason: None)
    asyncio.run(write_twice())
    assert counters(instance.id) == {"Views": (156,)}


def test_the_beam_pipeline_sets_the_counters_as_the_local_writer_does(bigtable_emulator, tmp_path):
    from ddb2bigtable.load.beam.direct import run_beam_load

    table, instance = prepare()
    options = LoadOptions(project=PROJECT, instance_id=instance.id, app_profile_id="migration-load",
                          work_dir=tmp_path)
    for _ in range(2):  # a second run, fresh: the same numbers, not doubled
        report = run_beam_load(table, EXPORT, replace(options, fresh="--fresh"))
        assert report.complete and report.total("dead_lettered") == 0
        assert counters(instance.id) == {"Likes": (3,), "Views": (156,)}
