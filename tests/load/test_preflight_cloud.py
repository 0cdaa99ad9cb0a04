"""A cloud stage without Google credentials: one line with the fix and exit 2, for load and
verify alike (it was a DefaultCredentialsError traceback)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from ..conftest import ROOT


@pytest.mark.parametrize("command", ["load", "verify"])
def test_no_credentials_is_one_line_with_the_fix(tmp_path, command):
    env = {k: v for k, v in os.environ.items()
           if k not in ("BIGTABLE_EMULATOR_HOST", "GOOGLE_APPLICATION_CREDENTIALS")}
    env.update(HOME=str(tmp_path), CLOUDSDK_CONFIG=str(tmp_path / "gcloud"), NO_GCE_CHECK="True",
               GCE_METADATA_HOST="127.0.0.1:9", GCE_METADATA_IP="127.0.0.1:9")
    run = subprocess.run([sys.executable, "-m", "ddb2bigtable", command, "specs/movies.yaml", "--table", "movies",
                          "--export", "exports/movies", "--stage", "dev", "--work-dir", str(tmp_path / "work")],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 2, run.stdout + run.stderr
    assert "no Google credentials" in run.stderr and "gcloud auth application-default login" in run.stderr
    assert "Traceback" not in run.stderr
