"""Property: whatever a client sends, serve never answers 5xx and a refused write leaves the
item as it was. Requests are generated from botocore's model of DynamoDB, valid and
mutated (model_requests.py), for every operation serve answers, and go through the whole
ASGI application in this process (JSON, the edge checks, the operation, the Bigtable
emulator), a few milliseconds each. CI runs a bounded number of examples;
benchmarks/serve_fuzz.py runs the same property for as long as it is given (FUZZ_MINUTES:
each operation in turn for its share, with fresh random examples, counting requests)."""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .model_requests import KEY, OPERATIONS, WRITES, request

EXAMPLES = 120  # per operation: about 40 s for all of them on two cores
FUZZ_MINUTES = float(os.environ.get("DDB2BIGTABLE_FUZZ_MINUTES", "0"))  # benchmarks/serve_fuzz.py's long run
SENT: dict[str, int] = {"requests": 0}


class InProcess:
    """The served stage's ServeApp with a live session, answering ASGI calls in one loop."""

    def __init__(self, root: Any):
        from google.cloud.bigtable.data import BigtableDataClientAsync

        from ddb2bigtable.cli.serve_cmd import _tables
        from ddb2bigtable.serve.catalog import catalog
        from ddb2bigtable.serve.protocol.app import ServeApp
        from ddb2bigtable.serve.session import Session

        from ..conftest import STAGE

        project, types, _ = _tables(root, STAGE)
        tables = catalog(root, STAGE, types, project)
        self.loop = asyncio.new_event_loop()
        self.app = ServeApp(lambda: tables)

        async def opened() -> Any:
            return BigtableDataClientAsync(project=project)
        self.client = self.loop.run_until_complete(opened())
        self.app.session = Session(tables, self.client)

    def call(self, operation: str, body: bytes) -> tuple[int, dict[str, Any]]:
        scope = {"type": "http", "method": "POST", "path": "/", "query_string": b"",
                 "headers": [(b"x-amz-target", f"DynamoDB_20120810.{operation}".encode()),
                             (b"content-type", b"application/x-amz-json-1.0")]}
        sent: list[dict[str, Any]] = []

        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": body, "more_body": False}

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        self.loop.run_until_complete(self.app(scope, receive, send))
        payload = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
        return sent[0]["status"], json.loads(payload)

    def item(self) -> Any:
        """Scratch's item at KEY as a consistent read sees it."""
        status, answer = self.call("GetItem", json.dumps({"TableName": "Scratch", "Key": KEY,
                                                          "ConsistentRead": True}).encode())
        assert status == 200, answer
        return answer.get("Item")

    def close(self) -> None:
        self.call("DeleteTable", b'{"TableName": "FuzzMade"}')
        self.loop.run_until_complete(self.client.close())
        self.loop.close()


def check(serve: InProcess, operation: str, body: dict[str, Any]) -> int:
    """The property for one request; its status."""
    try:
        raw = json.dumps(body).encode()
    except (ValueError, RecursionError):  # a float the JSON text cannot write: no request to send
        return 0
    before = serve.item() if operation in WRITES else None
    status, answer = serve.call(operation, raw)
    SENT["requests"] += 1
    assert status < 500, (operation, body, answer)
    if status != 200 and operation in WRITES:
        assert serve.item() == before, (operation, body, answer)
    return status


@pytest.fixture(scope="module")
def serve(served) -> Iterator[InProcess]:
    made = InProcess(served.root)
    made.call("PutItem", json.dumps({"TableName": "Scratch", "Item": {**KEY, "l": {"L": [{"N": "1"}]}}}).encode())
    yield made
    made.call("DeleteItem", json.dumps({"TableName": "Scratch", "Key": KEY}).encode())
    made.close()


@pytest.mark.parametrize("operation", OPERATIONS)
def test_no_request_from_the_model_gets_a_5xx_or_a_partial_write(serve, operation):
    @settings(max_examples=EXAMPLES if not FUZZ_MINUTES else 1_000, deadline=None, database=None,
              derandomize=not FUZZ_MINUTES, suppress_health_check=list(HealthCheck))
    @given(body=request(operation))
    def holds(body: dict[str, Any]) -> None:
        check(serve, operation, body)

    until = time.monotonic() + FUZZ_MINUTES * 60 / len(OPERATIONS)
    holds()
    while time.monotonic() < until:
        holds()
    if FUZZ_MINUTES:
        print(f"{operation}: {SENT['requests']:,} requests so far, 0 5xx", flush=True)


def test_the_generator_reaches_both_answers(serve):
    """Both sides of the property are exercised: some generated writes succeed, some are refused."""
    seen: set[int] = set()

    @settings(max_examples=60, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(body=st.one_of(request("PutItem"), request("UpdateItem")))
    def collect(body: dict[str, Any]) -> None:
        seen.add(check(serve, "PutItem" if "Item" in body else "UpdateItem", body))

    collect()
    assert {200, 400} <= seen, seen
