"""moto in server mode (`moto[server]`, a dev dependency): Application Auto Scaling,
CloudWatch, and the DynamoDB calls DynamoDB Local lacks (tags, continuous backups), on
127.0.0.1 and a free port, started and stopped by its PID."""

from __future__ import annotations

import sys

from ddb2bigtable.bigtable.emulator import free_port

from ..local_servers import LocalServer, launch


class MotoServer(LocalServer):
    """A moto server this test session started and must stop."""


def start(timeout: float = 60.0) -> MotoServer:
    port = free_port()
    return launch(MotoServer, "moto", [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)], port,
                  timeout, "is moto[server] installed (`uv sync`)?")
