"""Ctrl-C (issue #53): an interrupted command says what it keeps and the command line to
run again, instead of click's `Aborted!`, with exit 130 (128 + SIGINT, as shells report it).
The command is stopped for real with SIGINT while it waits on an endpoint that accepted
its connection and never answers."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading

from ..conftest import ROOT


def _held_connection() -> tuple[socket.socket, threading.Event]:
    """A listener on 127.0.0.1 that accepts one connection and holds it; the event is set
    once the command has connected (so it is inside its AWS call, past start-up)."""
    listener = socket.create_server(("127.0.0.1", 0))
    connected = threading.Event()
    held: list[socket.socket] = []

    def accept() -> None:
        held.append(listener.accept()[0])
        connected.set()
    threading.Thread(target=accept, daemon=True).start()
    return listener, connected


def test_ctrl_c_during_export_says_it_resumes_and_gives_the_command_line(tmp_path):
    listener, connected = _held_connection()
    endpoint = f"http://127.0.0.1:{listener.getsockname()[1]}"
    args = ["export", "aws://us-west-2/Orders", "-o", str(tmp_path / "orders"), "--endpoint-url", endpoint]
    env = {**os.environ, "AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local"}
    process = subprocess.Popen([sys.executable, "-m", "ddb2bigtable", *args], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    try:
        assert connected.wait(60), "export never connected"
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)
    finally:
        process.kill()
        listener.close()
    assert process.returncode == 130, err
    assert "Aborted!" not in err and "Traceback" not in err
    assert err.strip() == ("interrupted (Ctrl-C): the export keeps its checkpoint; the same command resumes it: "
                           f"ddb2bigtable export aws://us-west-2/Orders -o {tmp_path / 'orders'} --endpoint-url "
                           f"{endpoint}")
