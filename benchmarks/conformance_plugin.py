"""A pytest plugin loaded into the conformance suite's own pytest process
(benchmarks/serve_conformance.py runs it with `-p conformance_plugin`); it changes no file
of the suite, only what the runner must control:

- every test's outcome as one JSON line in `$CONFORMANCE_LOG`, written as it happens, so a
  run stopped half-way still counts what it ran;
- a per-test time limit (`$CONFORMANCE_TIMEOUT` seconds, SIGALRM in setup, call and
  teardown each): a hung request fails its test instead of the run;
- the suite's after-each-test health check (an HTTP GET on the endpoint, which DynamoDB
  Local answers 400) replaced by a ListTables with a timeout, and its probe of Scylla's
  REST API port replaced by "none";
- with `$CONFORMANCE_POOL` (serve only): `create_test_table` of a table with only a key
  schema hands out a table planned beforehand with that key schema (emptied first), and
  its `delete()` gives it back, because serve creates no new tables (docs/serve.md "Not
  done yet"). A table asked for with anything else (indexes, streams) goes to CreateTable.
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator
from typing import Any

import boto3
import pytest

LOG_ENV, TIMEOUT_ENV, POOL_ENV = "CONFORMANCE_LOG", "CONFORMANCE_TIMEOUT", "CONFORMANCE_POOL"
SUITE_CONFTEST, SUITE_UTIL = "test.alternator.conftest", "test.alternator.util"
POOLABLE = {"KeySchema", "AttributeDefinitions", "BillingMode", "Tags"}  # Tags: Scylla's write-isolation tag


def key_signature(key_schema: list[dict], definitions: list[dict]) -> str:
    """`p:S:HASH,c:N:RANGE`: what a pool table must match (the runner plans tables by it)."""
    types = {d["AttributeName"]: d["AttributeType"] for d in definitions}
    return ",".join(f"{k['AttributeName']}:{types.get(k['AttributeName'], '?')}:{k['KeyType']}" for k in key_schema)


class Pool:
    """Tables planned for the run, by key signature; which ones a fixture holds now."""

    def __init__(self, tables: dict[str, str]) -> None:
        self.free = dict(tables)  # name -> key signature
        self.original: Any = None

    def create_test_table(self, dynamodb: Any, **kwargs: Any) -> Any:
        if set(kwargs) - POOLABLE:
            return self.original(dynamodb, **kwargs)
        wanted = key_signature(kwargs.get("KeySchema", []), kwargs.get("AttributeDefinitions", []))
        name = next((n for n, sig in sorted(self.free.items()) if sig == wanted), None)
        if name is None:
            return self.original(dynamodb, **kwargs)
        del self.free[name]
        table = dynamodb.Table(name)
        _empty(table, [k["AttributeName"] for k in kwargs["KeySchema"]])
        table.delete = lambda: self.free.__setitem__(name, wanted)
        return table


def _empty(table: Any, keys: list[str]) -> None:
    """Every item of a pool table deleted: each fixture starts from an empty table, as after CreateTable.
    Through a plain client (DynamoDB JSON as it comes), not the Table's: boto3's resource
    API reads numbers at 38 digits and raises decimal.Rounded on a key such as
    -9.99999999E+125, which DynamoDB (and serve) return in its 126 digits and test_number.py
    leaves in the pool's numeric tables (boto/boto3#2500)."""
    meta = table.meta.client.meta
    client = boto3.client("dynamodb", endpoint_url=meta.endpoint_url, region_name=meta.region_name, config=meta.config)
    names = {f"#k{i}": k for i, k in enumerate(keys)}
    start: dict[str, Any] = {}
    while True:
        page = client.scan(TableName=table.name, ProjectionExpression=", ".join(names), ExpressionAttributeNames=names,
                           ConsistentRead=True, **start)
        for i in range(0, len(page["Items"]), 25):
            pending: dict[str, Any] = {table.name: [{"DeleteRequest": {"Key": k}} for k in page["Items"][i:i + 25]]}
            while pending:
                pending = client.batch_write_item(RequestItems=pending).get("UnprocessedItems") or {}
        if "LastEvaluatedKey" not in page:
            return
        start = {"ExclusiveStartKey": page["LastEvaluatedKey"]}


@pytest.fixture(scope="function", autouse=True)
def dynamodb_test_connection(dynamodb: Any, request: pytest.FixtureRequest) -> Iterator[None]:
    """After each test, the endpoint still answers (ListTables), else the run stops there.
    The client's event hooks are put back first: the suite's `client_no_transform` removes
    them and, when its test fails inside it, never restores them, which would fail every
    later test of the file for a reason that is not theirs."""
    events = dynamodb.meta.client.meta.events
    yield
    dynamodb.meta.client.meta.events = events
    try:
        dynamodb.meta.client.list_tables(Limit=1)
    except Exception as error:  # noqa: BLE001 (any failure here means the endpoint is gone)
        pytest.exit(f"the endpoint stopped answering after {request.node.nodeid}: {error}")


@pytest.fixture(scope="session")
def optional_rest_api(dynamodb: Any) -> None:
    """No Scylla REST API: neither DynamoDB Local nor serve has one."""
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_plugin_registered(plugin: object, manager: object) -> None:
    """The suite's conftest, as it registers and before its fixtures are read: the two
    fixtures above replace its own, and the pool (if any) wraps `create_test_table`."""
    if getattr(plugin, "__name__", "") != SUITE_CONFTEST:
        return
    plugin.dynamodb_test_connection = dynamodb_test_connection  # type: ignore[attr-defined]
    plugin.optional_rest_api = optional_rest_api  # type: ignore[attr-defined]
    pool_tables = os.environ.get(POOL_ENV)
    if pool_tables:
        import importlib

        util = importlib.import_module(SUITE_UTIL)
        pool = Pool(json.loads(pool_tables))
        pool.original = util.create_test_table
        util.create_test_table = pool.create_test_table  # type: ignore[attr-defined]
        plugin.create_test_table = pool.create_test_table  # type: ignore[attr-defined]


class TestTimeout(Exception):
    """A test phase ran past $CONFORMANCE_TIMEOUT."""


def _alarm(signum: int, frame: object) -> None:
    raise TestTimeout(f"timed out after {os.environ.get(TIMEOUT_ENV)} s")


def pytest_configure(config: pytest.Config) -> None:
    signal.signal(signal.SIGALRM, _alarm)


def _limited() -> Iterator[None]:
    signal.alarm(int(os.environ.get(TIMEOUT_ENV, "60")))
    try:
        return (yield)
    finally:
        signal.alarm(0)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    return (yield from _limited())


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    return (yield from _limited())


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: object) -> Iterator[None]:
    return (yield from _limited())


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """One line per phase that decides an outcome: a failed or skipped setup, the call, a failed teardown."""
    if report.when == "call" or report.outcome != "passed":
        message = ""
        if report.longrepr is not None:
            crash = getattr(report.longrepr, "reprcrash", None)
            message = crash.message if crash is not None else str(report.longrepr)
        line = {"nodeid": report.nodeid, "when": report.when, "outcome": report.outcome,
                "xfail": hasattr(report, "wasxfail"), "message": message[:600]}
        with open(os.environ[LOG_ENV], "a", encoding="utf-8") as log:
            log.write(json.dumps(line) + "\n")
