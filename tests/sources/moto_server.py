"""moto in server mode (`moto[server]`, a dev dependency): Application Auto Scaling,
CloudWatch, and the DynamoDB calls DynamoDB Local lacks (tags, continuous backups), on
127.0.0.1 and a free port, started and stopped by its PID."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass

from ddb2bigtable.load.emulator import EmulatorError, free_port, stop_process, wait_for_port


@dataclass
class MotoServer:
    """A moto server this test session started and must stop."""

    port: int
    process: subprocess.Popen[bytes]

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def client(self, service: str, region: str = "us-east-1"):
        import boto3

        return boto3.client(service, endpoint_url=self.endpoint, region_name=region,
                            aws_access_key_id="local", aws_secret_access_key="local")

    def stop(self) -> None:
        stop_process(self.process)


def start(timeout: float = 60.0) -> MotoServer:
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    running = MotoServer(port, process)
    try:
        wait_for_port("127.0.0.1", port, timeout)
    except EmulatorError:
        running.stop()
        raise RuntimeError(f"moto did not listen on 127.0.0.1:{port} within {timeout:.0f} s (exit status "
                           f"{process.poll()}): is moto[server] installed (`uv sync`)?") from None
    return running
