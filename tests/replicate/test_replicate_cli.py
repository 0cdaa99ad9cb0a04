"""`ddb2bigtable replicate` as a user runs it: a subprocess against DynamoDB Local and the
Bigtable emulator; bad input is exit 2 without a traceback; a `--follow` killed with
SIGKILL mid-way and rerun loses nothing; SIGTERM stops it with its checkpoint saved."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time

from ..conftest import ROOT
from .scenario import create, differences, export_and_load, snapshot
from .test_replicate_emulator import movie


def command(scenario, dynamodb, *args: str) -> list[str]:
    return [sys.executable, "-m", "ddb2bigtable", "replicate", str(scenario.spec_file), "--table", scenario.table.id,
            "--stage", "local", "--root", str(ROOT), "--work-dir", str(scenario.work_dir),
            "--endpoint-url", dynamodb.endpoint, *args]


def environment() -> dict[str, str]:
    return {**os.environ, "AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local"}


def replicate(scenario, dynamodb, *args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(command(scenario, dynamodb, *args), capture_output=True, text=True,
                          env=environment() | env, timeout=300)


def writes(dynamodb, scenario, first: int, count: int, pause: float = 0.0) -> None:
    """Puts, an update of every second item and a delete of every fifth, as an application would."""
    db = dynamodb.client()
    for i in range(first, first + count):
        key = {"year": {"N": "1999"}, "title": {"S": f"Live {i}"}}
        db.put_item(TableName=scenario.dynamo_table, Item=movie(1999, f"Live {i}"))
        if i % 2:
            db.update_item(TableName=scenario.dynamo_table, Key=key, UpdateExpression="SET n = :n",
                           ExpressionAttributeValues={":n": {"N": str(i)}})
        if i % 5 == 0:
            db.delete_item(TableName=scenario.dynamo_table, Key=key)
        time.sleep(pause)


def test_replicate_until_caught_up_through_the_cli(dynamodb, bigtable_emulator, tmp_path, monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "local")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "local")
    scenario = create(dynamodb, tmp_path)
    writes(dynamodb, scenario, 0, 10)
    export = export_and_load(dynamodb, scenario, tmp_path)
    writes(dynamodb, scenario, 10, 20)
    out = replicate(scenario, dynamodb, "--since", str(export), "--until-caught-up", "--format", "json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["stopped"] == "caught up" and report["dead_letters"] == 0
    assert (report["inserts"], report["modifies"], report["removes"]) == (30, 15, 6)
    assert report["applied"] == 51 and report["records_per_second"] > 0 and report["lag_seconds"] is not None
    assert differences(dynamodb, scenario) == []
    fresh = snapshot(dynamodb, scenario, tmp_path / "after")  # and `verify` agrees, with a new Scan
    out = subprocess.run([sys.executable, "-m", "ddb2bigtable", "verify", str(scenario.spec_file), "--table",
                          scenario.table.id, "--export", str(fresh), "--stage", "local", "--root", str(ROOT),
                          "--work-dir", str(scenario.work_dir), "--format", "json"], capture_output=True, text=True)
    verified = json.loads(out.stdout)
    assert out.returncode == 0 and verified["ok"] and verified["checked"] == 24, out.stderr
    text = replicate(scenario, dynamodb, FORCE_COLOR="1")  # resumes from the checkpoint: nothing new
    assert text.returncode == 0 and "caught up; 0 records applied" in text.stdout, text.stderr
    assert "replicating: 0 applied, 0 dead letters" in text.stderr  # the live line, as on a terminal


def test_bad_input_is_exit_2_with_a_located_message_and_no_traceback(dynamodb, bigtable_emulator, tmp_path):
    scenario = create(dynamodb, tmp_path, stream="KEYS_ONLY")
    for args, says in [(("--since", "yesterday"), "neither a time"),
                       (("--since", "2026-11-24T01:00:00Z", "--follow", "--until-caught-up"), "not both"),
                       (("--since", "2026-11-24T01:00:00Z"), "KEYS_ONLY"),
                       (("--since", "2026-11-24T01:00:00Z", "--fetch-keys-only"), "load the export first")]:
        out = replicate(scenario, dynamodb, *args)
        assert out.returncode == 2 and says in out.stderr and "Traceback" not in out.stderr, out.stderr


def test_a_follow_killed_mid_way_and_rerun_loses_nothing(dynamodb, bigtable_emulator, tmp_path, monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "local")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "local")
    scenario = create(dynamodb, tmp_path)
    writes(dynamodb, scenario, 0, 10)
    export = export_and_load(dynamodb, scenario, tmp_path)
    writer = threading.Thread(target=writes, args=(dynamodb, scenario, 10, 60, 0.02))
    writer.start()
    follow = subprocess.Popen(command(scenario, dynamodb, "--since", str(export), "--follow"),
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=environment())
    checkpoint = scenario.work_dir / "replicate.json"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not json.loads(checkpoint.read_text() if checkpoint.exists() else
                                                         '{"after": {}}')["after"]:
        time.sleep(0.05)
    follow.send_signal(signal.SIGKILL)  # mid-way: the writer is still writing
    follow.wait()
    assert follow.returncode == -signal.SIGKILL
    writer.join()
    after_kill = json.loads(checkpoint.read_text())["after"]
    assert after_kill  # it had applied something, not everything

    began = time.time_ns() // 1000
    again = subprocess.Popen(command(scenario, dynamodb, "--follow", "--format", "json"), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=environment())
    deadline = time.monotonic() + 60  # until it has caught up once (running, its signal handlers in place)
    while time.monotonic() < deadline and (json.loads(checkpoint.read_text()).get("caught_up_micros") or 0) < began:
        time.sleep(0.1)
    again.send_signal(signal.SIGTERM)  # stops after the page in flight, checkpoint saved
    stdout, stderr = again.communicate(timeout=60)
    assert again.returncode == 0, stderr
    assert json.loads(stdout)["stopped"] == "interrupted"
    out = replicate(scenario, dynamodb, "--until-caught-up", "--format", "json")
    assert out.returncode == 0, out.stderr
    assert differences(dynamodb, scenario) == []
