"""`import aws://...` of a table in DynamoDB Local sends nothing to AWS (issue 43, finding 6):
with no endpoint given for CloudWatch and Application Auto Scaling, neither is asked, and
the import says which. Every proxy variable points at a listener that records whatever
would leave for another host (an AWS name included) and refuses it, so a request to
amazonaws.com cannot pass unseen."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import boto3
import pytest
from botocore.config import Config
from click.testing import CliRunner

from ddb2bigtable.cli.app import main

pytestmark = pytest.mark.slow  # DynamoDB Local per session

REGION = "us-east-1"


class Trap:
    """A proxy on 127.0.0.1 that records each request's first line and closes the connection."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.seen: list[str] = []
        self.open = True
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def _serve(self) -> None:
        while self.open:
            try:
                connection, _ = self.sock.accept()
            except TimeoutError:
                continue
            with connection:
                connection.settimeout(5)
                try:
                    self.seen.append(connection.recv(4096).split(b"\r\n", 1)[0].decode("latin-1"))
                    connection.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                except OSError:
                    pass

    def close(self) -> None:
        self.open = False
        self.thread.join()
        self.sock.close()


@pytest.fixture
def trap(aws_env) -> Iterator[Trap]:
    trapped = Trap()
    for name in ("HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy", "ALL_PROXY", "all_proxy"):
        aws_env.setenv(name, trapped.url)
    for name in ("NO_PROXY", "no_proxy"):
        aws_env.setenv(name, "127.0.0.1,localhost")  # DynamoDB Local, and nothing else, is reached directly
    yield trapped
    trapped.close()


def test_the_trap_sees_a_request_for_aws(trap):
    client = boto3.client("cloudwatch", region_name=REGION,
                          config=Config(retries={"max_attempts": 1}, connect_timeout=5, read_timeout=5))
    with pytest.raises(Exception):  # noqa: B017, PT011 - the trap refuses: any failure will do
        client.list_metrics()
    assert any("monitoring.us-east-1.amazonaws.com" in line for line in trap.seen), trap.seen


def test_a_local_table_is_imported_without_asking_aws(tmp_path, trap, dynamodb_local_server):
    ddb = dynamodb_local_server.client(region=REGION)
    ddb.create_table(TableName="Music", BillingMode="PROVISIONED",
                     AttributeDefinitions=[{"AttributeName": "Artist", "AttributeType": "S"}],
                     KeySchema=[{"AttributeName": "Artist", "KeyType": "HASH"}],
                     ProvisionedThroughput={"ReadCapacityUnits": 5, "WriteCapacityUnits": 5})
    out = tmp_path / "music.yaml"
    result = CliRunner().invoke(main, ["import", f"aws://{REGION}/Music", "--endpoint-url",
                                       dynamodb_local_server.endpoint, "--instance", "music-local", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert trap.seen == []  # nothing left for AWS, nor for any other host
    assert "table: Music" in out.read_text()
    for service, variable in (("cloudwatch", "AWS_ENDPOINT_URL_CLOUDWATCH"),
                              ("application-autoscaling", "AWS_ENDPOINT_URL_APPLICATION_AUTO_SCALING")):
        assert f"{service} was not asked" in result.stderr and variable in result.stderr
