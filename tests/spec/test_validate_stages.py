"""`validate` plans each spec in the stages that list it, so CI fails at its first step on
a spec that is valid alone but that no stage can plan."""

from __future__ import annotations

import subprocess
import sys

from ..conftest import SHIPPED_SPECS, shipped_project, write_project

NINE_REGIONS = """\
version: 1
instance: {id: worldwide}
tables:
  - id: t
    source:
      table: Things
      region: us-east-1
      key: {partition: {name: id, type: S}}
      billing: provisioned
      reads: 100
      writes: 100
      replicas:
        - {region: us-east-2}
        - {region: us-west-1}
        - {region: us-west-2}
        - {region: ca-central-1}
        - {region: ca-west-1}
        - {region: sa-east-1}
        - {region: eu-west-1}
        - {region: eu-west-2}
"""


def validate(root, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ddb2bigtable", "validate", *args, "--root", str(root)],
                          cwd=root, capture_output=True, text=True, timeout=60)


def test_a_spec_no_listing_stage_can_plan_fails_validate(tmp_path):
    root = write_project(tmp_path, {"worldwide": NINE_REGIONS}, stage_name="prod")
    run = validate(root, "specs/worldwide.yaml")
    assert run.returncode == 2, run.stdout
    assert "specs/worldwide.yaml:" in run.stderr and "9" in run.stderr and "(stage prod)" in run.stderr
    assert "Traceback" not in run.stderr


def test_the_same_spec_passes_where_the_stage_keeps_fewer_regions(tmp_path):
    root = write_project(tmp_path, {"worldwide": NINE_REGIONS}, stage={"regions": "home"}, stage_name="dev")
    run = validate(root, "specs/worldwide.yaml")
    assert run.returncode == 0, run.stderr
    assert run.stdout == "ok: specs/worldwide.yaml\n"


def test_an_unlisted_spec_is_checked_against_a_named_stage(tmp_path):
    root = write_project(tmp_path, {"other": NINE_REGIONS.replace("worldwide", "otherone")}, stage_name="prod")
    (root / "specs" / "worldwide.yaml").write_text(NINE_REGIONS)
    assert validate(root, "specs/worldwide.yaml").returncode == 0  # no stage lists it
    run = validate(root, "specs/worldwide.yaml", "--stage", "prod")
    assert run.returncode == 2 and "(stage prod)" in run.stderr


def test_the_repositorys_specs_validate_against_every_stage(tmp_path):
    run = validate(shipped_project(tmp_path), *SHIPPED_SPECS)
    assert run.returncode == 0, run.stderr
