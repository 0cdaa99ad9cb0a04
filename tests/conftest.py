"""Shared fixtures: throw-away project roots with a stage and specs written as YAML."""

from __future__ import annotations

import os
import shutil
import subprocess
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, settings

# Property tests check what is generated, not how fast: on this shared 2-core machine (and
# in CI beside the emulators) input generation is sometimes slow, which is no bug. Deadlines
# stay off for the same reason; every other health check stays on.
settings.register_profile("shared-machine", suppress_health_check=[HealthCheck.too_slow], deadline=None)
settings.load_profile("shared-machine")

# The session forks load encoders: gRPC's fork handlers off before gRPC is imported
# (load/encoder.py says why), as the CLI does for its process.
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "0")

ROOT = Path(__file__).resolve().parent.parent

# What this repository ships in specs/ and stacks/. Tests read these alone: a user's own
# spec, listed in a shipped stage as `diff` needs, or a stage of their own changes no test's
# result (tests/test_shipped.py checks the lists against the snapshots and the files).
SHIPPED_SPECS = ("specs/invoices-adjacency.yaml", "specs/movies.yaml", "specs/product-catalog.yaml",
                 "specs/shop-global.yaml", "specs/video-single-table.yaml")
SHIPPED_STAGES = ("dev", "local", "pr", "prod", "staging")


def shipped_config(stage: str) -> dict[str, Any]:
    """The `config:` of a shipped `stacks/Pulumi.<stage>.yaml`, its `specs` list cut to the
    shipped specs (a user may have added their own to it)."""
    config = yaml.safe_load((ROOT / "stacks" / f"Pulumi.{stage}.yaml").read_text())["config"]
    settings = config.get("ddb2bigtable:stage") or {}
    if isinstance(settings.get("specs"), list):
        settings["specs"] = [spec for spec in settings["specs"] if spec in SHIPPED_SPECS]
    return config


def shipped_project(dest: Path, *also: str) -> Path:
    """`dest` as a project root holding the shipped specs and stages (each stage's list cut to
    the shipped specs), and the folders `also` names (`exports`) as the repository has them."""
    (dest / "specs").mkdir(parents=True, exist_ok=True)
    (dest / "stacks").mkdir(exist_ok=True)
    for spec in SHIPPED_SPECS:
        shutil.copy(ROOT / spec, dest / spec)
    for stage in SHIPPED_STAGES:
        text = (ROOT / "stacks" / f"Pulumi.{stage}.yaml").read_text()
        listed = yaml.safe_load(text)["config"].get("ddb2bigtable:stage", {}).get("specs") or []
        if any(spec not in SHIPPED_SPECS for spec in listed):  # rewritten only then: comments kept otherwise
            text = yaml.safe_dump({"config": shipped_config(stage)}, sort_keys=False)
        (dest / "stacks" / f"Pulumi.{stage}.yaml").write_text(text)
    for folder in also:
        shutil.copytree(ROOT / folder, dest / folder)
    return dest


def write_project(tmp: Path, specs: dict[str, str], stage: dict | None = None, stage_name: str = "test") -> Path:
    """A project root with `specs/<name>.yaml` and `stacks/Pulumi.<stage_name>.yaml`."""
    (tmp / "specs").mkdir(parents=True, exist_ok=True)
    (tmp / "stacks").mkdir(exist_ok=True)
    for name, text in specs.items():
        (tmp / "specs" / f"{name}.yaml").write_text(textwrap.dedent(text))
    settings = {"specs": [f"specs/{name}.yaml" for name in specs], "regions": "all", "autoscaling": True,
                "failover_headroom": True, "max_nodes_per_cluster": 1000, "capacity_scale": 1.0}
    settings.update(stage or {})
    config = {"config": {"gcp:project": "test-project", "ddb2bigtable:stage": settings}}
    (tmp / "stacks" / f"Pulumi.{stage_name}.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    return tmp


def repository_copy(dest: Path) -> Path:
    """What a fresh clone holds, in `dest`: every file git tracks or does not ignore, as the
    working tree holds it (so what runs there is the code and docs under test), and the
    repository's .tools (uv, DynamoDB Local's jar: what the quick start installed, which git
    ignores) linked."""
    tracked = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                             capture_output=True, check=True, timeout=60)
    for name in filter(None, tracked.stdout.decode().split("\0")):
        source = ROOT / name
        if source.is_file():  # a file deleted in the working tree is not there
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    if (ROOT / ".tools").is_dir():
        (dest / ".tools").symlink_to(ROOT / ".tools")
    return dest


def nodes_with(key: str, node: Any, path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every object in a JSON document that has `key`, with its path (schemas, price tables)."""
    if isinstance(node, dict):
        if key in node:
            yield path, node
        for name, child in node.items():
            yield from nodes_with(key, child, f"{path}.{name}")
    elif isinstance(node, list):
        for i, child in enumerate(node):
            yield from nodes_with(key, child, f"{path}[{i}]")


@pytest.fixture
def project(tmp_path: Path):
    def make(specs: dict[str, str], stage: dict | None = None) -> Path:
        return write_project(tmp_path, specs, stage)
    return make


@pytest.fixture(scope="session", autouse=True)
def serve_logs_without_tracebacks(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Every serve a test started logs no traceback, whatever the test asserted (issue 50's
    acceptance): a traceback is an exception nothing answered for, which a client saw as a
    500 or a dropped connection. Torn down last, after the session's serve processes stop."""
    yield
    from .local_servers import logged_tracebacks

    found = [f"{log}: {raised[:200]}" for log in sorted(tmp_path_factory.getbasetemp().rglob("serve*.log"))
             for raised in logged_tracebacks(log.read_text(errors="replace"))]
    assert not found, "serve logged tracebacks:\n" + "\n".join(found)


@pytest.fixture(scope="session")
def bigtable_emulator():
    """The real Bigtable emulator on 127.0.0.1 and a free port, for the whole test session.

    Fails (never skips) where the emulator is missing, with the install hint: a skipped
    emulator test would prove nothing.
    """
    import os

    from ddb2bigtable.bigtable import emulator

    running = emulator.start()
    previous = os.environ.get(emulator.EMULATOR_ENV)
    os.environ[emulator.EMULATOR_ENV] = running.address
    yield running
    running.stop()
    if previous is None:
        os.environ.pop(emulator.EMULATOR_ENV, None)
    else:
        os.environ[emulator.EMULATOR_ENV] = previous
