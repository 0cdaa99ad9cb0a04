"""`cutover check --max-lag` through the CLI against DynamoDB Local and the Bigtable
emulator: the same table and the same replication lag (replicate caught up 2 minutes ago)
is not ready under the default 60 s or a smaller limit, ready under a larger one, and the
verdict names the limit used; a bad value is exit 2 without a traceback."""

from __future__ import annotations

import json
import time

from ddb2bigtable.load.state import target
from ddb2bigtable.replicate.checkpoint import CHECKPOINT, Checkpoint, save_checkpoint
from ddb2bigtable.replicate.stream import StreamReader

from .scenario import PROJECT, create, export_and_load
from .test_cutover import cutover_check
from .test_replicate_emulator import credentials, movie


def test_the_max_lag_decides_the_verdict_on_the_same_state(dynamodb, bigtable_emulator, tmp_path, monkeypatch):
    credentials(monkeypatch)
    scenario = create(dynamodb, tmp_path)
    for i in range(5):
        dynamodb.client().put_item(TableName=scenario.dynamo_table, Item=movie(1990 + i, f"Film {i}"))
    export_and_load(dynamodb, scenario, tmp_path)  # Bigtable holds every item: only the lag can stand in the way
    where = target(PROJECT, scenario.instance_id, scenario.table.id)
    arn = StreamReader(scenario.dynamo_table, "us-west-2", dynamodb.endpoint).stream().arn  # the table's stream
    save_checkpoint(scenario.work_dir / CHECKPOINT,
                    Checkpoint(arn, where, 0, caught_up_micros=time.time_ns() // 1000 - 120_000_000))

    default = cutover_check(scenario, dynamodb, "--sample", "10")
    assert default.returncode == 1, default.stdout + default.stderr
    assert "limit 60 s (--max-lag)" in default.stdout and "is not under 60 s" in default.stdout

    tight = cutover_check(scenario, dynamodb, "--sample", "10", "--max-lag", "30", "--format", "json")
    assert tight.returncode == 1, tight.stdout + tight.stderr
    report = json.loads(tight.stdout)
    assert not report["ready"] and report["lag_limit_seconds"] == 30 and report["matches"] == 5
    assert report["reasons"] == [f"replication lag {report['lag_seconds']:,.1f} s is not under 30 s"]

    loose = cutover_check(scenario, dynamodb, "--sample", "10", "--max-lag", "600")
    assert loose.returncode == 0, loose.stdout + loose.stderr
    assert "limit 600 s (--max-lag)" in loose.stdout
    assert "verdict: ready (0 differences in the sample, lag under the 600 s limit)" in loose.stdout


def test_a_bad_max_lag_is_exit_2_with_a_message(dynamodb, bigtable_emulator, tmp_path):
    scenario = create(dynamodb, tmp_path)
    export_and_load(dynamodb, scenario, tmp_path)
    for value, says in [("0", "--max-lag: must be a number of seconds above 0, not 0"),
                        ("-1", "--max-lag: must be a number of seconds above 0, not -1"),
                        ("soon", "'soon' is not a valid float")]:
        out = cutover_check(scenario, dynamodb, "--max-lag", value)
        assert out.returncode == 2 and says in out.stderr and "Traceback" not in out.stderr, out.stderr
