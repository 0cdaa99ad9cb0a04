"""`plan` shows the stage's serve endpoint in every format: figures in a table, each why in a note."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from ..conftest import ROOT, write_project

MOVIES = (ROOT / "specs" / "movies.yaml").read_text(encoding="utf-8")
SERVE = {"enabled": True, "image": "us-west1-docker.pkg.dev/p/tools/ddb2bigtable:1.0", "max_instances": 7,
         "signing": "keys", "keys_secret": "serve-keys"}


def plan(root, fmt: str) -> str:
    run = subprocess.run([sys.executable, "-m", "ddb2bigtable", "plan", "--stage", "test", "--root", str(root),
                          "--format", fmt], capture_output=True, text=True, timeout=60, env={**os.environ, "COLUMNS": "100"})
    assert run.returncode == 0, run.stderr
    return run.stdout


def test_every_format_shows_the_endpoint_and_none_when_it_is_off(tmp_path):
    root = write_project(tmp_path, {"movies": MOVIES}, {"regions": "home", "serve": SERVE})
    text, markdown = plan(root, "text"), plan(root, "markdown")
    for out in (text, markdown):
        assert "Serve" in out and "ddb2bigtable-test" in out and "0-7" in out and "serve-keys" in out
    assert "--workers 1" in " ".join(markdown.split())  # the container's command, as Cloud Run runs it
    serve = json.loads(plan(root, "json"))["serve"]
    assert (serve["signing"], serve["keys_secret"], serve["max_instances"]) == ("keys", "serve-keys", 7)
    assert {r["figure"] for r in serve["reasons"]} >= {"regions", "instances", "size", "identity", "signing"}
    write_project(tmp_path, {"movies": MOVIES}, {"regions": "home"})
    assert json.loads(plan(root, "json"))["serve"] is None and "Serve" not in plan(root, "text")
