"""Shared fixtures: throw-away project roots with a stage and specs written as YAML."""

from __future__ import annotations

import os
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
