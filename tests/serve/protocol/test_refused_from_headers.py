"""With key pairs configured, a request whose headers cannot carry a valid signature (no
Authorization, an unknown key, another region, a stale date, another Host, a session token
its key was not given) is refused from its headers, before serve reads its body (issue 50,
finding 7: 30 unauthenticated connections each sending 15 MB took serve from 126 MB to
585 MB); and a key configured with a session token answers only requests that carry it
(finding 8: a made-up `x-amz-security-token` was accepted and ignored)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path

import boto3
import botocore.auth
import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.config import Config
from botocore.credentials import Credentials
from botocore.exceptions import ClientError

from ddb2bigtable.bigtable.emulator import stop_process
from ddb2bigtable.serve.protocol.signatures import KEYS_ENV

from ..conftest import STAGE, Served, start_serve

KEY = ("AKIDEDGE0001", "edge-secret-1")
SESSION = ("ASIAEDGE0002", "edge-secret-2", "FwoGZXIvYXdzEXAMPLEtoken/+=")  # a temporary key's three parts
CONNECTIONS = 30
SENT = 15 * 1024 * 1024  # of a 16 MB body each connection promises
GROWTH = 50 * 1024 * 1024  # what serve may grow by while they send


@pytest.fixture(scope="module")
def keyed(served):
    process, endpoint = start_serve(served.root, STAGE, env={KEYS_ENV: f"{KEY[0]}:{KEY[1]},{':'.join(SESSION)}"})
    yield Served(served.root, endpoint, process)
    stop_process(process)


def _rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmRSS for process {pid}")


def _head(endpoint: str, how: str) -> bytes:
    """The request line and headers of a ListTables promising a 16 MB body, unsigned or
    signed in a way its headers already show to be wrong."""
    host = endpoint.removeprefix("http://")
    headers = {"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": "DynamoDB_20120810.ListTables"}
    if how != "unsigned":
        key, region, where = {"unknown key": (("AKIDNOBODY", "x"), "us-west-2", host),
                              "another region": (KEY, "eu-central-1", host),
                              "another host": (KEY, "us-west-2", "ddb.elsewhere.example")}[how]
        request = AWSRequest(method="POST", url=f"http://{where}/", data=b"{}", headers=headers)
        SigV4Auth(Credentials(*key), "dynamodb", region).add_auth(request)
        headers = {**dict(request.headers.items()), "Host": where}
    headers.setdefault("Host", host)
    lines = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    return f"POST / HTTP/1.1\r\n{lines}Content-Length: {16 * 1024 * 1024}\r\n\r\n".encode()


def test_bodies_of_refused_requests_are_not_held(keyed):
    host, port = keyed.endpoint.removeprefix("http://").split(":")
    client = keyed.client(KEY)
    client.list_tables()  # serve warmed up: its first answer's allocations are in the baseline
    before = _rss(keyed.process.pid)
    chunk = b"x" * (1024 * 1024)
    ways = ("unsigned", "unknown key", "another region", "another host")

    async def one(n: int) -> bytes:
        reader, writer = await asyncio.open_connection(host, int(port))
        writer.write(_head(keyed.endpoint, ways[n % len(ways)]))
        for _ in range(SENT // len(chunk)):
            writer.write(chunk)
            await writer.drain()
        return await _answer(reader, writer)

    async def _answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bytes:
        try:
            return await _response(reader, 5)
        except TimeoutError:
            return b"(no answer)"
        finally:
            grown.append(_rss(keyed.process.pid) - before)
            writer.close()

    async def scenario() -> list[bytes]:
        return await asyncio.gather(*(one(n) for n in range(CONNECTIONS)))

    grown: list[int] = []
    answers = asyncio.run(scenario())
    assert max(grown) <= GROWTH, f"serve grew by {max(grown) / 2**20:.0f} MB holding refused bodies"
    for n, answer in enumerate(answers):
        assert answer.startswith(b"HTTP/1.1 400 "), answer[:200]
        wanted = {"unsigned": b"MissingAuthenticationTokenException", "unknown key": b"UnrecognizedClientException",
                  "another region": b"InvalidSignatureException", "another host": b"InvalidSignatureException"}
        assert wanted[ways[n % len(ways)]] in answer
    assert "Movies" in client.list_tables()["TableNames"]  # still answering


async def _response(reader: asyncio.StreamReader, seconds: float) -> bytes:
    """The status line, headers and body of the answer on the connection, within `seconds`."""
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), seconds)
    length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:"))
    return head + await asyncio.wait_for(reader.readexactly(length), seconds)


def _client(keyed: Served, key_id: str, secret: str, token: str | None):
    """boto3 on its defaults (retries off, so a test sees the first answer)."""
    return boto3.client("dynamodb", endpoint_url=keyed.endpoint, region_name="us-west-2", aws_access_key_id=key_id,
                        aws_secret_access_key=secret, aws_session_token=token,
                        config=Config(retries={"max_attempts": 1, "mode": "standard"}, read_timeout=30))


def _code(call) -> str:
    with pytest.raises(ClientError) as caught:
        call()
    return caught.value.response["Error"]["Code"]


def test_a_key_with_a_session_token_answers_only_that_token(keyed):
    assert "Movies" in _client(keyed, *SESSION).list_tables()["TableNames"]
    for token in ("made-up", SESSION[2] + "x", None):
        assert _code(lambda t=token: _client(keyed, *SESSION[:2], t).list_tables()) == "UnrecognizedClientException"


def test_a_key_without_a_session_token_refuses_any(keyed):
    assert "Movies" in _client(keyed, *KEY, None).list_tables()["TableNames"]  # configurations of before
    for token in ("made-up", SESSION[2]):
        assert _code(lambda t=token: _client(keyed, *KEY, t).list_tables()) == "UnrecognizedClientException"


def test_a_stale_date_is_refused_from_the_headers(keyed, monkeypatch):
    """A request dated 20 minutes ago is refused with its body never read (a 16 MB promise
    answered at once)."""
    host = keyed.endpoint.removeprefix("http://")
    request = AWSRequest(method="POST", url=f"http://{host}/", data=b"{}",
                         headers={"Content-Type": "application/x-amz-json-1.0",
                                  "X-Amz-Target": "DynamoDB_20120810.ListTables"})
    stale_time = datetime.now(UTC).replace(tzinfo=None) - timedelta(minutes=20)
    monkeypatch.setattr(botocore.auth, "get_current_datetime", lambda: stale_time)
    SigV4Auth(Credentials(*KEY), "dynamodb", "us-west-2").add_auth(request)
    stale = request.headers["X-Amz-Date"]

    async def scenario() -> bytes:
        reader, writer = await asyncio.open_connection(*host.split(":"))
        lines = "".join(f"{k}: {v}\r\n" for k, v in request.headers.items() if k.lower() != "host")
        writer.write(f"POST / HTTP/1.1\r\nHost: {host}\r\n{lines}Content-Length: {16 * 1024 * 1024}\r\n\r\n".encode())
        await writer.drain()
        try:
            return await _response(reader, 10)
        finally:
            writer.close()

    answer = asyncio.run(scenario())
    assert answer.startswith(b"HTTP/1.1 400 ") and b"Signature expired" in answer and stale.encode() in answer
