"""`ddb2bigtable export aws://REGION/TABLE -o DIR` against DynamoDB Local: a parallel Scan
in AWS's export layout, read back by the exports reader; resumed after SIGKILL to the same
items and manifest counts; bounded reads; refusals that name what to do."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from ddb2bigtable.exports.manifests import open_export, verify_file
from ddb2bigtable.exports.reader import read_records
from ddb2bigtable.exports.scan_export import Budget, read_budget
from ddb2bigtable.exports.scan_state import CHECKPOINT

from ..replicate import dynamodb_local
from .scan_tables import killed_after_files, make_table

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def dynamodb():
    running = dynamodb_local.start()
    yield running
    running.stop()


def _export(dynamodb, table: str, dest: Path | str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    env = {**os.environ, "AWS_ENDPOINT_URL_DYNAMODB": dynamodb.endpoint, "AWS_ACCESS_KEY_ID": "local",
           "AWS_SECRET_ACCESS_KEY": "local"}
    return subprocess.run([sys.executable, "-m", "ddb2bigtable", "export", f"aws://us-west-2/{table}", "-o",
                           str(dest), *args], capture_output=True, text=True, env=env, timeout=timeout, cwd=ROOT)


def _exported(dest: Path) -> tuple[list[dict], dict, list[int]]:
    """The export's items (read back by the loader's reader), its summary and file counts."""
    manifest = open_export(str(dest))
    items = []
    for f in manifest.files:
        verify_file(manifest, f)
        items += [r.item for r in read_records(manifest, f)]
    (summary_path,) = dest.glob("AWSDynamoDB/*/manifest-summary.json")
    return items, json.loads(summary_path.read_text()), [f.item_count for f in manifest.files]


def _key(item: dict) -> tuple:
    return item["pk"]["S"], item["sk"]["N"]


def test_export_writes_every_item_of_every_type_as_aws_lays_an_export_out(dynamodb, tmp_path):
    client = dynamodb.client()
    items = make_table(client, "ScanEvery", 500)
    before = datetime.now(UTC)
    out = _export(dynamodb, "ScanEvery", tmp_path / "out", "--segments", "3", "--items-per-file", "70",
                  "--format", "json")
    assert out.returncode == 0, out.stderr
    exported, summary, counts = _exported(tmp_path / "out")
    assert sorted(exported, key=_key) == sorted(items, key=_key)  # every type, byte for byte the table's
    assert summary["itemCount"] == 500 == sum(counts) and max(counts) == 70
    assert summary["tableArn"].endswith(":table/ScanEvery")
    scan = summary["ddb2bigtable"]
    assert scan["exportKind"] == "PARALLEL_SCAN" and scan["totalSegments"] == 3
    start = datetime.fromisoformat(summary["exportTime"].replace("Z", "+00:00"))
    assert before - timedelta(seconds=1) <= start <= datetime.now(UTC) and summary["exportTime"] == scan["scanStartTime"]
    assert not (tmp_path / "out" / CHECKPOINT).exists()  # a finished export keeps no checkpoint
    assert stat.S_IMODE((tmp_path / "out").stat().st_mode) == 0o700  # the folder it made holds table data
    assert json.loads(out.stdout)["items"] == 500


def test_a_killed_export_resumes_to_the_same_items_and_counts(dynamodb, tmp_path):
    client = dynamodb.client()
    make_table(client, "ScanKilled", 500)
    whole = _export(dynamodb, "ScanKilled", tmp_path / "whole", "--segments", "2", "--items-per-file", "40")
    assert whole.returncode == 0, whole.stderr

    env = {**os.environ, "AWS_ENDPOINT_URL_DYNAMODB": dynamodb.endpoint, "AWS_ACCESS_KEY_ID": "local",
           "AWS_SECRET_ACCESS_KEY": "local"}
    slow = subprocess.Popen([sys.executable, "-m", "ddb2bigtable", "export", "aws://us-west-2/ScanKilled", "-o",
                             str(tmp_path / "killed"), "--segments", "2", "--items-per-file", "40", "--max-rcu", "3"],
                            env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    checkpoint = tmp_path / "killed" / CHECKPOINT
    saved = killed_after_files(slow, checkpoint)
    assert not all(s["done"] for s in saved["segments"]), "the export ended before it was killed"
    assert stat.S_IMODE(checkpoint.stat().st_mode) == 0o600  # it holds item keys

    resumed = _export(dynamodb, "ScanKilled", tmp_path / "killed", "--segments", "2", "--items-per-file", "40")
    assert resumed.returncode == 0, resumed.stderr
    assert "resumed" in resumed.stdout
    items, summary, counts = _exported(tmp_path / "killed")
    whole_items, whole_summary, whole_counts = _exported(tmp_path / "whole")
    assert len(items) == len({_key(i) for i in items}) == 500  # nothing twice, nothing lost
    assert sorted(items, key=_key) == sorted(whole_items, key=_key)
    assert summary["itemCount"] == whole_summary["itemCount"] and sorted(counts) == sorted(whole_counts)
    assert summary["exportTime"] == datetime.fromisoformat(saved["start"]).strftime("%Y-%m-%dT%H:%M:%S.") \
        + f"{datetime.fromisoformat(saved['start']).microsecond // 1000:03d}Z"  # the first run's start


def test_export_refuses_what_it_cannot_do_with_what_to_do(dynamodb, tmp_path):
    missing = _export(dynamodb, "NoSuchTable", tmp_path / "a")
    assert missing.returncode == 2 and "no table 'NoSuchTable'" in missing.stderr
    assert "Traceback" not in missing.stderr and not (tmp_path / "a" / "AWSDynamoDB").exists()
    bucket = _export(dynamodb, "NoSuchTable", "ftp://bucket/prefix")  # s3:// and gs://: test_scan_to_bucket.py
    assert bucket.returncode == 2 and "s3://BUCKET/PREFIX or gs://BUCKET/PREFIX" in bucket.stderr
    make_table(dynamodb.client(), "ScanTwice", 3)
    assert _export(dynamodb, "ScanTwice", tmp_path / "b").returncode == 0
    again = _export(dynamodb, "ScanTwice", tmp_path / "b")
    assert again.returncode == 2 and "new folder" in again.stderr
    bad = subprocess.run([sys.executable, "-m", "ddb2bigtable", "export", "dynamodb://x", "-o", str(tmp_path / "c")],
                         capture_output=True, text=True, cwd=ROOT)
    assert bad.returncode == 2 and "aws://REGION/TABLE" in bad.stderr


def test_export_against_a_local_endpoint_that_refuses_connections_is_exit_2_saying_how_to_start_it(tmp_path):
    from ddb2bigtable.bigtable.emulator import free_port

    env = {**os.environ, "AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local"}
    out = subprocess.run([sys.executable, "-m", "ddb2bigtable", "export", "aws://us-west-2/Gone", "-o",
                          str(tmp_path / "x"), "--endpoint-url", f"http://127.0.0.1:{free_port()}"],
                         capture_output=True, text=True, env=env, cwd=ROOT, timeout=60)
    assert out.returncode == 2 and "cannot reach" in out.stderr and "Traceback" not in out.stderr
    assert "bash scripts/local-servers.sh start" in out.stderr


def test_the_default_budget_is_a_quarter_of_the_tables_reads():
    assert read_budget({"ProvisionedThroughput": {"ReadCapacityUnits": 400}}, None)[0] == 100
    on_demand = {"BillingModeSummary": {"BillingMode": "PAY_PER_REQUEST"},
                 "ProvisionedThroughput": {"ReadCapacityUnits": 0}}
    assert read_budget(on_demand, None)[0] == 3000
    assert read_budget({**on_demand, "OnDemandThroughput": {"MaxReadRequestUnits": 800}}, None)[0] == 200
    assert read_budget(on_demand, 7.5) == (7.5, "--max-rcu")


def test_the_budget_holds_reads_to_its_rate():
    now = [0.0]
    budget = Budget(10.0, clock=lambda: now[0], sleep=lambda s: now.__setitem__(0, now[0] + s))
    for _ in range(50):
        budget.spend(4.0)  # 200 units at 10 per second: 20 s, less the one-second burst
    assert 18.9 <= now[0] <= 20.0
    budget.slow_down()
    assert budget.rate == 5.0


def test_a_checkpoint_older_than_the_stream_keeps_is_not_resumed(dynamodb, tmp_path):
    from ddb2bigtable.exports import scan_state

    make_table(dynamodb.client(), "ScanStale", 3)
    arn = dynamodb.client().describe_table(TableName="ScanStale")["Table"]["TableArn"]
    (tmp_path / "old").mkdir()
    start = datetime.now(UTC) - timedelta(hours=25)
    scan_state.save(tmp_path / "old", scan_state.ScanState(arn, "x", start, 10_000, [scan_state.Segment()] * 4))
    out = _export(dynamodb, "ScanStale", tmp_path / "old")
    assert out.returncode == 2 and "more than 24 h" in out.stderr and "new folder" in out.stderr
    assert not (tmp_path / "old" / "AWSDynamoDB").exists()


def test_a_throttled_page_is_asked_again_after_a_pause_at_half_the_rate(monkeypatch, tmp_path):
    """DynamoDB's ProvisionedThroughputExceededException past botocore's retries: the same
    page is asked again (same ExclusiveStartKey) after 1 s, then 2 s, the budget halved each time."""
    from botocore.exceptions import ClientError

    from ddb2bigtable.exports import scan_export

    pauses: list[float] = []
    monkeypatch.setattr(scan_export.time, "sleep", pauses.append)
    export = scan_export.ScanExport(scan_export.ScanOptions("us-west-2", "Busy", tmp_path, endpoint_url="http://127.0.0.1:9"))
    export.budget = Budget(100.0)
    asked: list[dict] = []

    def scan(**request):
        asked.append(request)
        if len(asked) < 3:
            raise ClientError({"Error": {"Code": "ProvisionedThroughputExceededException", "Message": "slow down"}},
                              "Scan")
        return {"Items": [], "Count": 0}

    monkeypatch.setattr(export, "_db", type("Db", (), {"scan": staticmethod(scan)}))
    key = {"pk": {"S": "a"}, "sk": {"N": "1"}}
    assert export._page(1, key, 10) == {"Items": [], "Count": 0}
    assert [r["ExclusiveStartKey"] for r in asked] == [key] * 3 and pauses == [1, 2]
    assert export.budget.rate == 25.0


def test_a_second_export_into_the_same_folder_is_refused_while_the_first_runs(dynamodb, tmp_path):
    make_table(dynamodb.client(), "ScanTwoAtOnce", 300)
    env = {**os.environ, "AWS_ENDPOINT_URL_DYNAMODB": dynamodb.endpoint, "AWS_ACCESS_KEY_ID": "local",
           "AWS_SECRET_ACCESS_KEY": "local"}
    first = subprocess.Popen([sys.executable, "-m", "ddb2bigtable", "export", "aws://us-west-2/ScanTwoAtOnce", "-o",
                              str(tmp_path / "out"), "--items-per-file", "20", "--max-rcu", "0.5"],
                             env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not (tmp_path / "out" / CHECKPOINT).exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        second = _export(dynamodb, "ScanTwoAtOnce", tmp_path / "out", "--items-per-file", "20")
        assert second.returncode == 2 and "another `ddb2bigtable export` is writing this folder" in second.stderr
        assert first.poll() is None  # the first goes on
    finally:
        first.kill()
        first.wait(10)
    resumed = _export(dynamodb, "ScanTwoAtOnce", tmp_path / "out", "--items-per-file", "20")
    assert resumed.returncode == 0, resumed.stderr  # the killed one's lock went with it
    assert _exported(tmp_path / "out")[1]["itemCount"] == 300
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["AWSDynamoDB"]  # no checkpoint, no lock left
