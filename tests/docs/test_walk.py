"""The README's ten-minute walk (your own table rehearsed on the local servers) runs as
written: the block is taken from docs/migration-guide.md's step 0, must be the README's
word for word, and is run by bash from the repository's root."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from ..conftest import ROOT

pytestmark = pytest.mark.slow

# What the walk makes in the repository, removed after it (only when the test made it).
REHEARSAL = ROOT / "rehearsal"
SERVERS = ROOT / ".ddb2bigtable" / "local-servers.json"
WORK = ROOT / ".ddb2bigtable" / "local" / "orders-rehearsal-local"


def _block(path: Path, heading: str) -> str:
    section = path.read_text(encoding="utf-8").split(heading, 1)[1]
    return re.search(r"```bash\n(.*?)```", section, re.S).group(1)


def test_the_walk_is_the_same_in_the_readme_and_the_guide():
    assert _block(ROOT / "docs" / "migration-guide.md", "## 0. Rehearse on your laptop") == \
        _block(ROOT / "README.md", "### Ten minutes on your laptop")


def test_the_ten_minute_walk_runs_as_written(tmp_path):
    if REHEARSAL.exists() or SERVERS.exists() or WORK.exists():
        pytest.fail(f"{REHEARSAL}, {SERVERS} or {WORK} exists (a walk of yours?): stop it "
                    "(bash scripts/local-servers.sh stop), move those folders away, then rerun")
    script = tmp_path / "walk.sh"
    script.write_text(_block(ROOT / "docs" / "migration-guide.md", "## 0. Rehearse on your laptop"))
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("AWS_", "BIGTABLE_EMULATOR")) and k != "VIRTUAL_ENV"}
    try:
        out = subprocess.run(["bash", "-eo", "pipefail", str(script)], cwd=ROOT, env=env, capture_output=True,
                             text=True, timeout=900)
        assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
        assert "export Orders (us-east-1) finished: 300 items" in out.stdout
        assert "local stage ready" in out.stdout and "│ orders │ full JSON │   300 │    300 │" in out.stdout
        assert "through serve: shipped" in out.stdout  # the write made after the export, read through serve
        assert "verdict: ready" in out.stdout and "0 differ" in out.stdout
        assert not SERVERS.exists()  # the walk stopped its servers
    finally:
        _clean_up()


def _clean_up() -> None:
    """What a failed walk leaves running is stopped by PID; what it wrote is removed."""
    up = REHEARSAL / "up.txt"
    if up.exists():
        for pid in re.findall(r"stop it with: kill (\d+)", up.read_text()):
            subprocess.run(["kill", pid], capture_output=True)
    if SERVERS.exists():
        subprocess.run(["python", str(ROOT / "scripts" / "local_servers.py"), "stop"], cwd=ROOT, capture_output=True)
    shutil.rmtree(REHEARSAL, ignore_errors=True)
    shutil.rmtree(WORK, ignore_errors=True)
    shutil.rmtree(ROOT / ".ddb2bigtable" / "local" / "given-specs", ignore_errors=True)


def test_stop_signals_only_the_processes_it_started(tmp_path, monkeypatch):
    """scripts/local-servers.sh stop: a recorded PID now running another command (the PID
    reused) is left alone; the record is removed."""
    import importlib.util
    import json
    import sys

    spec = importlib.util.spec_from_file_location("local_servers_script", ROOT / "scripts" / "local_servers.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    stranger = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        state = tmp_path / "local-servers.json"
        state.write_text(json.dumps({"servers": [{"name": "DynamoDB Local", "pid": stranger.pid,
                                                  "command": ["java", "-jar", "DynamoDBLocal.jar"]}]}))
        monkeypatch.setattr(script, "STATE", state)
        assert script.stop() == 0
        assert stranger.poll() is None and not state.exists()
    finally:
        stranger.kill()
        stranger.wait()
