"""bigtable-drift.yml run whole with stand-in `pulumi` and `gh`: each stage previewed with
`--refresh --expect-no-changes` by the read-only identity; a drifted stage, or one that could
not be asked, goes into one issue, opened or updated, closed when every stage matches."""

from __future__ import annotations

import pytest

from .jobs import run_github_job, standins, world
from .steps import load, project

WORKFLOW = load("bigtable-drift.yml")
VALUES = {"github.token": "gh-token", "secrets.PULUMI_ACCESS_TOKEN": "token",
          "vars.GCP_WORKLOAD_IDENTITY_PROVIDER": "projects/1/x",
          "vars.GCP_PREVIEW_SERVICE_ACCOUNT": "ci-preview@acme-ci.iam.gserviceaccount.com"}
RUNNER = {"GITHUB_REPOSITORY": "acme/tables", "GITHUB_SERVER_URL": "https://github.com", "GITHUB_RUN_ID": "9"}
STEP = "preview every stage against the cloud, and the drift issue"


def stacks(**drift):
    return {s: {"resources": 12, "drift": drift.get(s, False)} for s in ("dev", "staging", "prod")}


def run(tmp_path, world_):
    root = project(tmp_path / "repo")
    world_ = {"gh": {"tokens": {"gh-token": "write"}, **world_.get("gh", {})},
              "pulumi": {"tokens": ["token"], **world_.get("pulumi", {})}}
    return run_github_job(WORKFLOW, "drift", root, VALUES, {**standins(tmp_path, world_), **RUNNER})


def test_it_runs_nightly_as_the_read_only_identity():
    assert WORKFLOW[True]["schedule"] and WORKFLOW["jobs"]["drift"]["environment"] == "preview"
    assert "--refresh --expect-no-changes" in next(s for s in WORKFLOW["jobs"]["drift"]["steps"] if s.get("name") == STEP)["run"]


def test_no_drift_opens_nothing_and_closes_the_open_issue(tmp_path):
    issue = {"number": 4, "labels": ["bigtable-drift"], "state": "open", "body": "old", "comments": []}
    ran = run(tmp_path, {"pulumi": {"stacks": stacks()}, "gh": {"issues": [issue]}})
    assert ran.returncode == 0, ran.log
    assert ran.identities == [VALUES["vars.GCP_PREVIEW_SERVICE_ACCOUNT"]]
    (closed,) = world(tmp_path)["gh"]["issues"]
    assert closed["state"] == "closed" and "matches its code again" in closed["comments"][0]


def test_a_drifted_stage_opens_one_issue_then_updates_it(tmp_path):
    ran = run(tmp_path, {"pulumi": {"stacks": stacks(prod=True)}})
    assert ran.returncode == 1, ran.log
    (issue,) = world(tmp_path)["gh"]["issues"]
    assert issue["labels"] == ["bigtable-drift"] and "### `prod` drifted" in issue["body"]
    assert "`dev`" not in issue["body"] and "~ 1 to update" in issue["body"]
    again = run(tmp_path / "next-night", {"pulumi": {"stacks": stacks(dev=True, prod=True)},
                                          "gh": {"issues": world(tmp_path)["gh"]["issues"]}})
    assert again.returncode == 1, again.log
    (updated,) = world(tmp_path / "next-night")["gh"]["issues"]
    assert "### `dev` drifted" in updated["body"] and updated["number"] == issue["number"]


@pytest.mark.parametrize("pulumi", [{"tokens": ["another"]}, {"outage": "[503] Service Unavailable"}])
def test_a_check_that_could_not_ask_is_not_no_drift(tmp_path, pulumi):
    ran = run(tmp_path, {"pulumi": {"stacks": stacks(), **pulumi}})
    assert ran.returncode == 1, ran.log
    (issue,) = world(tmp_path)["gh"]["issues"]
    assert "### `dev` could not be checked" in issue["body"] and "drifted" not in issue["body"].split("###")[1]
