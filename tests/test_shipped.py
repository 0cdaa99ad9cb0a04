"""The tests read the shipped specs and stages alone (conftest.SHIPPED_SPECS, SHIPPED_STAGES):
a user who adds a spec of their own to a stage, as `diff` needs, or a stage of their own,
still sees every test pass. Run here in a copy of the repository holding such a spec and
stage, on the tests that read the repository's specs/ and stacks/."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import yaml

from .conftest import ROOT, SHIPPED_SPECS, SHIPPED_STAGES, repository_copy

# The tests that read the repository's specs/ or stacks/ (not those that start the emulator:
# they copy the same way, through conftest.shipped_project, and take minutes).
READERS = ["tests/components/test_pulumi_program.py", "tests/plan/test_plan_features.py",
           "tests/spec/test_validate_stages.py", "tests/spec/test_broken_specs.py::test_valid_specs_pass",
           "tests/spec/test_reading.py::test_every_stage_loads_and_lists_every_example_spec",
           "tests/advise/test_designs.py::test_specs_alone", "tests/render/test_terminal.py",
           "tests/review/test_diff.py::test_the_pull_request_comment_matches_the_reviewed_snapshot",
           "tests/review/test_diff.py::test_the_comment_reads_top_down_flagged_changes_first_one_line_each",
           "tests/load/test_export_chain.py::test_the_cli_verify_of_the_full_export_exits_1_with_a_report"]


def test_the_shipped_lists_are_the_repositorys():
    assert all((ROOT / spec).is_file() for spec in SHIPPED_SPECS)
    assert all((ROOT / "stacks" / f"Pulumi.{stage}.yaml").is_file() for stage in SHIPPED_STAGES)
    snapshots = {p.stem.removeprefix("pulumi-") for p in (ROOT / "tests" / "snapshots").glob("pulumi-*.json")}
    assert snapshots <= set(SHIPPED_STAGES)
    listed = {spec for stage in SHIPPED_STAGES
              for spec in yaml.safe_load((ROOT / "stacks" / f"Pulumi.{stage}.yaml").read_text())["config"]
              ["ddb2bigtable:stage"].get("specs") or []}
    assert listed <= set(SHIPPED_SPECS)  # a stage may list fewer (pr lists none)


@pytest.mark.slow
def test_a_users_own_spec_in_every_stage_and_a_stage_of_their_own_change_no_test(tmp_path):
    copy = repository_copy(tmp_path / "clone")
    (copy / ".venv").symlink_to(ROOT / ".venv")
    catalog = (copy / "specs" / "product-catalog.yaml").read_text()
    (copy / "specs" / "shoporders.yaml").write_text(
        catalog.replace("id: product-catalog ", "id: shoporders-mine ").replace("id: products ", "id: shoporders ")
        .replace("table: ProductCatalog", "table: ShopOrders"))
    for stage in SHIPPED_STAGES:
        stack = copy / "stacks" / f"Pulumi.{stage}.yaml"
        config = yaml.safe_load(stack.read_text())
        settings = config["config"]["ddb2bigtable:stage"]
        if "specs" in settings:
            settings["specs"].append("specs/shoporders.yaml")
            stack.write_text(yaml.safe_dump(config, sort_keys=False))
    (copy / "stacks" / "Pulumi.mine.yaml").write_text((copy / "stacks" / "Pulumi.dev.yaml").read_text())
    assert subprocess.run([sys.executable, "-m", "ddb2bigtable", "validate", "specs/shoporders.yaml"], cwd=copy,
                          capture_output=True, timeout=300).returncode == 0  # a spec the stages plan
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *READERS], cwd=copy,
                         env=env, capture_output=True, text=True, timeout=1800)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
