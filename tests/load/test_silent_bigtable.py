"""`load --create-tables`, `load` and `verify` against a Bigtable (emulator address) that
accepts TCP connections and never answers, as a user runs them: each ends with what to do
one short deadline after it asked (5 s for an emulator: bigtable/deadlines.admin_retry), not
after the admin client's own 60 s of retries (a traceback, or "within 5 s" said after 47 s).
The silent server is a process of its own on 127.0.0.1, stopped by PID."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from ddb2bigtable.bigtable.emulator import EMULATOR_ENV
from ddb2bigtable.bigtable.preflight import EMULATOR_DEADLINE_SECONDS

from ..conftest import ROOT
from ..local_servers import silent_server

pytestmark = pytest.mark.slow
SLACK = 10.0  # seconds: the CLI's start on a shared 2-core machine


@pytest.fixture(scope="module")
def silent():
    server = silent_server()
    yield server
    server.stop()


@pytest.mark.parametrize("args, code, says", [
    (["load", "--create-tables"], 1, "cannot create or update the tables of instance movies-sample-local"),
    (["load"], 2, f"cannot reach the Bigtable emulator at 127.0.0.1:{{port}} within {EMULATOR_DEADLINE_SECONDS:g} s"),
    (["verify"], 2, f"cannot reach the Bigtable emulator at 127.0.0.1:{{port}} within {EMULATOR_DEADLINE_SECONDS:g} s"),
])
def test_a_silent_bigtable_ends_the_command_one_short_deadline_after_it_asked(silent, tmp_path, args, code, says):
    command, *flags = args
    began = time.monotonic()
    out = subprocess.run([sys.executable, "-m", "ddb2bigtable", command, "specs/movies.yaml", "--table", "movies",
                          "--stage", "local", "--export", "exports/movies", "--work-dir", str(tmp_path / "work"),
                          *flags], capture_output=True, text=True, cwd=ROOT, timeout=300,
                         env={**os.environ, EMULATOR_ENV: f"127.0.0.1:{silent.port}"})
    seconds = time.monotonic() - began
    assert out.returncode == code, out.stdout + out.stderr
    assert says.format(port=silent.port) in out.stderr and "Traceback" not in out.stderr, out.stderr
    assert "ddb2bigtable up --stage local --keep-running" in out.stderr
    assert seconds < EMULATOR_DEADLINE_SECONDS + SLACK, seconds
    print(f"{' '.join(args)}, silent Bigtable: exit {code} after {seconds:.1f} s")
