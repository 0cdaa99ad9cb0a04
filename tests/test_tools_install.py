"""scripts/dynamodb_local.sh, the install of DynamoDB Local that scripts/test.sh and
`scripts/local-servers.sh start` both run: two runs at once (the README's two commands in
two terminals) fetch once and leave one whole folder, never a `.partial` one beside or in it.
The package is a stand-in tarball with the real package's name and layout, installed by the
real npm, so the test reaches no registry."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from .conftest import ROOT


@pytest.fixture(scope="module")
def stand_in_package(tmp_path_factory) -> Path:
    """amplify-dynamodb-simulator's layout (emulator/DynamoDBLocal.jar and its lib folder), packed."""
    folder = tmp_path_factory.mktemp("npm-package")
    package = folder / "package"
    (package / "emulator" / "DynamoDBLocal_lib").mkdir(parents=True)
    (package / "package.json").write_text(json.dumps({"name": "amplify-dynamodb-simulator", "version": "0.0.1"}))
    (package / "emulator" / "DynamoDBLocal.jar").write_text("stand-in jar")
    (package / "emulator" / "DynamoDBLocal_lib" / "sqlite4java.so").write_text("stand-in lib")
    subprocess.run(["npm", "pack", "--silent", "--pack-destination", str(folder)], cwd=package, check=True,
                   capture_output=True, timeout=120)
    return folder / "amplify-dynamodb-simulator-0.0.1.tgz"


def _checkout(folder: Path) -> Path:
    """A project root with the script alone: its .tools/ is the test's own."""
    (folder / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "dynamodb_local.sh", folder / "scripts")
    return folder / "scripts" / "dynamodb_local.sh"


def test_two_installs_at_once_fetch_once_and_leave_one_whole_folder(tmp_path, stand_in_package):
    script = _checkout(tmp_path / "project")
    # npm as the scripts call it, logging each install and taking the seconds a fetch takes,
    # so the second run starts while the first is still fetching
    bin_dir, log = tmp_path / "bin", tmp_path / "npm-calls.log"
    bin_dir.mkdir()
    (bin_dir / "npm").write_text(f"#!/bin/sh\necho \"$*\" >> {log}\nsleep 2\nexec {shutil.which('npm')} \"$@\"\n")
    (bin_dir / "npm").chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
           "DDB2BIGTABLE_DYNAMODB_LOCAL_PACKAGE": str(stand_in_package), "npm_config_cache": str(tmp_path / "npm-cache")}
    runs = [subprocess.Popen(["bash", str(script)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True) for _ in range(2)]
    outputs = [run.communicate(timeout=300) for run in runs]
    assert [run.returncode for run in runs] == [0, 0], outputs
    tools = tmp_path / "project" / ".tools"
    assert sorted(p.name for p in (tools / "dynamodb-local").iterdir()) == ["DynamoDBLocal.jar", "DynamoDBLocal_lib"]
    assert [p.name for p in tools.iterdir() if p.name != "dynamodb-local.lock"] == ["dynamodb-local"]
    assert len(log.read_text().splitlines()) == 1  # the second run found the first one's install


def test_a_half_install_is_redone(tmp_path, stand_in_package):
    script = _checkout(tmp_path / "project")
    tools = tmp_path / "project" / ".tools"
    (tools / "dynamodb-local.partial").mkdir(parents=True)  # an install interrupted before the lock existed
    (tools / "dynamodb-local" / "DynamoDBLocal_lib").mkdir(parents=True)  # a folder without the jar
    env = {**os.environ, "DDB2BIGTABLE_DYNAMODB_LOCAL_PACKAGE": str(stand_in_package),
           "npm_config_cache": str(tmp_path / "npm-cache")}
    subprocess.run(["bash", str(script)], env=env, check=True, capture_output=True, timeout=300)
    assert (tools / "dynamodb-local" / "DynamoDBLocal.jar").read_text() == "stand-in jar"
    assert [p.name for p in tools.iterdir() if p.name != "dynamodb-local.lock"] == ["dynamodb-local"]
