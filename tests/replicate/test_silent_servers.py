"""`replicate` and `cutover check` against an endpoint that accepts TCP connections and
never answers (a hung server, a proxy whose backend is gone), as a user runs them: each
ends in the documented, bounded time with exit 1, what to do and no traceback. The silent
server is a process of its own on 127.0.0.1 (tests/local_servers.py), stopped by PID.

Bounds (spec/aws_endpoints.py, bigtable/deadlines.py): an AWS call ends one read timeout
(10 s) after a silent DynamoDB took its request; a Bigtable lookup after 30 s, a
replicate page's writes after 30 s; `--outage-limit N` ends a run within N seconds plus
one of those. SLACK covers the CLI's start (imports, the plan) on a busy machine.
"""

from __future__ import annotations

import subprocess
import time

import pytest

from ddb2bigtable.bigtable.deadlines import READ_SECONDS, REPLICATE_WRITE_SECONDS
from ddb2bigtable.bigtable.emulator import EMULATOR_ENV
from ddb2bigtable.spec.aws_endpoints import READ_TIMEOUT_SECONDS

from ..local_servers import silent_server
from ..tcp_proxy import TcpProxy
from .scenario import create, export_and_load
from .test_cutover import cutover_check
from .test_replicate_cli import replicate, writes

pytestmark = pytest.mark.slow
SLACK = 20.0  # seconds: the CLI's start and end on a shared 2-core machine (2 s idle, 10 s seen busy)


@pytest.fixture(scope="module")
def silent():
    server = silent_server()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def loaded(dynamodb, bigtable_emulator, tmp_path_factory):
    """A table in DynamoDB Local with writes after its export, the export loaded through a
    proxy to the emulator; then the proxy gives its port to a silent server (the address
    the load recorded, now a Bigtable that never answers): (scenario, export, {env})."""
    proxy = TcpProxy("127.0.0.1", bigtable_emulator.port)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(EMULATOR_ENV, proxy.address)
        scenario = create(dynamodb, tmp_path_factory.mktemp("silent"))
        writes(dynamodb, scenario, 0, 5)
        export = export_and_load(dynamodb, scenario, scenario.spec_file.parent)
        writes(dynamodb, scenario, 5, 10)
    proxy.close()
    bigtable = silent_server(proxy.port)
    yield scenario, export, {EMULATOR_ENV: proxy.address}
    bigtable.stop()


def timed(run) -> tuple[subprocess.CompletedProcess, float]:
    began = time.monotonic()
    out = run()
    return out, time.monotonic() - began


def said_what_to_do(out: subprocess.CompletedProcess, *words: str) -> None:
    assert out.returncode == 1, out.stdout + out.stderr
    assert "Traceback" not in out.stderr, out.stderr
    for word in words:
        assert word in out.stderr, out.stderr


def test_cutover_check_against_a_silent_dynamodb_ends_after_one_read_timeout(loaded, silent):
    scenario, _, env = loaded
    out, seconds = timed(lambda: cutover_check(scenario, silent, "--sample", "10", env=env))
    said_what_to_do(out, f"did not answer within {READ_TIMEOUT_SECONDS:g} s", "running and reachable")
    assert seconds < READ_TIMEOUT_SECONDS + SLACK, seconds
    print(f"cutover check, silent DynamoDB: exit 1 after {seconds:.1f} s")


def test_cutover_check_against_a_silent_bigtable_ends_after_one_lookup_deadline(loaded, dynamodb):
    scenario, _, env = loaded
    out, seconds = timed(lambda: cutover_check(scenario, dynamodb, "--sample", "10", env=env))
    said_what_to_do(out, "Bigtable table", f"did not answer within {READ_SECONDS:g} s", "rerun")
    assert seconds < READ_SECONDS + SLACK, seconds
    print(f"cutover check, silent Bigtable: exit 1 after {seconds:.1f} s")


def test_replicate_outage_limit_ends_a_silent_dynamodb_within_the_limit_and_one_read_timeout(loaded, silent):
    scenario, export, env = loaded
    for limit in (5, 25):  # the first failed call ends past 5 s; 25 s needs tries after pauses
        out, seconds = timed(lambda limit=limit: replicate(scenario, silent, "--since", str(export),
                                                           "--outage-limit", str(limit), **env))
        said_what_to_do(out, f"did not answer within {READ_TIMEOUT_SECONDS:g} s", "gave up after", "rerun")
        assert limit <= seconds < limit + READ_TIMEOUT_SECONDS + SLACK, (limit, seconds)
        print(f"replicate --outage-limit {limit}, silent DynamoDB: exit 1 after {seconds:.1f} s")


def test_replicate_outage_limit_ends_a_silent_bigtable_within_the_limit_and_one_write_deadline(loaded, dynamodb):
    scenario, export, env = loaded
    out, seconds = timed(lambda: replicate(scenario, dynamodb, "--since", str(export), "--outage-limit", "5", **env))
    said_what_to_do(out, "Bigtable table", "gave up after", "rerun")
    assert seconds < 5 + REPLICATE_WRITE_SECONDS + SLACK, seconds
    print(f"replicate --outage-limit 5, silent Bigtable: exit 1 after {seconds:.1f} s")
