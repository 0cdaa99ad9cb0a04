"""The stage's `serve:` setting: safe defaults, and every bad value a located one-line
error with exit 2, as the other stage fields."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ddb2bigtable.plan.planner import plan_files
from ddb2bigtable.program import plan_for_stack
from ddb2bigtable.spec.errors import InputError
from ddb2bigtable.spec.serve_settings import ServeSettings
from ddb2bigtable.spec.stage import load_stage

from ..conftest import ROOT, write_project

MOVIES = (ROOT / "specs" / "movies.yaml").read_text(encoding="utf-8")
IMAGE = "us-west1-docker.pkg.dev/p/tools/ddb2bigtable:1.0"
LOCATED = re.compile(r"^(?P<file>\S+):(?P<line>\d+):(?P<column>\d+): config\.ddb2bigtable:stage\.serve\.(?P<key>\w+)")


def cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ddb2bigtable", *args, "--root", str(root)], cwd=root,
                          capture_output=True, text=True, timeout=60)


def test_off_unless_enabled_and_iam_when_enabled(tmp_path):
    root = write_project(tmp_path, {"movies": MOVIES}, {"regions": "home"})
    assert load_stage("test", root).serve == ServeSettings() and not ServeSettings().enabled
    assert plan_files(root, "test").serve is None
    write_project(tmp_path, {"movies": MOVIES}, {"regions": "home", "serve": {"enabled": True, "image": IMAGE}})
    serve = plan_files(root, "test").serve
    assert serve is not None and serve.where == "cloud-run"
    assert (serve.signing, serve.min_instances, serve.max_instances, serve.cpu, serve.memory, serve.concurrency) == (
        "iam", 0, 10, 1, "512Mi", 80)
    assert serve.command[-1] == "--unsigned" and serve.invokers == () and serve.keys_secret is None
    assert serve.deletion_protection  # a stage that does not say otherwise is production-safe
    assert dict(serve.reasons)["signing"].startswith("iam: Cloud Run checks")


@pytest.mark.parametrize(("serve", "key", "words"), [
    ({"enabled": True, "image": IMAGE, "signing": "none"}, "signing", "emulator stage only"),
    ({"enabled": True, "image": IMAGE, "signing": "keys"}, "signing", "signing: keys needs keys_secret"),
    ({"enabled": True}, "enabled", "serve.enabled needs serve.image"),
    ({"enabled": True, "image": IMAGE, "invokers": ["allUsers"]}, "invokers", "never allUsers"),
    ({"enabled": True, "image": IMAGE, "keys_secret": "k"}, "keys_secret", "applies to signing: keys only"),
    ({"enabled": True, "image": IMAGE, "min_instances": 5, "max_instances": 2}, "min_instances", "above"),
    ({"enabled": True, "image": IMAGE, "memory": "9Gi", "cpu": 2}, "memory", "needs at least 4 vCPUs"),
    ({"enabled": True, "image": IMAGE, "cpu": 4}, "cpu", "cpu 4 needs at least 2Gi"),
    ({"enabled": True, "image": IMAGE, "memory": "256Mi"}, "memory", "outside Cloud Run's 512Mi-32Gi"),
    ({"enabled": True, "image": IMAGE, "cpu": 3}, "cpu", "expected one of 1, 2, 4, 6, 8"),
    ({"enabled": True, "image": IMAGE, "regions": "everywhere"}, "regions", "home (the first instance's"),
    ({"enabled": "yes", "image": IMAGE}, "enabled", "expected"),
    ({"enabled": True, "image": IMAGE, "signng": "iam"}, "signng", "did you mean 'signing'?"),
], ids=["none-in-the-cloud", "keys-without-secret", "no-image", "all-users", "secret-without-keys",
        "min-above-max", "memory-needs-cpus", "cpus-need-memory", "too-little-memory", "cpu-choice", "regions",
        "bool", "typo"])
def test_bad_values_are_located_and_exit_2(tmp_path, serve, key, words):
    root = write_project(tmp_path, {"movies": MOVIES}, {"regions": "home", "serve": serve})
    for command in (["validate", "specs/movies.yaml", "--stage", "test"], ["plan", "--stage", "test"]):
        run = cli(root, *command)
        assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr
        (line,) = [line for line in run.stderr.splitlines() if LOCATED.match(line)]
        found = LOCATED.match(line)
        assert found and found["key"] == key and words in line, line
        stack = (root / "stacks" / "Pulumi.test.yaml").read_text().splitlines()
        written = stack[int(found["line"]) - 1].strip()
        assert written.startswith(key) or written == "- allUsers", (written, line)  # the key, or the list item


def test_the_local_stage_takes_the_setting_and_deploys_nothing(tmp_path):
    root = write_project(tmp_path, {"movies": MOVIES}, {"regions": "home", "emulator": True,
                                                        "serve": {"enabled": True, "signing": "none"}})
    serve = plan_files(root, "test").serve
    assert serve is not None and serve.where == "local" and serve.signing == "none"
    assert serve.command == ("ddb2bigtable", "serve", "--stage", "test")  # loopback: `up --keep-running` adds the port
    run = cli(root, "plan", "--stage", "test")
    assert run.returncode == 0 and "beside the emulator" in run.stdout, run.stderr
    config = yaml.safe_load((root / "stacks" / "Pulumi.test.yaml").read_text())["config"]
    with pytest.raises(InputError, match="instead of `pulumi up`"):  # still never deployed by Pulumi
        plan_for_stack("test", root, config)


def test_a_template_stage_s_serve_is_replaced_whole(tmp_path):
    root = write_project(tmp_path, {"movies": MOVIES}, {"regions": "home", "serve": {
        "enabled": True, "image": IMAGE, "signing": "keys", "keys_secret": "serve-keys"}}, stage_name="pr")
    (root / "stacks" / "Pulumi.pr-7.yaml").write_text(
        f"config:\n  ddb2bigtable:stage:\n    template: pr\n    serve: {{enabled: true, image: {IMAGE}}}\n")
    assert load_stage("pr", root).serve.signing == "keys"
    assert load_stage("pr-7", root).serve == ServeSettings(enabled=True, image=IMAGE)


def test_serving_a_stage_gives_every_instance_the_profiles_serve_writes_through(tmp_path):
    """Serve writes with CheckAndMutateRow, which Bigtable runs only through a single-cluster
    profile with transactional writes; Movies asks for none (no conditional_writes)."""
    assert "conditional_writes: true" not in MOVIES
    for serve, wanted in (({"enabled": True, "image": IMAGE}, True), ({"enabled": False}, False)):
        root = write_project(tmp_path, {"movies": MOVIES}, {"regions": "home", "serve": serve})
        (instance,) = plan_files(root, "test").instances
        txn = [p for p in instance.app_profiles if p.allow_transactional_writes]
        assert bool(txn) == wanted
        assert all(p.routing == "single" and "deploys serve" in p.why for p in txn)
        assert {p.id for p in txn} == ({f"txn-{c.gcp_region}" for c in instance.clusters} if wanted else set())


def test_iam_signing_without_invokers_is_a_warning_naming_the_setting(tmp_path):
    for serve, warned in (({"enabled": True, "image": IMAGE}, True),
                          ({"enabled": True, "image": IMAGE, "invokers": ["group:orders@example.com"]}, False),
                          ({"enabled": True, "image": IMAGE, "signing": "keys", "keys_secret": "k"}, False)):
        root = write_project(tmp_path, {"movies": MOVIES}, {"regions": "home", "serve": serve})
        found = [w for w in plan_files(root, "test").warnings if w.code == "serve-no-invokers"]
        assert bool(found) == warned and all("serve.invokers" in w.message for w in found)
