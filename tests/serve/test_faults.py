"""Faults around `serve`: Bigtable out of reach, and a worker process killed. Each leaves the
table as DynamoDB would: a request either happened whole or not at all, and the endpoint
answers again once the fault is gone."""

from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest
from botocore.exceptions import ClientError

from ddb2bigtable.bigtable.emulator import stop_process

from ..tcp_proxy import TcpProxy
from .conftest import STAGE, Served, start_serve

KEY = {"pk": {"S": "fault"}, "sk": {"N": "1"}}


@pytest.mark.slow
def test_bigtable_out_of_reach_is_a_quick_500_and_nothing_half_written(served, monkeypatch):
    host, port = os.environ["BIGTABLE_EMULATOR_HOST"].rsplit(":", 1)
    proxy = TcpProxy(host, int(port))
    monkeypatch.setenv("BIGTABLE_EMULATOR_HOST", proxy.address)
    process, endpoint = start_serve(served.root, STAGE)
    try:
        client = Served(served.root, endpoint, process).client()
        client.put_item(TableName="Scratch", Item={**KEY, "v": {"S": "before"}})
        proxy.refuse = True
        proxy.drop()
        started = time.monotonic()
        with pytest.raises(ClientError) as caught:
            client.put_item(TableName="Scratch", Item={**KEY, "v": {"S": "during"}})
        assert caught.value.response["Error"]["Code"] == "InternalServerError"
        assert "Bigtable" in caught.value.response["Error"]["Message"]
        assert time.monotonic() - started < 30  # the deadlines, not the client's 600 s
        proxy.refuse = False
        for _ in range(30):  # the client reconnects on its own
            try:
                item = client.get_item(TableName="Scratch", Key=KEY, ConsistentRead=True)["Item"]
                break
            except ClientError:
                time.sleep(1)
        assert item["v"] == {"S": "before"}  # the failed put wrote nothing
        client.put_item(TableName="Scratch", Item={**KEY, "v": {"S": "after"}})
        assert client.get_item(TableName="Scratch", Key=KEY)["Item"]["v"] == {"S": "after"}
    finally:
        stop_process(process)
        proxy.close()


def _workers(pid: int) -> list[int]:
    """The worker processes of the serve we started: its children by parent PID, without
    multiprocessing's resource tracker."""
    out = subprocess.run(["ps", "-ww", "-o", "pid=,args=", "--ppid", str(pid)], capture_output=True, text=True, timeout=10)
    return [int(line.split()[0]) for line in out.stdout.splitlines() if "spawn_main" in line]


@pytest.mark.slow
def test_a_killed_worker_is_replaced_and_acknowledged_writes_stay(served):
    process, endpoint = start_serve(served.root, STAGE, "--workers", "2")
    try:
        client = Served(served.root, endpoint, process).client(retries={"max_attempts": 10, "mode": "standard"})
        for n in range(20):
            client.put_item(TableName="Scratch", Item={"pk": {"S": "killed"}, "sk": {"N": str(n)}})
        workers = _workers(process.pid)
        assert len(workers) == 2
        os.kill(workers[0], signal.SIGKILL)
        for n in range(20, 40):  # new connections: some to the surviving worker, then to its replacement
            Served(served.root, endpoint, process).client(retries={"max_attempts": 10, "mode": "standard"}) \
                .put_item(TableName="Scratch", Item={"pk": {"S": "killed"}, "sk": {"N": str(n)}})
        found = client.query(TableName="Scratch", KeyConditionExpression="pk = :p",
                             ExpressionAttributeValues={":p": {"S": "killed"}})
        assert [int(i["sk"]["N"]) for i in found["Items"]] == list(range(40))
        # uvicorn's supervisor looks every 0.5 s but pings each live worker first (up to 5 s
        # each); on a loaded machine a busy worker answers late, so give it a minute
        deadline = time.monotonic() + 60
        while len([w for w in _workers(process.pid) if w not in workers]) < 1 and time.monotonic() < deadline:
            time.sleep(0.5)
        assert [w for w in _workers(process.pid) if w not in workers], (
            f"uvicorn did not replace the killed worker; serve's log ends:\n"
            f"{(served.root / 'serve.log').read_text(errors='replace')[-3000:]}")
    finally:
        stop_process(process)
