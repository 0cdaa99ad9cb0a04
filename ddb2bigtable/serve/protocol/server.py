"""Running the endpoint: uvicorn, one or more worker processes, on a loopback address by
default.

uvicorn (a well-kept ASGI server, pinned in pyproject.toml) runs the application; with
`workers` above 1 its supervisor spawns that many processes sharing one listening socket
and replaces one that dies. Each imports the application through `app.from_environment`,
which reads the settings this process put in the environment (a spawned worker inherits
nothing else): the project root, the stage, the Bigtable project and each table's
recorded attribute types, as plain JSON.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from collections.abc import Callable
from pathlib import Path

from ...codec.type_inference import AttributeTypes
from ...spec.errors import InputError, Problem
from .app import CONFIG_ENV

LOOPBACK = "127.0.0.1"
QUIET = "ignore:Connecting to Bigtable emulator:RuntimeWarning"
APP = "ddb2bigtable.serve.protocol.app:from_environment"
STARTUP_FAILURE = 3  # uvicorn's exit status when the application does not start


def run(root: Path, stage: str, project: str, types: dict[str, AttributeTypes], *, host: str = LOOPBACK,
        port: int = 8000, workers: int = 1, listening: Callable[[], None] = lambda: None) -> None:
    """Serve until interrupted (Ctrl-C or SIGTERM: uvicorn finishes open requests first);
    `listening` is called once the port is bound."""
    import uvicorn
    from uvicorn.supervisors import Multiprocess

    os.environ[CONFIG_ENV] = json.dumps({"root": str(root), "stage": stage, "project": project, "types": types})
    # The client warns "Connecting to Bigtable emulator" in every worker; the user set the variable.
    os.environ["PYTHONWARNINGS"] = ",".join(filter(None, [os.environ.get("PYTHONWARNINGS"), QUIET]))
    config = uvicorn.Config(APP, factory=True, host=host, port=port, workers=workers, log_level="warning",
                            access_log=False, timeout_graceful_shutdown=10, lifespan="on")
    sock = listening_socket(host, port)
    listening()
    if workers > 1:
        Multiprocess(config, sockets=[sock]).run()
        return
    server = uvicorn.Server(config)
    server.run(sockets=[sock])
    if not server.started:
        sys.exit(STARTUP_FAILURE)


def listening_socket(host: str, port: int) -> socket.socket:
    """The listening socket, as uvicorn binds it but created as TCP by protocol number.
    asyncio turns Nagle's algorithm off (TCP_NODELAY) only on connections accepted from a
    socket whose `proto` is IPPROTO_TCP, and uvicorn's own `socket.socket(family)` has proto
    0: with it every response of `--workers 2` waited for the client's delayed ACK, 48 ms a
    GetItem instead of 8 (measured one after another on the emulator, 2026-11-25)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as error:
        sock.close()
        raise InputError([Problem.about("--port", "", f"cannot listen on {host}:{port}: {error.strerror}; "
                                        f"pick another --port or --host")]) from None
    sock.set_inheritable(True)
    return sock
