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
- nothing else: the suite's fixtures create their tables through serve's CreateTable, as
  against DynamoDB (serve creates tables on emulator stages; docs/serve.md).
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator
from typing import Any

import pytest

LOG_ENV, TIMEOUT_ENV = "CONFORMANCE_LOG", "CONFORMANCE_TIMEOUT"
SUITE_CONFTEST = "test.alternator.conftest"


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
    fixtures above replace its own."""
    if getattr(plugin, "__name__", "") != SUITE_CONFTEST:
        return
    plugin.dynamodb_test_connection = dynamodb_test_connection  # type: ignore[attr-defined]
    plugin.optional_rest_api = optional_rest_api  # type: ignore[attr-defined]


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
