"""The README's walk-through runs as written once the quick start's venv is on PATH."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from ..conftest import ROOT


def walk_through() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Walk-through", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, re.S).group(1)
    return [line.split("#", 1)[0].strip() for line in block.splitlines() if line.strip()]


def test_the_walk_through_commands_work_with_the_venv_on_path():
    commands = walk_through()
    assert len(commands) >= 4 and all(c.startswith("ddb2bigtable ") for c in commands)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    for command in commands:
        run = subprocess.run(["bash", "-c", command], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, (command, run.stderr[-2000:])
