"""Local stand-ins for AWS endpoints that the tests start on 127.0.0.1 and a free port
and stop by PID: DynamoDB Local (replicate/dynamodb_local.py) and moto's server
(sources/moto_server.py). What they share: the process, its endpoint, boto3 clients
with fake credentials, and a start that fails with what to do."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, TypeVar

from ddb2bigtable.load.emulator import EmulatorError, stop_process, wait_for_port

S = TypeVar("S", bound="LocalServer")


@dataclass
class LocalServer:
    """A server process this test session started and must stop."""

    port: int
    process: subprocess.Popen[bytes]
    region: ClassVar[str] = "us-east-1"  # its clients' region unless told

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def client(self, service: str = "dynamodb", region: str | None = None):
        import boto3

        return boto3.client(service, endpoint_url=self.endpoint, region_name=region or self.region,
                            aws_access_key_id="local", aws_secret_access_key="local")

    def stop(self) -> None:
        stop_process(self.process)


def launch(kind: type[S], name: str, command: list[str], port: int, timeout: float, why_not: str,
           cwd: Path | None = None) -> S:
    """`command` started and listening on 127.0.0.1:`port` within `timeout`, or stopped
    and a RuntimeError naming the server and ending with `why_not` (what to check or install)."""
    process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    running = kind(port, process)
    try:
        wait_for_port("127.0.0.1", port, timeout)
    except EmulatorError:
        running.stop()
        raise RuntimeError(f"{name} did not listen on 127.0.0.1:{port} within "
                           f"{timeout:.0f} s (exit status {process.poll()}): {why_not}") from None
    return running
