"""`cutover check --through URL` against endpoints that are not a working serve (#29's rules):
one that accepts TCP and never answers, one that answers HTML with 200, one that answers
BatchGetItem with items of garbage types. Each ends in bounded time with exit 1 (a service)
in one line naming the endpoint, its user-info hidden, and never says ready."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from ddb2bigtable.bigtable.emulator import free_port

from ..local_servers import LocalServer, html_server, launch, silent_server
from ..replicate.conftest import dynamodb  # noqa: F401  (a DynamoDB Local for this module)
from ..replicate.test_replicate_cli import environment
from .conftest import STAGE
from .test_cutover_through import live  # noqa: F401  (DynamoDB Local holding Movies)

# Answers every BatchGetItem of Movies with the items of argv[2] (JSON), which DynamoDB never sends.
_GARBAGE = ("import http.server, json, sys\nclass Api(http.server.BaseHTTPRequestHandler):\n"
            "    def do_POST(self):\n        self.rfile.read(int(self.headers.get('Content-Length', 0)))\n"
            "        body = json.dumps({'Responses': {'Movies': json.loads(sys.argv[2])}}).encode()\n"
            "        self.send_response(200)\n        self.send_header('Content-Type', 'application/x-amz-json-1.0')\n"
            "        self.send_header('Content-Length', str(len(body)))\n        self.end_headers()\n"
            "        self.wfile.write(body)\n    def log_message(self, *args):\n        pass\n"
            "http.server.HTTPServer(('127.0.0.1', int(sys.argv[1])), Api).serve_forever()\n")


# botocore's parser fails on these: a string where an item (a map) belongs, a map that is a string.
UNPARSABLE = ["not an item", {"year": {"N": "2013"}, "title": {"S": "Rush"}, "info": {"M": "no map"}}]
# botocore passes these on: a number that is none, too large, a type that does not exist,
# a key of the wrong type, a set that is empty, binary that is no base64.
BAD_VALUES = [{"year": {"N": "NaN-ish"}, "title": {"S": "x"}}, {"year": {"X": 1}, "title": {"S": 5}},
              {"year": {"N": "1e400"}, "title": {"B": "!!not base64"}}, {"year": {"SS": []}},
              {"year": {"N": "2013"}, "title": {"S": "Rush"}, "info": {"NULL": "yes"}, "rank": {"L": [{"Q": 1}]}}]


def _garbage_server(items: list) -> LocalServer:
    port = free_port()
    return launch(LocalServer, "the garbage-items server", [sys.executable, "-c", _GARBAGE, str(port),
                                                            json.dumps(items)], port, 10.0,
                  "it is a few lines of Python: run them by hand to see why")


def _check(root, dynamodb, through: str, *extra: str) -> subprocess.CompletedProcess:  # noqa: F811
    return subprocess.run([sys.executable, "-m", "ddb2bigtable", "cutover", "check", str(root / "specs" / "movies.yaml"),
                           "--table", "movies", "--stage", STAGE, "--root", str(root), "--sample", "20",
                           "--endpoint-url", dynamodb.endpoint, "--through", through, *extra],
                          capture_output=True, text=True, env=environment(), timeout=120)


def _with_password(endpoint: str) -> str:
    return endpoint.replace("http://", "http://admin:hunter2@")


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["silent", "html", "unparsable"])
def test_a_hostile_through_endpoint_is_exit_1_in_one_line_naming_it_without_its_password(live, served, kind):  # noqa: F811
    server = {"silent": silent_server, "html": html_server, "unparsable": lambda: _garbage_server(UNPARSABLE)}[kind]()
    try:
        started = time.monotonic()
        out = _check(served.root, live, _with_password(server.endpoint))
        seconds = time.monotonic() - started
    finally:
        server.stop()
    print(f"cutover check --through a {kind} endpoint: exit {out.returncode} after {seconds:.1f} s")
    assert out.returncode == 1, out.stdout + out.stderr
    assert "Traceback" not in out.stderr and "hunter2" not in out.stdout + out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and f"127.0.0.1:{server.port}" in lines[0], out.stderr
    assert seconds < 60


def test_the_report_names_a_through_endpoint_without_its_password(live, served):  # noqa: F811
    """A working serve reached with user-info in the URL: neither the table nor JSON output repeats it."""
    for fmt in ("text", "json"):
        out = _check(served.root, live, _with_password(served.endpoint), "--format", fmt)
        assert out.returncode in (0, 1) and "hunter2" not in out.stdout + out.stderr, out.stdout + out.stderr
        if fmt == "json":
            assert json.loads(out.stdout)["through"] == _with_password(served.endpoint).replace("admin:hunter2",
                                                                                                "***")


def test_items_of_garbage_types_through_the_endpoint_are_not_ready_never_a_traceback(live, served):  # noqa: F811
    server = _garbage_server(BAD_VALUES)
    try:
        out = _check(served.root, live, server.endpoint)
    finally:
        server.stop()
    assert out.returncode == 1 and "Traceback" not in out.stderr, out.stdout + out.stderr
    assert "verdict: ready" not in out.stdout and len(out.stderr.strip().splitlines()) <= 1, out.stdout + out.stderr
