"""examples/serve/Dockerfile builds the image `serve.image` names: it copies what exists,
with the uv the project pins, runs `ddb2bigtable` (the plan's command) as a user that is
not root, and sends no work folder (dead letters may hold personal data) to the builder.

No Docker daemon here: the build's steps were run by hand (uv sync --frozen --no-dev
--no-editable into a fresh environment, then the plan's serve command against the
emulator; docs/serve.md says so); this test keeps the file in step with the repository.
"""

from __future__ import annotations

import re
import tomllib

from ddb2bigtable.plan.serve import PORT

from ..conftest import ROOT

EXAMPLE = ROOT / "examples" / "serve"


def _instructions() -> list[tuple[str, str]]:
    text = (EXAMPLE / "Dockerfile").read_text(encoding="utf-8")
    return [(line.split(" ", 1)[0], line.split(" ", 1)[1]) for line in text.splitlines()
            if line and not line.startswith("#")]


def test_the_dockerfile_copies_what_exists_with_the_pinned_uv_and_python():
    steps = _instructions()
    for source in (s.split()[:-1] for kind, s in steps if kind == "COPY" and not s.startswith("--from")):
        assert all((ROOT / name).exists() for name in source), source
    (uv,) = [s for kind, s in steps if kind == "COPY" and s.startswith("--from")]
    pinned = re.search(r"UV_VERSION=(\S+)", (ROOT / "scripts" / "bootstrap.sh").read_text()).group(1)
    assert f"ghcr.io/astral-sh/uv:{pinned} " in uv
    base = next(s for kind, s in steps if kind == "FROM")
    wanted = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    assert re.fullmatch(r"python:(\d+\.\d+)-slim", base) and base.split(":")[1][:-5] == wanted.removeprefix(">=")
    assert ("RUN", "uv sync --frozen --no-dev --no-editable") in steps


def test_the_image_runs_the_cli_as_no_root_and_sends_no_work_folder():
    steps = dict(_instructions())
    assert steps["ENTRYPOINT"] == '["ddb2bigtable"]' and not steps["USER"].startswith("0")
    assert f"--port {PORT}" in (EXAMPLE / "Dockerfile").read_text(encoding="utf-8")
    ignored = (EXAMPLE / "Dockerfile.dockerignore").read_text(encoding="utf-8").split()
    assert {".venv", ".ddb2bigtable", ".git"} <= set(ignored)
