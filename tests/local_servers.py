"""Local stand-ins for AWS endpoints that the tests start on 127.0.0.1 and a free port
and stop by PID: DynamoDB Local (replicate/dynamodb_local.py), moto's server
(sources/moto_server.py), and a server that accepts connections and never answers
(`silent_server`, for the timeouts). What they share: the process, its endpoint, boto3
clients with fake credentials, and a start that fails with what to do."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, TypeVar

from ddb2bigtable.bigtable.emulator import EmulatorError, free_port, stop_process, wait_for_port

S = TypeVar("S", bound="LocalServer")


def logged_tracebacks(text: str) -> list[str]:
    """Each Python traceback in a server's log, by the line that names what was raised (the
    first unindented line after its frames)."""
    found = []
    for part in text.split("Traceback (most recent call last):")[1:]:
        lines = [line for line in part.splitlines() if line and not line.startswith((" ", "\t"))]
        found.append(lines[0] if lines else "(empty traceback)")
    return found


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
        wait_for_port("127.0.0.1", port, timeout, process, name)
    except EmulatorError as error:
        running.stop()
        raise RuntimeError(f"{error}: {why_not}") from None
    return running


# Accepts every connection and holds it open without reading or writing a byte.
_SILENT = ("import socket, sys\nserver = socket.create_server(('127.0.0.1', int(sys.argv[1])))\nheld = []\n"
           "while True:\n    held.append(server.accept()[0])\n")


def silent_server(port: int | None = None) -> LocalServer:
    """A server on 127.0.0.1 that accepts TCP connections and never answers (a hung endpoint,
    a proxy whose backend is gone): a process of its own, stopped by PID with `stop()`; on
    `port` to take over an address clients already use."""
    port = port or free_port()
    return launch(LocalServer, "the silent TCP server", [sys.executable, "-c", _SILENT, str(port)], port, 10.0,
                  "it is a few lines of Python: run them by hand to see why")


# Answers every request with 200 and an HTML page (a captive portal, a proxy's error page).
_HTML = ("import http.server, sys\nclass Page(http.server.BaseHTTPRequestHandler):\n"
         "    def do_POST(self):\n        self.rfile.read(int(self.headers.get('Content-Length', 0)))\n"
         "        body = b'<html><body>Welcome</body></html>'\n        self.send_response(200)\n"
         "        self.send_header('Content-Type', 'text/html')\n"
         "        self.send_header('Content-Length', str(len(body)))\n        self.end_headers()\n"
         "        self.wfile.write(body)\n    do_GET = do_POST\n    def log_message(self, *args):\n        pass\n"
         "http.server.HTTPServer(('127.0.0.1', int(sys.argv[1])), Page).serve_forever()\n")


def html_server() -> LocalServer:
    """A server on 127.0.0.1 that answers every request 200 with an HTML page: an endpoint
    that is reachable but is not the API asked for. A process of its own, stopped by PID."""
    port = free_port()
    return launch(LocalServer, "the HTML server", [sys.executable, "-c", _HTML, str(port)], port, 10.0,
                  "it is a few lines of Python: run them by hand to see why")
