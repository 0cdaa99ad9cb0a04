"""The ASGI application: DynamoDB's JSON 1.0 protocol in, an operation, JSON out.

A request is `POST /` with `X-Amz-Target: DynamoDB_20120810.<Operation>` and a JSON body
(`application/x-amz-json-1.0`); the answer is the operation's JSON, or an error in
DynamoDB's shape (errors.py). Each worker process builds its catalog and one Bigtable
data client at startup (ASGI lifespan) and closes the client at shutdown.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import traceback
import uuid
import zlib
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import orjson

from .. import point_calls
from ..catalog import Catalog, catalog
from ..errors import ServeError, internal, validation
from ..items import batch_ops, item_ops, lock_sweep, transact_ops
from ..queries import query_ops
from ..session import Session
from ..streams import stream_ops
from ..tables import admin_ops, created_tables, ttl_ops, types_record
from ..transactions import behind
from ..wire import check_text, nesting_refused, wire_default
from . import admin_requests, batch_requests, item_requests, query_requests, shapes, signatures, transact_requests

TARGET_PREFIX = "DynamoDB_20120810."
CONTENT_TYPE = b"application/x-amz-json-1.0"
MAX_BODY = 16 * 1024 * 1024  # DynamoDB's largest request (BatchWriteItem): 16 MB
# A larger answer (a Query page reaches 1 MB) goes out in pieces of this size with chunked
# transfer encoding, as DynamoDB Local 1.25.1 streams a large answer (the suite's
# test_batch_write_item_large_broken_connection breaks such a stream half-way)
CHUNK = 64 * 1024
DRAIN_SECONDS = 5.0  # at shutdown, the wait for committed transactions' last steps (a few calls each)
CONFIG_ENV = "DDB2BIGTABLE_SERVE_CONFIG"  # how `serve` hands its settings to worker processes
Parse = Callable[[Catalog, dict[str, Any]], Any]  # a body -> the operation's typed request (requests.py)
Run = Callable[[Session, Any], Awaitable[dict[str, Any]]]


OPERATIONS: dict[str, tuple[Parse, Run]] = {
    "GetItem": (item_requests.get_item, item_ops.get_item), "PutItem": (item_requests.put_item, item_ops.put_item),
    "DeleteItem": (item_requests.delete_item, item_ops.delete_item),
    "UpdateItem": (item_requests.update_item, item_ops.update_item),
    "Query": (query_requests.query, query_ops.query), "Scan": (query_requests.scan, query_ops.scan),
    "BatchGetItem": (batch_requests.batch_get_item, batch_ops.batch_get_item),
    "BatchWriteItem": (batch_requests.batch_write_item, batch_ops.batch_write_item),
    "TransactGetItems": (transact_requests.transact_get_items, transact_ops.transact_get_items),
    "TransactWriteItems": (transact_requests.transact_write_items, transact_ops.transact_write_items),
    "DescribeTable": (admin_requests.describe_table, admin_ops.describe_table),
    "ListTables": (admin_requests.list_tables, admin_ops.list_tables),
    "CreateTable": (admin_requests.create_table, admin_ops.create_table),
    "DeleteTable": (admin_requests.delete_table, admin_ops.delete_table),
    "UpdateTable": (admin_requests.update_table, admin_ops.update_table),
    "DescribeTimeToLive": (admin_requests.describe_time_to_live, ttl_ops.describe_time_to_live),
    "UpdateTimeToLive": (admin_requests.update_time_to_live, ttl_ops.update_time_to_live),
}


def operation(name: str) -> Callable[[Session, dict[str, Any]], Awaitable[dict[str, Any]]]:
    """The operation as the protocol answers it: its body parsed into its request, then run
    (tests answer requests in process through it)."""
    parse, run = OPERATIONS[name]

    async def answered(session: Session, body: dict[str, Any]) -> dict[str, Any]:
        return await run(session, parse(session.catalog, body))
    return answered


log = logging.getLogger("ddb2bigtable.serve")


class ServeApp:
    """One worker's application; `build` makes its catalog at startup."""

    def __init__(self, build: Callable[[], Catalog], signing: signatures.Signing | None = None,
                 sweep_seconds: float | None = None):
        self.build = build
        self.signing = signing  # what every request must be signed with (signatures.py); None: unsigned
        self.sweep_seconds = sweep_seconds  # the transaction sweep's interval (lock_sweep.py); None: no sweep
        self.session: Session | None = None
        self.sweeping: asyncio.Task[None] | None = None

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
        elif scope["type"] == "http":
            status, body = await self._answer(scope, receive)
            payload = _payload(body)
            headers = [(b"content-type", CONTENT_TYPE), (b"x-amzn-requestid", str(uuid.uuid4()).encode()),
                       (b"x-amz-crc32", str(zlib.crc32(payload)).encode())]
            if len(payload) <= CHUNK:
                headers.append((b"content-length", str(len(payload)).encode()))
            await send({"type": "http.response.start", "status": status, "headers": headers})
            for start in range(0, len(payload), CHUNK) if len(payload) > CHUNK else (0,):
                await send({"type": "http.response.body", "body": payload[start:start + CHUNK],
                            "more_body": start + CHUNK < len(payload)})

    async def _lifespan(self, receive: Any, send: Any) -> None:
        from google.cloud.bigtable.data import BigtableDataClientAsync

        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    built = self.build()
                    self.session = Session(built, BigtableDataClientAsync(project=built.project))
                except Exception as error:  # noqa: BLE001 - the server refuses to start, saying why
                    await send({"type": "lifespan.startup.failed", "message": str(error)})
                    return
                if self.sweep_seconds is not None:
                    self.sweeping = asyncio.create_task(lock_sweep.sweep_forever(self.session, self.sweep_seconds))
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                if self.sweeping is not None:
                    self.sweeping.cancel()
                await behind.drain(DRAIN_SECONDS)  # committed transactions' last steps, before the client closes
                if self.session is not None:
                    await point_calls.close(self.session.client)
                    await self.session.client.close()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _answer(self, scope: dict[str, Any], receive: Any) -> tuple[int, dict[str, Any]]:
        try:
            # before anything else is said about the request, and before its body is read: a
            # client without a key makes serve hold nothing (docs/security.md)
            claim = None if self.signing is None else signatures.admitted(self.signing, scope.get("headers", []))
            headers, raw = await _request(scope, receive)
            if claim is not None:  # the signature itself covers the body
                query = scope.get("query_string", b"").decode("latin-1")
                path = scope.get("path", "/") + (f"?{query}" if query else "")
                signatures.proven(claim, scope.get("method", ""), path, raw)
            (name, (parse, run)), body = _operation(scope, headers), _json(raw)
            shapes.check(name, body)
            if self.session is None:
                raise internal("the server is still starting")
            await created_tables.resolve(self.session, body)  # tables CreateTable made, in any worker
            await types_record.refresh_stale(self.session)  # types recorded since a row failed to decode
            return 200, await run(self.session, parse(self.session.catalog, body))
        except ServeError as error:
            return error.status, error.body()
        except Exception:  # noqa: BLE001 - a fault of serve itself: DynamoDB's 500, logged with its cause
            log.error("request failed:\n%s", traceback.format_exc())
            return 500, internal("ddb2bigtable serve failed on this request; its log has the cause").body()


async def _request(scope: dict[str, Any], receive: Any) -> tuple[dict[str, str], bytes]:
    """The headers (lower-case names) and the body as sent."""
    headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
    declared = headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY:
        raise _too_large()
    chunks, size = [], 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":  # closed mid-body (connections.py's deadlines): nothing is done
            raise ServeError("SerializationException", "the connection closed before the request's body was complete")
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY:
            raise _too_large()
        chunks.append(chunk)
        if not message.get("more_body"):
            break
    return headers, b"".join(chunks)


def _too_large() -> ServeError:
    """HTTP 413, as DynamoDB answers a request over 16 MB (DynamoDB Local 1.25.1 too), told
    from the Content-Length before the body is read when the client sends one."""
    return ServeError("RequestEntityTooLarge", "the request is larger than DynamoDB's 16 MB limit", status=413)


def _operation(scope: dict[str, Any], headers: dict[str, str]) -> tuple[str, tuple[Parse, Run]]:
    if scope.get("method") != "POST":
        raise validation("DynamoDB requests are HTTP POST")
    target = headers.get("x-amz-target", "")
    if target.startswith(stream_ops.TARGET_PREFIX):  # DynamoDB Streams, same endpoint and signing (docs/streams.md)
        name, operations = target.removeprefix(stream_ops.TARGET_PREFIX), stream_ops.OPERATIONS
    elif target.startswith(TARGET_PREFIX):
        name, operations = target.removeprefix(TARGET_PREFIX), OPERATIONS
    else:
        raise ServeError("UnknownOperationException", f"no DynamoDB operation in X-Amz-Target {target!r}")
    operation = operations.get(name)
    if operation is None:
        raise ServeError("UnknownOperationException", f"{name} is not an operation ddb2bigtable serve offers")
    return name, operation


def _payload(body: dict[str, Any]) -> bytes:
    """The answer as JSON. orjson writes a page of items or stream records about ten times
    faster than the stdlib (an 814-record GetRecords: ~30 ms -> 3 ms); what it refuses (an
    integer past 64 bits, a string holding half a surrogate pair) the stdlib writes. Binary
    is written as base64 by both (wire.wire_default): items are answered as the codec holds them."""
    try:
        return orjson.dumps(body, default=wire_default)
    except TypeError:
        return json.dumps(body, separators=(",", ":"), default=wire_default).encode()


# a \uD800-\uDFFF escape, perhaps half of a pair, or one written as UTF-8 bytes (json.loads
# reads bytes with "surrogatepass")
_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]|\xed[\xa0-\xbf]")


def _json(raw: bytes) -> dict[str, Any]:
    """The body as JSON. Nesting deeper than Python's parser goes is deeper than any request
    DynamoDB takes (attribute values nest 32 levels), so it is refused as DynamoDB refuses
    such an item; a string holding half a UTF-16 surrogate pair, which no UTF-8 text (what
    DynamoDB and Bigtable store) can hold, is refused wherever it is (wire.check_text), looked
    for only when the body escapes a surrogate at all."""
    try:
        body = json.loads(raw or b"{}")
    except RecursionError:
        raise nesting_refused() from None
    except (ValueError, UnicodeDecodeError):
        raise ServeError("SerializationException", "the request body is not valid JSON") from None
    if not isinstance(body, dict):
        raise ServeError("SerializationException", "the request body must be a JSON object")
    if _SURROGATE.search(raw):
        check_text(body)
    return body


def from_environment() -> ServeApp:
    """The worker's application, from the settings `serve` put in CONFIG_ENV (uvicorn's
    factory: each worker process calls it)."""
    settings = json.loads(os.environ[CONFIG_ENV])
    keys = os.environ.get(signatures.KEYS_ENV)
    signing = signatures.Signing(signatures.parse_keys(keys), frozenset(settings["regions"]),
                                 frozenset(settings["hosts"]), signatures.parse_tokens(keys)) if keys else None
    return ServeApp(lambda: catalog(Path(settings["root"]), settings["stage"], settings["types"],
                                    settings["project"], settings.get("specs", ())), signing,
                     settings.get("sweep_seconds", lock_sweep.SWEEP_SECONDS))
