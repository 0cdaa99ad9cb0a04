"""The rollback drill of issue #52, end to end with serve itself: a table loaded from its
export and caught up by forward replication, then the write switch: the application writes
through serve (10,000 writes from 4 threads, boto3 on its defaults) while `replicate
--reverse` follows serve's own stream back into the source DynamoDB table; the reverse
replicator is killed with SIGKILL mid-way and resumed; at the end DynamoDB Local equals
Bigtable item for item (nothing lost, nothing doubled), with no dead letter.

tests/replicate/test_reverse_cli.py is the same drill with a second DynamoDB Local standing
in for serve; this one needs serve's write path to write each item's stream record in the
same row mutation (docs/streams.md).
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.config import Config

from ddb2bigtable.bigtable.emulator import free_port, stop_process, wait_for_port

from ..conftest import ROOT
from .scenario import create, differences, export_and_load
from .test_replicate_cli import command, environment, writes

pytestmark = pytest.mark.slow

THREADS, WRITES = 4, 10_000


class Serve:
    """serve over the scenario's spec on the local stage, on a free port, its log in `log`."""

    def __init__(self, spec_file: Path, log: Path):
        port = free_port()
        self.endpoint = f"http://127.0.0.1:{port}"
        self.log = log
        with open(log, "ab") as out:
            self.process = subprocess.Popen([sys.executable, "-m", "ddb2bigtable", "serve", str(spec_file), "--stage",
                                             "local", "--root", str(ROOT), "--port", str(port)],
                                            stdout=out, stderr=out, env=environment())
        try:
            wait_for_port("127.0.0.1", port, 60.0, self.process, "serve")
        except Exception as error:
            stop_process(self.process)
            raise AssertionError(f"serve did not start: {log.read_text()}") from error

    def client(self, service: str = "dynamodb") -> Any:
        return boto3.client(service, endpoint_url=self.endpoint, region_name="us-west-2",
                            aws_access_key_id="local", aws_secret_access_key="local",
                            config=Config(connect_timeout=5, read_timeout=60))


def writes_in(first: int, count: int) -> int:
    """How many requests `writes` sends for items first..first+count (a put each, an update of
    every second, a delete of every fifth)."""
    return sum(1 + i % 2 + (i % 5 == 0) for i in range(first, first + count))


def test_writes_through_serve_come_back_to_dynamodb_through_a_killed_and_resumed_reverse_replicator(
        dynamodb, bigtable_emulator, tmp_path, monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "local")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "local")
    scenario = create(dynamodb, tmp_path, served_stream="new_and_old_images")
    writes(dynamodb, scenario, 0, 200)
    export = export_and_load(dynamodb, scenario, tmp_path)
    writes(dynamodb, scenario, 200, 100)
    forward = subprocess.run(command(scenario, dynamodb, "--since", str(export), "--until-caught-up"),
                             capture_output=True, text=True, env=environment(), timeout=300)
    assert forward.returncode == 0, forward.stderr
    assert differences(dynamodb, scenario) == []  # caught up before the switch

    serve = Serve(scenario.spec_file, tmp_path / "serve.log")
    try:
        assert serve.client().describe_table(TableName=scenario.dynamo_table)["Table"]["LatestStreamArn"]
        time.sleep(0.01)
        switch = datetime.now(UTC).isoformat()
        reverse = command(scenario, dynamodb, "--reverse", "--stream-endpoint-url", serve.endpoint)
        follower = subprocess.Popen([*reverse, "--since", switch, "--follow"], env=environment(),
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        checkpoint = scenario.work_dir / "replicate-reverse.json"

        def until(condition, seconds: float = 120) -> None:
            deadline = time.monotonic() + seconds
            while time.monotonic() < deadline and not condition():
                time.sleep(0.05)

        until(checkpoint.is_file)  # running: it saves its start point first
        share = -(-WRITES * 10 // 17 // THREADS)  # items per thread, about 1.7 writes an item
        firsts = [10_000 * (t + 1) for t in range(THREADS)]
        assert sum(writes_in(f, share) for f in firsts) >= WRITES
        failures: list[BaseException] = []

        def write(first: int) -> None:
            try:
                writes(serve, scenario, first, share)
            except BaseException as error:  # noqa: BLE001 - reported by the test, not lost in a thread
                failures.append(error)

        threads = [threading.Thread(target=write, args=(f,)) for f in firsts]
        for t in threads:
            t.start()
        until(lambda: json.loads(checkpoint.read_text()).get("after"))  # some pages applied
        follower.send_signal(signal.SIGKILL)  # mid-way: the writers are still writing
        follower.wait(30)
        assert any(t.is_alive() for t in threads), "the writes ended before the kill: nothing was mid-way"
        for t in threads:
            t.join()
        assert failures == []
        resumed = subprocess.run([*reverse, "--until-caught-up", "--format", "json"], capture_output=True, text=True,
                                 env=environment(), timeout=600)  # from its checkpoint
        assert resumed.returncode == 0, resumed.stderr
        report = json.loads(resumed.stdout)
        assert report["resumed"] and report["dead_letters"] == 0 and report["applied"] > 0, report
        assert differences(dynamodb, scenario) == []  # DynamoDB equals Bigtable item for item
    finally:
        stop_process(serve.process)
