"""`replicate --reverse` and `cutover check --reverse` as a user runs them, end to end.

serve's DynamoDB Streams API is not on main yet (issue 52, point 1), so a second DynamoDB
Local stands in for serve: the application's writes after the switch go to its table of
the same name, its stream is the stream `replicate --reverse --stream-endpoint-url` reads,
and a forward `replicate` from it (its own work folder) writes them into the Bigtable
emulator, as serve's write path would. The source table is in the first DynamoDB Local.
What it shows: writes from 4 threads reach DynamoDB through a reverse replicator killed
with SIGKILL mid-way and resumed, nothing lost (DynamoDB equals serve's side and Bigtable
item for item), and `cutover check --reverse` ready, then naming a planted difference.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime

import pytest

from ..conftest import ROOT
from . import dynamodb_local
from .scenario import create, differences, export_and_load, scan
from .test_replicate_cli import command, environment, writes

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def served():
    """The stand-in for serve's endpoint: a DynamoDB Local of its own."""
    running = dynamodb_local.start()
    yield running
    running.stop()


def reverse_command(scenario, dynamodb, served, *args: str) -> list[str]:
    return [*command(scenario, dynamodb, "--reverse", "--stream-endpoint-url", served.endpoint), *args]


def cutover_reverse(scenario, dynamodb, served, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ddb2bigtable", "cutover", "check", str(scenario.spec_file),
                           "--table", scenario.table.id, "--stage", "local", "--root", str(ROOT), "--work-dir",
                           str(scenario.work_dir), "--endpoint-url", dynamodb.endpoint, "--reverse",
                           "--stream-endpoint-url", served.endpoint, "--sample", "500", *args],
                          capture_output=True, text=True, env=environment(), timeout=300)


def by_key(items):
    return {(i["year"]["N"], i["title"]["S"]): i for i in items}


def test_a_reverse_replicator_killed_mid_way_resumes_and_dynamodb_ends_equal(dynamodb, served, bigtable_emulator,
                                                                            tmp_path, monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "local")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "local")
    scenario = create(dynamodb, tmp_path)
    writes(dynamodb, scenario, 0, 40)
    export_and_load(dynamodb, scenario, tmp_path)
    # The write switch: serve's table holds what Bigtable holds; its stream starts after.
    db, serve = dynamodb.client(), served.client()
    serve.create_table(**{k: v for k, v in db.describe_table(TableName=scenario.dynamo_table)["Table"].items()
                          if k in ("TableName", "AttributeDefinitions", "KeySchema")},
                       BillingMode="PAY_PER_REQUEST",
                       StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"})
    for item in scan(dynamodb, scenario.dynamo_table):
        serve.put_item(TableName=scenario.dynamo_table, Item=item)
    time.sleep(0.01)
    switch = datetime.now(UTC).isoformat()

    # The application writes through serve from 4 threads while reverse replication follows.
    follower = subprocess.Popen(reverse_command(scenario, dynamodb, served, "--since", switch, "--follow"),
                                env=environment(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    checkpoint = scenario.work_dir / "replicate-reverse.json"

    def until(condition) -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not condition():
            time.sleep(0.05)

    until(checkpoint.is_file)  # running: it saves its start point first
    threads = [threading.Thread(target=writes, args=(served, scenario, 1000 * (t + 1), 250, 0.005)) for t in range(4)]
    for t in threads:
        t.start()
    until(lambda: json.loads(checkpoint.read_text())["after"])  # some pages applied
    follower.send_signal(signal.SIGKILL)  # mid-way: the writers are still writing
    follower.wait(30)
    assert any(t.is_alive() for t in threads), "the writes ended before the kill: nothing was mid-way"
    for t in threads:
        t.join()
    resumed = subprocess.run(reverse_command(scenario, dynamodb, served, "--until-caught-up", "--format", "json"),
                             capture_output=True, text=True, env=environment(), timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    report = json.loads(resumed.stdout)
    assert report["resumed"] and report["dead_letters"] == 0 and report["applied"] > 0
    assert by_key(scan(dynamodb, scenario.dynamo_table)) == by_key(scan(served, scenario.dynamo_table))

    # serve's own writes into Bigtable, stood in for by a forward replicate from serve's side
    forward = subprocess.run([*command(scenario, served, "--since", switch, "--until-caught-up"),
                              "--work-dir", str(tmp_path / "serve-writes")],  # the last --work-dir is the one taken
                             capture_output=True, text=True, env=environment(), timeout=300)
    assert forward.returncode == 0, forward.stderr
    assert differences(dynamodb, scenario) == []  # DynamoDB equals Bigtable item for item

    ready = cutover_reverse(scenario, dynamodb, served, "--format", "json")
    assert ready.returncode == 0, ready.stdout + ready.stderr
    verdict = json.loads(ready.stdout)
    assert verdict["ready"] and verdict["checked"] == verdict["matches"] == 500, verdict
    assert verdict["lag"].startswith("caught up at") and verdict["missing_in_dynamodb"] == []

    gone = {(i["year"]["N"], i["title"]["S"]) for i in scan(dynamodb, scenario.dynamo_table)[::3]}
    for year, title in gone:  # a third of the items lost on the way back
        db.delete_item(TableName=scenario.dynamo_table, Key={"year": {"N": year}, "title": {"S": title}})
    found = cutover_reverse(scenario, dynamodb, served, "--format", "json")
    assert found.returncode == 1, found.stdout + found.stderr
    named = {(m["key"]["year"]["N"], m["key"]["title"]["S"]) for m in json.loads(found.stdout)["missing_in_dynamodb"]}
    assert named and named <= gone
    text = cutover_reverse(scenario, dynamodb, served).stdout
    assert "item(s) missing in DynamoDB" in text and "  missing in DynamoDB: year=" in text
