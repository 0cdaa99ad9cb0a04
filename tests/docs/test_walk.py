"""The README's ten-minute walk (your own table rehearsed on the local servers) runs as
written: the block is taken from docs/migration-guide.md's step 0, must be the README's
word for word, and is run by bash from the root of a copy of the repository the test
makes (every file git tracks or does not ignore, as the working tree holds it), so what
the walk writes (rehearsal/, .ddb2bigtable/, the copy's own .venv) never lands in the
working tree."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ..conftest import ROOT, repository_copy

pytestmark = pytest.mark.slow

# What the walk makes where it runs, none of which may appear in the working tree.
WALK_MAKES = ("rehearsal", ".ddb2bigtable/local-servers.json", ".ddb2bigtable/local/orders-rehearsal-local")


def _block(path: Path, heading: str) -> str:
    section = path.read_text(encoding="utf-8").split(heading, 1)[1]
    return re.search(r"```bash\n(.*?)```", section, re.S).group(1)


def test_the_walk_is_the_same_in_the_readme_and_the_guide():
    assert _block(ROOT / "docs" / "migration-guide.md", "## 0. Rehearse on your laptop") == \
        _block(ROOT / "README.md", "### Ten minutes on your laptop")


def test_the_ten_minute_walk_runs_as_written(tmp_path):
    copy = repository_copy(tmp_path / "ddb2bigtable")  # its .venv: synced by the walk's first command, as on a clone
    script = tmp_path / "walk.sh"
    script.write_text(_block(ROOT / "docs" / "migration-guide.md", "## 0. Rehearse on your laptop"))
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("AWS_", "BIGTABLE_EMULATOR")) and k != "VIRTUAL_ENV"}
    before = [name for name in WALK_MAKES if (ROOT / name).exists()]
    try:
        out = subprocess.run(["bash", "-eo", "pipefail", str(script)], cwd=copy, env={**env, "UV_LINK_MODE": "symlink"},
                             capture_output=True, text=True, timeout=900)
        assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
        assert "export Orders (us-east-1) finished: 300 items" in out.stdout
        assert "local stage ready" in out.stdout and "│ orders │ full JSON │   300 │    300 │" in out.stdout
        assert "through serve: shipped" in out.stdout  # the write made after the export, read through serve
        assert "verdict: ready" in out.stdout and "0 differ" in out.stdout
        assert (copy / "rehearsal" / "orders.yaml").is_file()  # the walk ran in the copy ...
        assert not (copy / ".ddb2bigtable" / "local-servers.json").exists()  # ... and stopped its servers
    finally:
        _clean_up(copy)
    assert [name for name in WALK_MAKES if (ROOT / name).exists()] == before  # ... and nothing in the working tree


def _clean_up(copy: Path) -> None:
    """What a failed walk leaves running in the copy is stopped by PID."""
    up = copy / "rehearsal" / "up.txt"
    if up.exists():
        for pid in re.findall(r"stop it with: kill (\d+)", up.read_text()):
            subprocess.run(["kill", pid], capture_output=True)
    if (copy / ".ddb2bigtable" / "local-servers.json").exists():
        subprocess.run([sys.executable, str(copy / "scripts" / "local_servers.py"), "stop"], cwd=copy,
                       capture_output=True, timeout=120)


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
