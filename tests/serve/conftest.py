"""`ddb2bigtable serve` started for real: the seeds' tables and Movies loaded into the session's
Bigtable emulator by the loader, then the endpoint as its own process on 127.0.0.1 and a
free port, stopped by its PID; tests talk to it with real boto3 clients."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import boto3
import pytest
from botocore.config import Config

from ddb2bigtable.bigtable.emulator import free_port, stop_process, wait_for_port
from ddb2bigtable.load.local_stage import up

from ..conftest import ROOT, write_project
from ..replicate import dynamodb_local

STAGE = "serve"
# The tests that write use this table, so the loaded ones stay equal to their exports.
SCRATCH = """
version: 1
instance: {id: serve-scratch, display_name: Serve scratch}
tables:
  - id: scratch
    source:
      table: Scratch
      region: us-west-2
      key:
        partition: {name: pk, type: S}
        sort: {name: sk, type: N}
      billing: provisioned
      reads: 10
      writes: 10
      item_size_kb: 1
      storage_gb: 0.001
      ttl: {attribute: expiresAt}
      gsis:
        - name: by-color
          key: {partition: {name: color, type: S}, sort: {name: size, type: N}}
          projection: keys_only
          reads: 5
          writes: 5
    mapping:
      families:
        - {name: counters, gc: {max_versions: 1}}
      attributes:
        - {name: hits, type: counter, family: counters}
"""
SPECS = ("movies", "video-single-table", "invoices-adjacency", "product-catalog")
EXPORTS = ("movies", "videos", "invoices", "products")


@dataclass
class Served:
    root: Path
    endpoint: str
    process: subprocess.Popen

    def client(self, key: tuple[str, str] = ("test", "test"), **config: object):
        """A boto3 DynamoDB client on the endpoint signing with `key` (id, secret), with no
        retries unless asked: a test sees the first answer."""
        retries = config.pop("retries", {"max_attempts": 1, "mode": "standard"})
        return boto3.client("dynamodb", endpoint_url=self.endpoint, region_name="us-west-2",
                            aws_access_key_id=key[0], aws_secret_access_key=key[1],
                            config=Config(retries=retries, connect_timeout=5, read_timeout=30, **config))


def start_serve(root: Path, stage: str, *extra: str, env: dict[str, str] | None = None) -> tuple[subprocess.Popen, str]:
    """serve as its own process on a free port (with `env` added to this environment); its output
    goes to serve.log beside the project (a pipe nobody reads would block it)."""
    port = free_port()
    with open(root / "serve.log", "ab") as log:
        process = subprocess.Popen([sys.executable, "-m", "ddb2bigtable", "serve", "--stage", stage, "--root",
                                    str(root), "--port", str(port), *extra], stdout=log, stderr=log,
                                   env={**os.environ, **(env or {})})
    try:
        wait_for_port("127.0.0.1", port, 60.0, process, "serve")
    except Exception as error:
        stop_process(process)
        raise AssertionError(f"serve did not start: {(root / 'serve.log').read_text()}") from error
    return process, f"http://127.0.0.1:{port}"


@pytest.fixture(scope="session")
def served(bigtable_emulator, tmp_path_factory) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("serve-project")
    specs = {name: (ROOT / "specs" / f"{name}.yaml").read_text() for name in SPECS}
    write_project(root, {**specs, "scratch": SCRATCH},
                  {"emulator": True, "regions": "home", "deletion_protection": False, "autoscaling": False,
                   "load": {"runner": "local", "export": "exports"}}, stage_name=STAGE)
    for name in EXPORTS:
        shutil.copytree(ROOT / "exports" / name, root / "exports" / name)
    result = up(root, STAGE)
    assert result.ok, result
    process, endpoint = start_serve(root, STAGE)
    yield Served(root, endpoint, process)
    stop_process(process)


@pytest.fixture(scope="session")
def dynamodb_oracle() -> Iterator[dynamodb_local.DynamoDBLocal]:
    """DynamoDB Local, the oracle of serve's answers, one process for every serve test that asks."""
    running = dynamodb_local.start()
    yield running
    running.stop()
