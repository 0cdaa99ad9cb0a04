"""bigtable-drift.yml and gitlab-ci.yml's drift-check run whole with stand-in `pulumi` and
`gh` and a local GitLab API: each stage previewed with `--refresh --expect-no-changes` by the
read-only identity; a drifted stage, or one that could not be asked, goes into one issue,
opened or updated, closed when every stage matches."""

from __future__ import annotations

import pytest

from . import fake_gitlab
from .jobs import gitlab_job, run_github_job, run_gitlab_job, standins, world
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


# GitLab's drift-check: the same check, its one issue through GitLab's REST API (fake_gitlab)
PIPELINE = load("gitlab-ci.yml")


@pytest.fixture
def gitlab():
    api = fake_gitlab.GitLab()
    for url in fake_gitlab.serve(api):
        api.url = url  # type: ignore[attr-defined]
        yield api


def run_gitlab(tmp_path, gitlab, pulumi):
    root = project(tmp_path / "repo")
    given = {"CI_API_V4_URL": gitlab.url, "CI_PROJECT_ID": "1", "CI_PIPELINE_URL": "https://gitlab/p/9",
             "DDB2BIGTABLE_GITLAB_TOKEN": fake_gitlab.TOKEN, "PULUMI_PREVIEW_ACCESS_TOKEN": "preview-token",
             "GCP_PREVIEW_SERVICE_ACCOUNT": "preview@p.iam.gserviceaccount.com",
             "GCP_WORKLOAD_IDENTITY_PROVIDER": "projects/1/locations/global/workloadIdentityPools/ci/providers/gitlab"}
    return run_gitlab_job(PIPELINE, "drift-check", root, given,
                          standins(tmp_path, {"pulumi": {"tokens": ["preview-token"], **pulumi}}))


def test_gitlab_runs_it_on_the_schedule_as_the_read_only_identity():
    job = gitlab_job(PIPELINE, "drift-check")
    assert job["rules"] == [{"if": '$CI_PIPELINE_SOURCE == "schedule"'}]
    assert job["variables"]["GCP_SERVICE_ACCOUNT"] == "$GCP_PREVIEW_SERVICE_ACCOUNT"


def test_gitlab_no_drift_opens_nothing_and_closes_the_open_issue(tmp_path, gitlab):
    gitlab.issues = [{"iid": 3, "title": "old", "labels": ["bigtable-drift"], "state": "opened",
                      "description": "old", "notes": []},
                     {"iid": 4, "title": "other", "labels": ["db"], "state": "opened", "description": "", "notes": []}]
    ran = run_gitlab(tmp_path, gitlab, {"stacks": stacks()})
    assert ran.returncode == 0, ran.log
    assert [(i["iid"], i["state"]) for i in gitlab.issues] == [(3, "closed"), (4, "opened")]
    assert "matches its code again" in gitlab.issues[0]["notes"][0]


def test_gitlab_a_drifted_stage_opens_one_issue_then_updates_it(tmp_path, gitlab):
    ran = run_gitlab(tmp_path, gitlab, {"stacks": stacks(prod=True)})
    assert ran.returncode == 1, ran.log
    (issue,) = gitlab.issues
    assert issue["labels"] == ["bigtable-drift"] and "### `prod` drifted" in issue["description"]
    assert "`dev`" not in issue["description"] and "~ 1 to update" in issue["description"]
    again = run_gitlab(tmp_path / "next-night", gitlab, {"stacks": stacks(dev=True, prod=True)})
    assert again.returncode == 1, again.log
    (updated,) = gitlab.issues
    assert "### `dev` drifted" in updated["description"] and updated["iid"] == issue["iid"]


@pytest.mark.parametrize("pulumi", [{"tokens": ["another"]}, {"outage": "[503] Service Unavailable"}])
def test_gitlab_a_check_that_could_not_ask_is_not_no_drift(tmp_path, gitlab, pulumi):
    ran = run_gitlab(tmp_path, gitlab, {"stacks": stacks(), **pulumi})
    assert ran.returncode == 1, ran.log
    (issue,) = gitlab.issues
    assert "### `dev` could not be checked" in issue["description"]


def test_gitlab_a_refused_api_token_fails_the_check_even_without_drift(tmp_path, gitlab):
    gitlab.issues = [{"iid": 3, "title": "old", "labels": ["bigtable-drift"], "state": "opened",
                      "description": "old", "notes": []}]
    root = project(tmp_path / "repo")
    given = {"CI_API_V4_URL": gitlab.url, "CI_PROJECT_ID": "1", "DDB2BIGTABLE_GITLAB_TOKEN": "expired",
             "PULUMI_PREVIEW_ACCESS_TOKEN": "preview-token", "GCP_PREVIEW_SERVICE_ACCOUNT": "p@p",
             "GCP_WORKLOAD_IDENTITY_PROVIDER": "projects/1/x"}
    ran = run_gitlab_job(PIPELINE, "drift-check", root, given,
                         standins(tmp_path, {"pulumi": {"tokens": ["preview-token"], "stacks": stacks()}}))
    assert ran.returncode == 1 and "401 Unauthorized" in ran.log
    assert gitlab.issues[0]["state"] == "opened"
