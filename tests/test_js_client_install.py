"""scripts/js_streams_client.sh, the install of the JavaScript SDK's DynamoDB Streams client
that scripts/test.sh runs (for tests/serve/streams/test_side_by_side.py): two runs at once
fetch once and leave one whole folder, and a folder without the client is installed again.
The package is a stand-in tarball with the real package's name, installed by the real npm,
so the test reaches no registry (tests/test_tools_install.py does the same for DynamoDB
Local)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from .conftest import ROOT

CLIENT = Path("node_modules/@aws-sdk/client-dynamodb-streams")


@pytest.fixture(scope="module")
def stand_in_package(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("npm-package")
    package = folder / "package"
    package.mkdir()
    (package / "package.json").write_text(json.dumps({"name": "@aws-sdk/client-dynamodb-streams",
                                                      "version": "0.0.1", "main": "index.js"}))
    (package / "index.js").write_text("module.exports = { standIn: true };\n")
    subprocess.run(["npm", "pack", "--silent", "--pack-destination", str(folder)], cwd=package, check=True,
                   capture_output=True, timeout=120)
    return folder / "aws-sdk-client-dynamodb-streams-0.0.1.tgz"


def _checkout(folder: Path) -> Path:
    (folder / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "js_streams_client.sh", folder / "scripts")
    return folder / "scripts" / "js_streams_client.sh"


def test_two_installs_at_once_fetch_once_and_leave_one_whole_folder(tmp_path, stand_in_package):
    script = _checkout(tmp_path / "project")
    bin_dir, log = tmp_path / "bin", tmp_path / "npm-calls.log"
    bin_dir.mkdir()  # npm as the script calls it, logged and slow, so the second run starts mid-fetch
    (bin_dir / "npm").write_text(f"#!/bin/sh\necho \"$*\" >> {log}\nsleep 2\nexec {shutil.which('npm')} \"$@\"\n")
    (bin_dir / "npm").chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
           "DDB2BIGTABLE_JS_STREAMS_PACKAGE": str(stand_in_package), "npm_config_cache": str(tmp_path / "npm-cache")}
    runs = [subprocess.Popen(["bash", str(script)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True) for _ in range(2)]
    outputs = [run.communicate(timeout=300) for run in runs]
    assert [run.returncode for run in runs] == [0, 0], outputs
    tools = tmp_path / "project" / ".tools"
    assert json.loads((tools / "js-streams-client" / CLIENT / "package.json").read_text())["version"] == "0.0.1"
    assert [p.name for p in tools.iterdir() if p.name != "js-streams-client.lock"] == ["js-streams-client"]
    assert len(log.read_text().splitlines()) == 1  # the second run found the first one's install


def test_a_folder_without_the_client_is_installed_again(tmp_path, stand_in_package):
    script = _checkout(tmp_path / "project")
    tools = tmp_path / "project" / ".tools"
    (tools / "js-streams-client" / "node_modules").mkdir(parents=True)  # an install cut short
    env = {**os.environ, "DDB2BIGTABLE_JS_STREAMS_PACKAGE": str(stand_in_package),
           "npm_config_cache": str(tmp_path / "npm-cache")}
    subprocess.run(["bash", str(script)], env=env, check=True, capture_output=True, timeout=300)
    assert (tools / "js-streams-client" / CLIENT / "index.js").is_file()
    assert [p.name for p in tools.iterdir() if p.name != "js-streams-client.lock"] == ["js-streams-client"]
