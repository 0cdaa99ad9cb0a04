"""prices-refresh.yml: its refresh step runs against the local stand-ins of the two price
APIs (tests/prices/fakes.py), and the pull request it opens carries only the lock."""

from __future__ import annotations

import json
import re

import pytest

from ...prices.fakes import Fake, serve
from .steps import bash, ddb2bigtable_steps, github_env, load, project, step

WORKFLOW = load("prices-refresh.yml")
REFRESH = "refresh prices.lock.json"


@pytest.fixture
def fake():
    yield from serve(Fake())


def test_every_ddb2bigtable_step_is_run_here():
    assert ddb2bigtable_steps(WORKFLOW) == {("refresh", REFRESH)}


def run_refresh(tmp_path, fake, regions: str):
    refresh = step(WORKFLOW, "refresh", REFRESH)
    # The one change to the step's script: Google's API is the fake's (AWS's comes from
    # AWS_ENDPOINT_URL_PRICING, as configure-aws-credentials leaves AWS_* in the job).
    script = refresh["run"].replace("ddb2bigtable prices refresh", f"ddb2bigtable prices refresh --gcp-endpoint {fake.url}")
    env = github_env(WORKFLOW, "refresh", refresh, {"secrets.GCP_PRICES_API_KEY": "test-key",
                                                    "vars.PRICE_REGIONS": regions})
    env.update({"AWS_ENDPOINT_URL_PRICING": fake.url, "AWS_ACCESS_KEY_ID": "testing",
                "AWS_SECRET_ACCESS_KEY": "testing", "AWS_CONFIG_FILE": str(tmp_path / "none"),
                "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "none")})
    return bash(script, project(tmp_path / "project"), env)


@pytest.mark.slow
@pytest.mark.parametrize("regions", ["us-east-1,eu-west-1", ""])
def test_the_refresh_step_writes_the_lock_and_plans_prod_with_it(tmp_path, fake, regions):
    ran = run_refresh(tmp_path, fake, regions)
    assert ran.returncode == 0, ran.stderr
    root = tmp_path / "project"
    lock = json.loads((root / "prices.lock.json").read_text())
    assert lock["fetched"] and fake.gcp_requests and fake.aws_requests
    assert "shop-global" in (root / "plan-prod.md").read_text()


def test_a_failing_price_api_fails_the_step_before_any_pull_request(tmp_path):
    for failing in serve(Fake(gcp_mode="fail")):
        ran = run_refresh(tmp_path, failing, "us-east-1")
        assert ran.returncode == 1 and "Traceback" not in ran.stderr
        assert not (tmp_path / "project" / "prices.lock.json").exists()


def test_the_refresh_runs_on_a_schedule():
    triggers = WORKFLOW[True]  # YAML 1.1 reads the key `on` as true
    assert triggers["schedule"] and "workflow_dispatch" in triggers
    assert re.fullmatch(r"[\d*]+ [\d*]+ [\d*]+ [\d*]+ [\d*]+", triggers["schedule"][0]["cron"])


def test_the_pull_request_it_opens_carries_only_the_lock_and_can_trigger_the_diff():
    opened = next(s for s in WORKFLOW["jobs"]["refresh"]["steps"] if "create-pull-request" in s.get("uses", ""))
    assert opened["with"]["add-paths"] == "prices.lock.json"
    assert "GITHUB_TOKEN" not in opened["with"]["token"]  # its pull requests would not run bigtable-pr.yml
    diff = load("bigtable-pr.yml")
    assert "paths" not in diff[True]["pull_request"] and "prices.lock.json" in diff["env"]["REVIEW_PATHS"].split()
