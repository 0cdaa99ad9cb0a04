"""`import aws://REGION/TABLE` against endpoints that accept TCP connections and never answer
(a hung server, a proxy whose backend is gone): exit 1 in a bounded time that says what to
do, no traceback. boto3's defaults (60 s to read, 5 attempts here before) held an import
for minutes; each call now ends one read timeout after a silent endpoint took it
(spec/aws_endpoints.py). The silent server is a process of its own, stopped by PID."""

from __future__ import annotations

import time

import pytest
from click.testing import CliRunner

from ddb2bigtable.cli.app import main
from ddb2bigtable.spec.aws_endpoints import READ_TIMEOUT_SECONDS

from ...local_servers import silent_server
from .test_aws_live import REGION, make_orders

pytestmark = pytest.mark.slow
SLACK = 8.0  # seconds: the import's own work on a shared 2-core machine


@pytest.fixture(scope="module")
def silent():
    server = silent_server()
    yield server
    server.stop()


def imported(*args: str) -> tuple[object, float]:
    began = time.monotonic()
    result = CliRunner().invoke(main, ["import", *args])
    return result, time.monotonic() - began


def test_a_silent_dynamodb_ends_the_import_after_one_read_timeout(aws_env, silent):
    result, seconds = imported(f"aws://{REGION}/Orders", "--instance", "shop-prod", "--endpoint-url",
                               silent.endpoint)
    assert result.exit_code == 1, result.output
    assert f"DescribeTable Orders: no answer within {READ_TIMEOUT_SECONDS:g} s" in result.output
    assert "running and reachable" in result.output and "Traceback" not in result.output
    assert seconds < READ_TIMEOUT_SECONDS + SLACK, seconds
    print(f"import, silent DynamoDB: exit 1 after {seconds:.1f} s")


def test_a_silent_metrics_endpoint_ends_the_import_after_one_read_timeout(aws_env, silent, dynamodb_local_server):
    """DynamoDB answers; CloudWatch and Application Auto Scaling (`--metrics-endpoint-url`) never do."""
    client = dynamodb_local_server.client(region=REGION)
    make_orders(client, "SilentMetrics")
    try:
        result, seconds = imported(f"aws://{REGION}/SilentMetrics", "--instance", "shop-prod", "--endpoint-url",
                                   dynamodb_local_server.endpoint, "--metrics-endpoint-url", silent.endpoint)
    finally:  # the server is the session's: test_aws_live imports every table of the region
        client.update_table(TableName="SilentMetrics", DeletionProtectionEnabled=False)  # make_orders protects it
        client.delete_table(TableName="SilentMetrics")
    assert result.exit_code == 1, result.output
    assert f"no answer within {READ_TIMEOUT_SECONDS:g} s" in result.output and "Traceback" not in result.output
    assert "--metrics-endpoint-url" in result.output
    assert seconds < READ_TIMEOUT_SECONDS + SLACK, seconds
    print(f"import, silent metrics endpoint: exit 1 after {seconds:.1f} s")
