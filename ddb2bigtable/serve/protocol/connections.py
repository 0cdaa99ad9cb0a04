"""Connections as a public server must hold them: one framing per request, every read
bounded in time, a cap on open connections per worker.

uvicorn's h11 protocol (the one installed: no httptools) bounds a header's size (h11's 16 KB
incomplete-event limit, answered 400) and closes a keep-alive connection idle for
`timeout_keep_alive`, but it waits forever for a request that never comes: a connection
that sends nothing, half a header, or 1 byte of a promised body stays open, and enough of
them hold every file descriptor a worker has (issue 43 left twenty such open 90 s). So:

- `GuardedH11Protocol` gives each request `header_seconds` from its first byte (from the
  connection's opening for the first) to complete its headers and `body_seconds` from
  then to complete its body, deadlines fixed at the start so a client trickling one byte
  at a time gains nothing; past one the connection is closed (the application, waiting
  for the body, sees a disconnect and writes nothing);
- past `max_connections` open connections in a worker, a new one closes the connection
  that has waited longest for a request (or for the rest of one), so slow clients cannot
  crowd out a working one; only when every open connection has a request being answered
  is the new one closed;
- `one_framing` refuses a request that carries both Content-Length and Transfer-Encoding
  (h11 frames it by Transfer-Encoding, as RFC 9112 6.3 lets a server do, but a proxy in
  front that frames it by Content-Length sees another request boundary: request
  smuggling) with a 400 and `Connection: close`, before its body is read, as DynamoDB
  Local's Jetty refuses it.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from ..errors import ServeError
from .app import CONTENT_TYPE, from_environment
from .limits import Guard

WORKER_STARTUP_SECONDS = 60  # a worker's time to import, plan the stage and answer the supervisor's first ping


class ServeConfig(uvicorn.Config):
    """uvicorn's settings with the guard's (pickled whole into each worker process). uvicorn's
    supervisor kills a worker that does not answer its health check within 5 s by default,
    and a worker busy starting (imports, the stage's plan) on a loaded machine missed it and
    was started again, forever: `--workers 2` never listened on this project's 2-core test
    machine at a load of 10 (2026-11-29); WORKER_STARTUP_SECONDS gives it a minute.
    uvicorn's ProxyHeadersMiddleware is off: it rewrites the client address and scheme from
    X-Forwarded-* headers, which serve never reads, on every request (issue 54)."""

    def __init__(self, app: str, guard: Guard, **settings: Any):
        super().__init__(app, http=GuardedH11Protocol, timeout_keep_alive=guard.idle_seconds,
                         timeout_worker_healthcheck=WORKER_STARTUP_SECONDS, proxy_headers=False, **settings)
        self.guard = guard


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with read deadlines and the connection cap (module doc)."""

    def __init__(self, config: uvicorn.Config, server_state: Any, app_state: dict[str, Any],
                 _loop: asyncio.AbstractEventLoop | None = None):
        super().__init__(config, server_state, app_state, _loop)
        self.guard: Guard = getattr(config, "guard", Guard())
        self.deadline: asyncio.TimerHandle | None = None
        self.reading = ""  # "headers" or "body" while a deadline runs
        self.waiting_since = time.monotonic()

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm("headers", self.guard.header_seconds)
        if len(self.connections) > self.guard.max_connections:
            _make_room(self)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.transport.is_closing():
            return
        state = self.conn.their_state
        if state is h11.IDLE and not self.reading:  # the first byte of the next request on a kept-alive connection
            self.waiting_since = time.monotonic()
            self._arm("headers", self.guard.header_seconds)
        elif state is h11.SEND_BODY and self.reading != "body":
            self._arm("body", self.guard.body_seconds)
        elif state not in (h11.IDLE, h11.SEND_BODY):  # the whole request is in: the application answers it
            self._disarm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def waiting(self) -> bool:
        """Waiting for a request or the rest of one: nothing of this connection is being answered."""
        return self.conn.their_state in (h11.IDLE, h11.SEND_BODY) and not self.transport.is_closing()

    def _arm(self, reading: str, seconds: float) -> None:
        self._disarm()
        self.reading = reading
        self.deadline = self.loop.call_later(seconds, self.transport.close)

    def _disarm(self) -> None:
        if self.deadline is not None:
            self.deadline.cancel()
        self.deadline, self.reading = None, ""


def _make_room(newest: GuardedH11Protocol) -> None:
    """Close the connection that has waited longest for its request; the newest one itself
    when every other is being answered."""
    waiting = [c for c in newest.connections if isinstance(c, GuardedH11Protocol) and c is not newest and c.waiting()]
    oldest = min(waiting, key=lambda c: c.waiting_since, default=newest)
    oldest.transport.close()


def one_framing(app: Any) -> Any:
    """The ASGI application behind a refusal of requests framed two ways (module doc)."""

    async def framed(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            names = {name.lower() for name, _ in scope.get("headers", [])}
            if b"content-length" in names and b"transfer-encoding" in names:
                error = ServeError("SerializationException", "a request may carry Content-Length or "
                                   "Transfer-Encoding, not both (RFC 9112, 6.3)")
                payload = json.dumps(error.body()).encode()
                await send({"type": "http.response.start", "status": 400, "headers": [
                    (b"content-type", CONTENT_TYPE), (b"content-length", str(len(payload)).encode()),
                    (b"connection", b"close")]})
                await send({"type": "http.response.body", "body": payload})
                return
        await app(scope, receive, send)

    return framed


def application() -> Any:
    """uvicorn's factory in each worker: the serve application behind `one_framing`."""
    return one_framing(from_environment())
