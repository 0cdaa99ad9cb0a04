"""The Bigtable emulator: find it, start it on 127.0.0.1 with a free port, stop it.

The emulator ships with the Google Cloud CLI (`cbtemulator` under the SDK root). It serves
the data and table-admin APIs and applies GC in the background; it has no instance admin,
so instances, clusters and app profiles are tested through Pulumi's mocks instead.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..spec.errors import ServiceError

EMULATOR_ENV = "BIGTABLE_EMULATOR_HOST"
INSTALL_HINT = (
    "the Bigtable emulator was not found. Install it with the Google Cloud CLI: "
    "`gcloud components install bigtable` (or the Debian/Ubuntu package "
    "`google-cloud-cli-bigtable-emulator`), or point BIGTABLE_EMULATOR_HOST at a running one."
)


class EmulatorError(ServiceError):
    """The emulator cannot be found or started; the message says what to do."""


def stop_process(process: subprocess.Popen) -> None:
    """A server this run started, stopped by its PID: asked first, killed after 10 s."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextmanager
def pointed_at(address: str) -> Iterator[None]:
    """BIGTABLE_EMULATOR_HOST = `address` for the clients made inside, and as it was after:
    a process that goes on (a test, a library caller) must not keep talking to an emulator
    `up` has stopped."""
    previous = os.environ.get(EMULATOR_ENV)
    os.environ[EMULATOR_ENV] = address
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop(EMULATOR_ENV, None)
        else:
            os.environ[EMULATOR_ENV] = previous


@contextmanager
def quiet_connection_warning() -> Iterator[None]:
    """The client warns "Connecting to Bigtable emulator" for every client it makes; with
    BIGTABLE_EMULATOR_HOST set the user knows. Silenced only inside, not process-wide."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Connecting to Bigtable emulator", category=RuntimeWarning)
        yield


def find_binary() -> Path:
    """`cbtemulator` under the SDK root `gcloud info` reports, or on PATH."""
    candidates = []
    gcloud = shutil.which("gcloud")
    if gcloud:
        try:
            root = subprocess.run([gcloud, "info", "--format=value(installation.sdk_root)"], capture_output=True,
                                  text=True, timeout=60, check=True).stdout.strip()
            candidates.append(Path(root) / "platform" / "bigtable-emulator" / "cbtemulator")
        except (subprocess.SubprocessError, OSError):
            pass
    on_path = shutil.which("cbtemulator")
    if on_path:
        candidates.append(Path(on_path))
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    raise EmulatorError(INSTALL_HINT)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(host: str, port: int, timeout: float, process: subprocess.Popen | None = None,
                  what: str = "the Bigtable emulator") -> None:
    """Until something listens on host:port. With the `process` expected to listen, the wait
    ends as soon as it has exited: a server that failed at startup is said at once, not
    after the whole timeout."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise EmulatorError(f"{what} exited with code {process.returncode} before it listened on {host}:{port}")
        try:
            with socket.create_connection((host, port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise EmulatorError(f"{what} did not listen on {host}:{port} within {timeout:.0f} s")


@dataclass
class Emulator:
    """A running emulator process we started (and must stop), or one already running."""

    host: str
    port: int
    process: subprocess.Popen[bytes] | None = None

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    def stop(self) -> None:
        if self.process is not None:
            stop_process(self.process)

    def __enter__(self) -> Emulator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start(timeout: float = 30.0) -> Emulator:
    """A fresh emulator on 127.0.0.1 and a free port (nothing listens beyond this machine)."""
    binary = find_binary()
    port = free_port()
    process = subprocess.Popen([str(binary), "-host", "127.0.0.1", "-port", str(port)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    emulator = Emulator("127.0.0.1", port, process)
    try:
        wait_for_port("127.0.0.1", port, timeout, process)
    except EmulatorError:
        emulator.stop()
        raise
    return emulator


def running_or_start() -> Emulator:
    """The emulator BIGTABLE_EMULATOR_HOST names, or a new one we own."""
    address = os.environ.get(EMULATOR_ENV)
    if address:
        host, _, port = address.rpartition(":")
        wait_for_port(host or "127.0.0.1", int(port), 5.0)
        return Emulator(host or "127.0.0.1", int(port))
    return start()
