"""serve as a public server (issue 43, finding 2), through raw sockets: a request framed two
ways is refused and its connection closed; 2,000 slow connections (nothing sent, half a
header, 1 byte of a promised body) neither delay a GetItem nor outlive the read deadlines;
past the connection cap the connection waiting longest goes, not the working one."""

from __future__ import annotations

import asyncio
import socket
import time

import pytest

from ddb2bigtable.bigtable.emulator import stop_process

from ..conftest import STAGE, Served, start_serve

KEY = {"year": {"N": "2013"}, "title": {"S": "Rush"}}
DEADLINE = 2  # seconds: --header-timeout, --body-timeout and --idle-timeout of the server under test
BODY = b'{"TableName": "Movies", "Key": {"year": {"N": "2013"}, "title": {"S": "Rush"}}}'
HEAD = (b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-amz-json-1.0\r\n"
        b"X-Amz-Target: DynamoDB_20120810.GetItem\r\n")


@pytest.fixture(scope="module")
def short(served):
    """serve with 2-second read deadlines and room for 2,500 connections."""
    process, endpoint = start_serve(served.root, STAGE, "--header-timeout", str(DEADLINE), "--body-timeout",
                                    str(DEADLINE), "--idle-timeout", str(DEADLINE), "--max-connections", "2500")
    yield Served(served.root, endpoint, process)
    stop_process(process)


def _address(endpoint: str) -> tuple[str, int]:
    host, port = endpoint.removeprefix("http://").split(":")
    return host, int(port)


def _exchange(endpoint: str, request: bytes) -> bytes:
    """Everything the server sends back until it closes the connection (10 s at most)."""
    with socket.create_connection(_address(endpoint), timeout=10) as sock:
        sock.sendall(request)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    return answer


def test_content_length_with_transfer_encoding_is_refused_and_closed(short):
    smuggled = b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Amz-Target: DynamoDB_20120810.ListTables\r\n\r\n"
    chunked = b"0\r\n\r\n" + smuggled
    answer = _exchange(short.endpoint, HEAD + b"Content-Length: %d\r\nTransfer-Encoding: chunked\r\n\r\n"
                       % len(chunked) + chunked)
    assert answer.startswith(b"HTTP/1.1 400 "), answer
    assert b"connection: close" in answer.lower() and b"not both" in answer
    assert answer.count(b"HTTP/1.1 ") == 1  # the request hidden in the body was never answered
    normal = _exchange(short.endpoint, HEAD + b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(BODY) + BODY)
    assert normal.startswith(b"HTTP/1.1 200 ") and b"Rush" in normal


async def _slow(endpoint: str, count: int) -> list[tuple[asyncio.StreamReader, asyncio.StreamWriter]]:
    """`count` connections, a third sending nothing, a third half a header, a third its
    headers and 1 byte of a promised 100,000-byte body."""
    host, port = _address(endpoint)
    opened = []
    for n in range(count):
        reader, writer = await asyncio.open_connection(host, port)
        writer.write([b"", HEAD[:40], HEAD + b"Content-Length: 100000\r\n\r\n{"][n % 3])
        opened.append((reader, writer))
    await asyncio.gather(*(w.drain() for _, w in opened))
    return opened


async def _closed_by_server(reader: asyncio.StreamReader, seconds: float) -> bool:
    try:
        while await asyncio.wait_for(reader.read(65536), seconds):
            pass  # a 4xx written before the close is fine; the close is what counts
    except TimeoutError:
        return False
    except ConnectionError:
        pass
    return True


def test_slow_connections_neither_delay_a_request_nor_stay_open(short):
    client = short.client()
    client.get_item(TableName="Movies", Key=KEY)  # the client's connection pool warmed

    async def scenario() -> tuple[float, int, float]:
        opened = await _slow(short.endpoint, 2000)
        started = time.monotonic()
        answer = await asyncio.to_thread(client.get_item, TableName="Movies", Key=KEY)
        took = time.monotonic() - started
        assert answer["Item"]["title"] == {"S": "Rush"}
        # every deadline runs from the connection's opening or its headers: 2 + 2 s at most
        closed = await asyncio.gather(*(_closed_by_server(r, 2 * DEADLINE + 4) for r, _ in opened))
        for _, writer in opened:
            writer.close()
        return took, sum(closed), time.monotonic() - started

    took, closed, waited = asyncio.run(scenario())
    assert took < 1.0, f"a GetItem beside 2,000 slow connections took {took:.2f} s"
    assert closed == 2000, f"{2000 - closed} slow connections were still open after {waited:.1f} s"
    assert client.get_item(TableName="Movies", Key=KEY)["Item"]["title"] == {"S": "Rush"}


def test_past_the_cap_the_longest_waiting_connection_goes(served):
    process, endpoint = start_serve(served.root, STAGE, "--max-connections", "20")
    try:
        async def scenario() -> tuple[list[bool], bytes]:
            opened = await _slow(endpoint, 30)  # default deadlines (10 s): only the cap closes them now
            closed = await asyncio.gather(*(_closed_by_server(r, 1.0) for r, _ in opened))
            working = await asyncio.to_thread(_exchange, endpoint, HEAD + b"Content-Length: %d\r\n"
                                              b"Connection: close\r\n\r\n" % len(BODY) + BODY)
            for _, writer in opened:
                writer.close()
            return closed, working

        closed, working = asyncio.run(scenario())
    finally:
        stop_process(process)
    assert closed == [True] * 10 + [False] * 20  # the ten opened first went
    assert working.startswith(b"HTTP/1.1 200 ") and b"Rush" in working
