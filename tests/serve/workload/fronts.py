"""What the workloads' clients talk to: a load balancer on one fixed address in front of two
processes that can be killed (SIGKILL) or paused (SIGSTOP/SIGCONT) mid-request, as an
application reaches serve on Cloud Run. For serve, the two processes are serve workers over
one emulator stage (tests/serve/conftest.py's start_serve, as the bank test does); for
DynamoDB Local, the oracle, they are two forwarding proxies in front of it, so a kill cuts the
connections a request is on exactly where a crashed serve process would, while the data
survives as it does in Bigtable.

The balancer (and each proxy) is a few lines of Python of its own process: every accepted
connection goes to the first upstream, in turn, that accepts a connection; the upstreams'
ports are read from a file at each connection, so a process started again on another port
is found. A connection whose upstream dies is closed, and the client's SDK opens another."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ddb2bigtable.bigtable.emulator import free_port, stop_process

from ...local_servers import LocalServer, launch, logged_tracebacks

_FORWARD = """
import itertools, socket, sys, threading
listen, ports_file = int(sys.argv[1]), sys.argv[2]
turn = itertools.count()
def pump(a, b):
    try:
        while data := a.recv(65536):
            b.sendall(data)
    except OSError:
        pass
    for s in (a, b):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
def upstream():
    ports = [int(p) for p in open(ports_file).read().split()]
    start = next(turn)
    for i in range(len(ports)):
        try:
            return socket.create_connection(('127.0.0.1', ports[(start + i) % len(ports)]), timeout=5)
        except OSError:
            pass
    return None
def forward(client):
    server = upstream()
    if server is None:
        client.close()
        return
    server.settimeout(None)
    threading.Thread(target=pump, args=(client, server), daemon=True).start()
    pump(server, client)
listener = socket.create_server(('127.0.0.1', listen))
while True:
    threading.Thread(target=forward, args=(listener.accept()[0],), daemon=True).start()
"""


def forwarder(ports_file: Path) -> LocalServer:
    """A forwarding process on a free port of 127.0.0.1 (to the ports `ports_file` lists)."""
    port = free_port()
    return launch(LocalServer, "the workload's forwarding proxy", [sys.executable, "-c", _FORWARD, str(port),
                                                                   str(ports_file)], port, 10.0,
                  "it is a few lines of Python (tests/serve/workload/fronts.py): run them by hand to see why")


def _port(url: str) -> int:
    return int(url.rsplit(":", 1)[1])


@dataclass
class Fronts:
    """One side under test: the balancer's `url`, its two upstream processes (serve workers or
    proxies to DynamoDB Local), `start` making one more, and serve's log (None for DynamoDB Local)."""

    side: str
    start: Callable[[], tuple[subprocess.Popen, str]]
    folder: Path
    log: Path | None = None
    processes: list[subprocess.Popen] = field(default_factory=list)
    urls: list[str] = field(default_factory=list)
    balancer: LocalServer | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        try:
            for _ in range(2):
                process, url = self.start()
                self.processes.append(process)
                self.urls.append(url)
            self._write_ports()
            self.balancer = forwarder(self.folder / f"{self.side}-upstreams")
        except BaseException:
            self.stop()  # what did start, stopped by PID
            raise

    def _write_ports(self) -> None:
        path = self.folder / f"{self.side}-upstreams"
        path.with_suffix(".new").write_text("\n".join(str(_port(u)) for u in self.urls))
        path.with_suffix(".new").replace(path)

    @property
    def url(self) -> str:
        assert self.balancer is not None
        return self.balancer.endpoint

    def kill(self, i: int) -> None:
        """Upstream `i` killed with SIGKILL, then started again (on a new port the balancer reads)."""
        with self.lock:
            os.kill(self.processes[i].pid, signal.SIGKILL)
            self.processes[i].wait()
        process, url = self.start()
        with self.lock:
            self.processes[i], self.urls[i] = process, url
            self._write_ports()

    def pause(self, i: int, seconds: float) -> None:
        """Upstream `i` stopped with SIGSTOP for `seconds`, then continued."""
        os.kill(self.processes[i].pid, signal.SIGSTOP)
        try:
            time.sleep(seconds)
        finally:
            os.kill(self.processes[i].pid, signal.SIGCONT)

    def direct(self, i: int) -> str:
        """Upstream `i`'s own address (a client that must reach that process and no other)."""
        with self.lock:
            return self.urls[i]

    def log_mark(self) -> int:
        return self.log.stat().st_size if self.log is not None and self.log.exists() else 0

    def tracebacks(self, since: int) -> list[str]:
        """Each traceback serve logged after `since` (a log_mark), by its last line."""
        if self.log is None:
            return []
        with open(self.log, "rb") as log:
            log.seek(since)
            text = log.read().decode("utf-8", "replace")
        return logged_tracebacks(text)

    def stop(self) -> None:
        if self.balancer is not None:
            self.balancer.stop()
        for process in self.processes:
            stop_process(process)


def serve_fronts(root: Path, stage: str, folder: Path) -> Fronts:
    """Two serve processes on `root`'s `stage` (its emulator), the sweep off: what settles a
    crashed transaction's locks is whoever meets them (issue 50)."""
    from ..conftest import start_serve

    return Fronts("serve", lambda: start_serve(root, stage, "--txn-sweep-seconds", "86400"), folder,
                  log=root / "serve.log")


def local_fronts(endpoint: str, folder: Path) -> Fronts:
    """Two forwarding proxies to DynamoDB Local at `endpoint`."""
    (folder / "dynamodb-local-target").write_text(str(_port(endpoint)))

    def start() -> tuple[subprocess.Popen, str]:
        proxy = forwarder(folder / "dynamodb-local-target")
        return proxy.process, proxy.endpoint

    return Fronts("dynamodb-local", start, folder)
