"""`up --stage S --keep-running` starts `serve` beside the emulator and says where."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import boto3
import pytest

from ddb2bigtable.cli.serve_cmd import start_beside
from ddb2bigtable.spec.errors import ServiceError

from ..conftest import ROOT, write_project

STAGE = "up-serve"


@pytest.mark.slow
def test_up_keep_running_leaves_serve_answering(bigtable_emulator, tmp_path):
    """On a project of its own (an instance suffix of its own), so the other serve tests'
    writes do not make its verify fail."""
    write_project(tmp_path, {"movies": (ROOT / "specs" / "movies.yaml").read_text()},
                  {"emulator": True, "regions": "home", "deletion_protection": False, "autoscaling": False,
                   "instance_suffix": "-up", "load": {"runner": "local", "export": str(ROOT / "exports")}},
                  stage_name=STAGE)
    out = subprocess.run([sys.executable, "-m", "ddb2bigtable", "up", "--stage", STAGE, "--keep-running", "--format",
                          "json", "--root", str(tmp_path)], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    pid, endpoint = report["serve"]["pid"], report["serve"]["endpoint_url"]
    try:
        assert endpoint.startswith("http://127.0.0.1:")
        client = boto3.client("dynamodb", endpoint_url=endpoint, region_name="us-west-2",
                              aws_access_key_id="any", aws_secret_access_key="any")
        item = client.get_item(TableName="Movies", Key={"year": {"N": "2013"}, "title": {"S": "Rush"}})["Item"]
        assert item["info"]["M"]["rating"] == {"N": "8.3"}
        assert oct((tmp_path / ".ddb2bigtable" / STAGE / "serve.log").stat().st_mode & 0o777) == "0o600"
    finally:
        os.kill(pid, signal.SIGTERM)  # the serve this test's `up` started, by the PID it reported
        for _ in range(100):
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.2)


def test_a_serve_that_fails_at_startup_is_said_at_once_with_its_reason(bigtable_emulator, tmp_path, monkeypatch):
    """`up --keep-running` with a malformed DDB2BIGTABLE_SERVE_KEYS in the user's environment:
    serve exits 2 at startup, and the command says so with serve's own words, instead of
    waiting out 60 s for a port nobody will open and saying only that it did not start."""
    write_project(tmp_path, {"movies": (ROOT / "specs" / "movies.yaml").read_text()},
                  {"emulator": True, "regions": "home", "deletion_protection": False, "autoscaling": False},
                  stage_name=STAGE)
    monkeypatch.setenv("DDB2BIGTABLE_SERVE_KEYS", "no-secret-here")
    with pytest.raises(ServiceError) as raised:
        start_beside(tmp_path, STAGE, bigtable_emulator.address)
    said = str(raised.value)
    assert said.startswith("serve exited with code 2 before it listened on 127.0.0.1:"), said
    assert "DDB2BIGTABLE_SERVE_KEYS: pair 1 is not ACCESS_KEY_ID:SECRET" in said
    assert str(tmp_path / ".ddb2bigtable" / STAGE / "serve.log") in said
