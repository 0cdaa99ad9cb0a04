"""Your own table, rehearsed end to end on the local servers: DynamoDB Local (every
attribute type, 500 items) -> `import` -> `export` -> `up --stage local SPEC --export DIR`
verifies every item; writes made while `export` scans are brought over by
`replicate --since DIR`, and `cutover check` then finds no difference."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from ..replicate import dynamodb_local
from .scan_tables import every_type_item, make_table

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def aws():
    """DynamoDB Local and moto (CloudWatch, Application Auto Scaling for `import`), as
    environment variables for the commands."""
    from ..sources import moto_server

    dynamodb, moto = dynamodb_local.start(), moto_server.start()
    yield dynamodb, {"AWS_ENDPOINT_URL_DYNAMODB": dynamodb.endpoint,
                     "AWS_ENDPOINT_URL_DYNAMODB_STREAMS": dynamodb.endpoint,
                     "AWS_ENDPOINT_URL_CLOUDWATCH": moto.endpoint,
                     "AWS_ENDPOINT_URL_APPLICATION_AUTO_SCALING": moto.endpoint,
                     "AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local"}
    moto.stop()
    dynamodb.stop()


def _project(tmp_path: Path) -> Path:
    for folder in ("specs", "stacks"):
        shutil.copytree(ROOT / folder, tmp_path / "project" / folder)
    return tmp_path / "project"


def _cli(env: dict[str, str], *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ddb2bigtable", *args], capture_output=True, text=True,
                          env={**os.environ, **env}, timeout=timeout, cwd=ROOT)


def _imported(env: dict[str, str], table: str, instance: str, spec: Path) -> str:
    """`import` the table into `spec`; the Bigtable table id it chose."""
    out = _cli(env, "import", f"aws://us-west-2/{table}", "--instance", instance, "-o", str(spec))
    assert out.returncode == 0, out.stderr
    (line,) = [line for line in spec.read_text().splitlines() if line.lstrip().startswith("- id:")]
    return line.split(":", 1)[1].split("#")[0].strip()


def test_import_export_up_verifies_every_item_of_every_type(aws, tmp_path):
    dynamodb, env = aws
    make_table(dynamodb.client(), "RehearsedEvery", 500)
    env = {k: v for k, v in {**env, "BIGTABLE_EMULATOR_HOST": ""}.items()}
    table_id = _imported(env, "RehearsedEvery", "rehearsed-every", tmp_path / "mine.yaml")
    exported = _cli(env, "export", "aws://us-west-2/RehearsedEvery", "-o", str(tmp_path / "exports" / table_id))
    assert exported.returncode == 0, exported.stderr
    project = _project(tmp_path)
    up = subprocess.run([sys.executable, "-m", "ddb2bigtable", "up", "--stage", "local", str(tmp_path / "mine.yaml"),
                         "--exports", str(tmp_path / "exports"), "--root", str(project), "--format", "json"],
                        capture_output=True, text=True, timeout=600, cwd=ROOT,
                        env={k: v for k, v in {**os.environ, **env}.items() if k != "BIGTABLE_EMULATOR_HOST"})
    assert up.returncode == 0, up.stderr
    report = json.loads(up.stdout)
    (load,), (verify,) = report["loads"], report["verifies"]
    assert load["table"] == table_id and load["loaded"] == 500 and load["dead_lettered"] == 0
    assert verify["ok"] and verify["checked"] == verify["matched"] == 500  # every item, decoded back equal


def test_writes_made_during_the_export_are_brought_over_by_replicate_since(aws, bigtable_emulator, tmp_path):
    dynamodb, env = aws
    env = {**env, "BIGTABLE_EMULATOR_HOST": bigtable_emulator.address}
    client = dynamodb.client()
    make_table(client, "RehearsedLive", 500, stream=True)
    table_id = _imported(env, "RehearsedLive", "rehearsed-live", tmp_path / "live.yaml")
    dest = tmp_path / "exports" / table_id
    export = subprocess.Popen([sys.executable, "-m", "ddb2bigtable", "export", "aws://us-west-2/RehearsedLive", "-o",
                               str(dest), "--segments", "2", "--items-per-file", "25", "--max-rcu", "4"],
                              env={**os.environ, **env}, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    while not (dest / ".ddb2bigtable-scan.json").exists() and export.poll() is None:
        time.sleep(0.05)
    time.sleep(1.0)  # the scan is under way
    for i in range(500, 520):  # new items, in any segment: some behind the scan, some ahead
        client.put_item(TableName="RehearsedLive", Item=every_type_item(i))
    for i in range(0, 500, 50):  # changed items
        client.update_item(TableName="RehearsedLive", Key={"pk": every_type_item(i)["pk"], "sk": {"N": str(i)}},
                           UpdateExpression="SET #n = :n", ExpressionAttributeNames={"#n": "name"},
                           ExpressionAttributeValues={":n": {"S": f"changed during the export {i}"}})
    client.delete_item(TableName="RehearsedLive", Key={"pk": every_type_item(7)["pk"], "sk": {"N": "7"}})
    assert export.wait(300) == 0, export.stderr.read() if export.stderr else ""
    assert export.stdout and b"exportTime is the scan's start" in export.stdout.read()

    project = _project(tmp_path)
    up = _cli(env, "up", "--stage", "local", str(tmp_path / "live.yaml"), "--exports", str(tmp_path / "exports"),
              "--root", str(project), "--format", "json")
    assert up.returncode == 0, up.stderr
    common = [str(tmp_path / "live.yaml"), "--table", table_id, "--stage", "local", "--root", str(project)]
    before = _cli(env, "cutover", "check", *common, "--format", "json")
    assert before.returncode == 1, before.stderr  # the export alone misses writes made while it scanned
    missed = json.loads(before.stdout)
    assert missed["checked"] - missed["matches"] > 0, missed

    stale = tmp_path / "stale"  # the same scan, as if it had begun 25 h ago
    shutil.copytree(dest, stale)
    (summary,) = stale.glob("AWSDynamoDB/*/manifest-summary.json")
    old = (datetime.now(UTC) - timedelta(hours=25)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    summary.write_text(json.dumps({**json.loads(summary.read_text()), "exportTime": old}))
    refused = _cli(env, "replicate", *common, "--since", str(stale), "--until-caught-up")
    # refused: the stream cannot reach back to it (here it did not exist yet; past 24 h it is trimmed)
    assert refused.returncode == 2 and "replicate within 24 h of its exportTime" in refused.stderr, refused.stderr

    replicated = _cli(env, "replicate", *common, "--since", str(dest), "--until-caught-up", "--format", "json")
    assert replicated.returncode == 0, replicated.stderr
    after = _cli(env, "cutover", "check", *common, "--format", "json")
    assert after.returncode == 0, after.stdout + after.stderr
    verdict = json.loads(after.stdout)
    assert verdict["ready"] and verdict["checked"] == verdict["matches"] == 519  # 500 + 20 new - 1 deleted
