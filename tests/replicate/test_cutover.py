"""`cutover check` against DynamoDB Local and the Bigtable emulator: ready after `replicate
--until-caught-up`; a difference planted in Bigtable only (one attribute changed, one row
deleted) is found and named; no lag before replicate ran; bad input is exit 2."""

from __future__ import annotations

import asyncio
import json
import random
import subprocess
import sys
import time

from google.cloud.bigtable.data import BigtableDataClientAsync
from google.cloud.bigtable.data import mutations as bt

from ddb2bigtable.codec.mutations import RowMutation
from ddb2bigtable.load.client_hooks import Source
from ddb2bigtable.load.state import target
from ddb2bigtable.load.writer import row_entry
from ddb2bigtable.replicate.checkpoint import CHECKPOINT, Checkpoint, save_checkpoint
from ddb2bigtable.replicate.cutover import NOT_RUN, CutoverOptions, run_cutover_check
from ddb2bigtable.replicate.stream import StreamReader
from ddb2bigtable.spec.families import TXN_FAMILY, TXN_LOCK_COLUMN

from ..conftest import ROOT
from .scenario import PROJECT, _codec, create, export_and_load, scan
from .test_replicate_cli import environment, replicate, writes
from .test_replicate_emulator import movie


def cutover_check(scenario, dynamodb, *args: str, table: str | None = None,
                  env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ddb2bigtable", "cutover", "check", str(scenario.spec_file),
                           "--table", table or scenario.table.id, "--stage", "local", "--root", str(ROOT),
                           "--work-dir", str(scenario.work_dir), "--endpoint-url", dynamodb.endpoint, *args],
                          capture_output=True, text=True, env=environment() | (env or {}), timeout=300)


def plant(scenario, rows: list[RowMutation]) -> None:
    """Rows written to Bigtable only, as the load's writer writes them."""
    async def go():
        async with BigtableDataClientAsync(project=PROJECT) as client:
            table = client.get_table(scenario.instance_id, scenario.table.id)
            await table.bulk_mutate_rows([row_entry(row, Source("planted", i)) for i, row in enumerate(rows)])
    asyncio.run(go())


def test_ready_after_replicate_then_a_planted_difference_is_named(dynamodb, bigtable_emulator, tmp_path):
    scenario = create(dynamodb, tmp_path)
    writes(dynamodb, scenario, 0, 10)
    export = export_and_load(dynamodb, scenario, tmp_path)
    writes(dynamodb, scenario, 10, 20)
    out = replicate(scenario, dynamodb, "--since", str(export), "--until-caught-up")
    assert out.returncode == 0, out.stderr

    ready = cutover_check(scenario, dynamodb, "--sample", "100", "--segments", "3", "--format", "json")
    assert ready.returncode == 0, ready.stdout + ready.stderr
    report = json.loads(ready.stdout)
    assert report["ready"] and report["reasons"] == [], report
    assert report["checked"] == report["matches"] == 24  # 30 written, 6 deleted: all of them, a small table
    assert report["mismatches"] == report["missing_in_bigtable"] == []
    assert report["lag_seconds"] < report["lag_limit_seconds"] == 60 and report["lag"].startswith("caught up at")

    codec, items = _codec(scenario), {i["title"]["S"]: i for i in scan(dynamodb, scenario.dynamo_table)}
    changed = items["Live 11"] | {"n": {"N": "999"}}  # the attribute changed in Bigtable only
    now = 2**52  # a cell time after anything replicate wrote: it is the version read back
    plant(scenario, [codec.encode(changed, write_time_micros=now, now_micros=0, replace=True),
                     codec.delete(items["Live 12"])])

    found = cutover_check(scenario, dynamodb, "--sample", "100")
    assert found.returncode == 1, found.stdout + found.stderr
    assert "differs: year=1999, title=Live 11: attributes differ: n" in found.stdout
    assert "missing in Bigtable: year=1999, title=Live 12" in found.stdout
    assert "verdict: not ready: 1 item(s) differ; 1 item(s) missing in Bigtable" in found.stdout
    assert found.stdout.splitlines()[0].endswith(": not ready: 1 item(s) differ; 1 item(s) missing in Bigtable")
    assert "22 match" in found.stdout and "Traceback" not in found.stderr

    as_json = json.loads(cutover_check(scenario, dynamodb, "--format", "json").stdout)
    assert as_json["mismatches"] == [{"key": {"year": {"N": "1999"}, "title": {"S": "Live 11"}},
                                      "attributes": ["n"], "detail": "attributes differ: n"}]
    assert [m["key"]["title"]["S"] for m in as_json["missing_in_bigtable"]] == ["Live 12"]
    assert as_json["locked_rows"] == 0

    _lock(scenario, codec.row_key(changed))  # a serve transaction stopped after prewrite on the differing row
    locked = cutover_check(scenario, dynamodb, "--sample", "100")
    assert "note: 1 row(s) still hold a serve transaction's lock" in locked.stdout
    assert "1 item(s) differ" in locked.stdout  # the comparison itself is unchanged
    assert json.loads(cutover_check(scenario, dynamodb, "--format", "json").stdout)["locked_rows"] == 1


def _lock(scenario, key: bytes) -> None:
    """The lock cell a TransactWriteItems stopped after prewrite leaves."""
    async def go():
        async with BigtableDataClientAsync(project=PROJECT) as client:
            table = client.get_table(scenario.instance_id, scenario.table.id)
            await table.mutate_row(key, [bt.SetCell(TXN_FAMILY, TXN_LOCK_COLUMN, b"t1.0:prepared", 0)])
    asyncio.run(go())


def test_without_replicate_the_lag_is_unknown_and_the_sample_is_bounded(dynamodb, bigtable_emulator, tmp_path,
                                                                        monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "local")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "local")
    scenario = create(dynamodb, tmp_path)
    for i in range(40):  # 40 partitions: a segment is a range of partition-key hashes
        dynamodb.client().put_item(TableName=scenario.dynamo_table, Item=movie(1960 + i, f"Film {i}"))
    export_and_load(dynamodb, scenario, tmp_path)
    options = CutoverOptions(project=PROJECT, instance_id=scenario.instance_id, app_profile_id="migration-load",
                             work_dir=scenario.work_dir, sample=10, segments=2, endpoint_url=dynamodb.endpoint)
    report = run_cutover_check(scenario.table, options)
    assert (report.checked, report.matches, report.mismatches, report.missing) == (10, 10, [], [])
    assert report.lag_seconds is None and report.lag_note == NOT_RUN
    assert not report.ready and report.reasons == [f"replication lag {NOT_RUN}"]
    where = target(PROJECT, scenario.instance_id, scenario.table.id)  # replicate caught up 2 minutes ago
    arn = StreamReader(scenario.dynamo_table, "us-west-2", dynamodb.endpoint).stream().arn
    stale = Checkpoint(arn, where, 0, caught_up_micros=time.time_ns() // 1000 - 120_000_000)
    save_checkpoint(scenario.work_dir / CHECKPOINT, stale)
    late = run_cutover_check(scenario.table, options)
    assert late.lag_seconds is not None and 119 < late.lag_seconds < 180 and late.lag_note.startswith("caught up at")
    assert not late.ready and late.reasons == [f"replication lag {late.lag_seconds:,.1f} s is not under 60 s"]
    samples = [_sampled_titles(scenario.table, options, seed) for seed in range(4)]
    assert all(len(titles) == len(set(titles)) == 10 for titles in samples)
    assert len({title for titles in samples for title in titles}) > 10  # different checks see different items


def _sampled_titles(table, options: CutoverOptions, seed: int) -> list[str]:
    reader = StreamReader(table.source.table, table.source.region, options.endpoint_url)
    return [i["title"]["S"] for i in reader.sample(options.sample, options.segments, random.Random(seed))]


def test_bad_input_is_exit_2_without_a_traceback(dynamodb, bigtable_emulator, tmp_path):
    scenario = create(dynamodb, tmp_path)  # nothing loaded
    for args, table, says in [((), None, "no load of"), ((), "nope", "no table 'nope'"),
                              (("--sample", "0"), None, "--sample: must be at least 1")]:
        out = cutover_check(scenario, dynamodb, *args, table=table)
        assert out.returncode == 2 and says in out.stderr and "Traceback" not in out.stderr, out.stderr


class _InFlight(StreamReader):
    """The live table as a check may first see it: one item with a write replicate has not
    applied yet, one since deleted. The second look (`current`) is the real table."""

    def sample(self, count, segments, rng):
        (first, *rest) = super().sample(count, segments, rng)
        ghost = first | {"title": {"S": "Deleted meanwhile"}}
        return [first | {"n": {"N": "999"}}, ghost, *rest]


def test_a_difference_that_goes_away_on_the_second_look_is_not_reported(dynamodb, bigtable_emulator, tmp_path,
                                                                        monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "local")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "local")
    scenario = create(dynamodb, tmp_path)
    writes(dynamodb, scenario, 0, 10)
    export_and_load(dynamodb, scenario, tmp_path)
    options = CutoverOptions(project=PROJECT, instance_id=scenario.instance_id, app_profile_id="migration-load",
                             work_dir=scenario.work_dir, sample=50, endpoint_url=dynamodb.endpoint,
                             recheck_seconds=0.1)
    reader = _InFlight(scenario.dynamo_table, scenario.table.source.region, dynamodb.endpoint)
    report = run_cutover_check(scenario.table, options, reader)
    assert (report.mismatches, report.missing, report.vanished) == ([], [], 1)
    assert report.checked == report.matches == 8  # 10 written, 2 deleted


def test_an_item_only_in_bigtable_is_found_and_ttl_expired_items_are_not_differences(dynamodb, bigtable_emulator,
                                                                                      tmp_path, monkeypatch):
    """A TTL table: items past their TTL (DynamoDB still returns them until its sweep) are
    counted as expired, not missing; a row left in Bigtable for an item DynamoDB deleted
    (a lost REMOVE) is named as only in Bigtable, next to the sample's keys."""
    from .test_replicate_emulator import credentials

    credentials(monkeypatch)
    scenario = create(dynamodb, tmp_path, ttl="expiresAt")
    db, name = dynamodb.client(), scenario.dynamo_table
    soon, past = int(time.time()) + 3600, int(time.time()) - 60
    for i in range(12):
        db.put_item(TableName=name, Item=movie(2021, f"T{i:02}", expiresAt={"N": str(soon)}))
    export = export_and_load(dynamodb, scenario, tmp_path)
    for i in range(3):  # past their TTL now: replicate deletes them from Bigtable, DynamoDB still has them
        db.update_item(TableName=name, Key={"year": {"N": "2021"}, "title": {"S": f"T{i:02}"}},
                       UpdateExpression="SET expiresAt = :e", ExpressionAttributeValues={":e": {"N": str(past)}})
    out = replicate(scenario, dynamodb, "--since", str(export))
    assert out.returncode == 0, out.stderr
    ready = json.loads(cutover_check(scenario, dynamodb, "--sample", "100", "--format", "json").stdout)
    assert ready["ready"] and ready["expired"] == 3 and ready["matches"] == 9, ready
    assert ready["missing_in_bigtable"] == [] and ready["only_in_bigtable"] == []

    codec = _codec(scenario)
    ghost = movie(2021, "T05b", expiresAt={"N": str(soon)})  # sorts right after T05, in no table of DynamoDB
    plant(scenario, [codec.encode(ghost, write_time_micros=2**52, now_micros=0)])
    found = cutover_check(scenario, dynamodb, "--sample", "100")
    assert found.returncode == 1, found.stdout + found.stderr
    assert "only in Bigtable: year=2021, title=T05b" in found.stdout
    assert "verdict: not ready: 1 item(s) only in Bigtable" in found.stdout
