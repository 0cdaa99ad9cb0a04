"""Running the endpoint: uvicorn, one or more worker processes, on a loopback address by
default.

uvicorn (a well-kept ASGI server, pinned in pyproject.toml) runs the application; with
`workers` above 1 its supervisor spawns that many processes sharing one listening socket
and replaces one that dies. Each imports the application through `app.from_environment`,
which reads the settings this process put in the environment (a spawned worker inherits
nothing else): the project root, the stage, the spec files served instead of the stage's
list (`serve --stage S SPEC...`), the Bigtable project, each table's recorded attribute
types, and what a signature must be scoped to (regions, hosts), as plain JSON.
Connections are held as connections.py says (read deadlines, a cap per worker).
"""

from __future__ import annotations

import json
import os
import resource
import socket
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from ...codec.type_inference import AttributeTypes
from ...spec.errors import InputError, Problem
from .app import CONFIG_ENV
from .connections import ServeConfig
from .limits import Exposure

LOOPBACK = "127.0.0.1"
QUIET = "ignore:Connecting to Bigtable emulator:RuntimeWarning"
APP = "ddb2bigtable.serve.protocol.connections:application"
EXPOSURE = Exposure()  # loopback use: no signature scope (unsigned), the default limits
SPARE_FILES = 64  # descriptors a worker needs besides its connections (Bigtable channels, logs, modules)
STARTUP_FAILURE = 3  # uvicorn's exit status when the application does not start


def run(root: Path, stage: str, project: str, types: dict[str, AttributeTypes], *, host: str = LOOPBACK,  # noqa: PLR0913
        port: int = 8000, workers: int = 1, exposure: Exposure = EXPOSURE,
        listening: Callable[[], None] = lambda: None, sweep_seconds: float | None = None,
        given: Sequence[str] = ()) -> None:
    """Serve until interrupted (Ctrl-C or SIGTERM: uvicorn finishes open requests first);
    a signature must be scoped to one of the exposure's regions and hosts (signatures.py);
    `listening` is called once the port is bound; each worker sweeps transaction locks every
    `sweep_seconds` (None: the default, lock_sweep.SWEEP_SECONDS) and serves the `given`
    spec files (absolute paths) instead of the stage's list, when there are any."""
    import uvicorn
    from uvicorn.supervisors import Multiprocess

    os.environ[CONFIG_ENV] = json.dumps({"root": str(root), "stage": stage, "specs": list(given),
                                         "project": project, "types": types,
                                         "regions": sorted(exposure.regions), "hosts": sorted(exposure.hosts),
                                         **({"sweep_seconds": sweep_seconds} if sweep_seconds else {})})
    # The client warns "Connecting to Bigtable emulator" in every worker; the user set the variable.
    os.environ["PYTHONWARNINGS"] = ",".join(filter(None, [os.environ.get("PYTHONWARNINGS"), QUIET]))
    enough_files(exposure.guard.max_connections)
    config = ServeConfig(APP, exposure.guard, factory=True, host=host, port=port, workers=workers, log_level="warning",
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


def enough_files(connections: int) -> None:
    """Raise this process's open-file limit (inherited by its workers) so `connections`
    sockets fit: the soft limit is often 1,024 while the hard one allows far more. The
    guard's cap stays what bounds a worker; a hard limit below it is left as it is."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = connections + SPARE_FILES
    if soft != resource.RLIM_INFINITY and soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted if hard == resource.RLIM_INFINITY else min(wanted, hard),
                                                    hard))


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
