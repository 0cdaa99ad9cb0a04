"""bigtable-pr.yml's jobs run whole, under GitHub's shell, with stand-in `pulumi` and `gh`:
the gate reads the labels as they are when it runs, the previews run in the `preview`
environment with the read-only identity and create a stage's missing stack, one comment per
pull request is updated in place (found on any page), and a fork's pull request never needs
a write token."""

from __future__ import annotations

import subprocess

import pytest

from .jobs import GITHUB_BASH, GITHUB_DEFAULT, github_shell, run_github_job, standins, world
from .steps import load, pull_request

WORKFLOW = load("bigtable-pr.yml")
PREVIEW_SA = "preview@my-project.iam.gserviceaccount.com"
VALUES = {"github.base_ref": "main", "github.event.pull_request.number": "42", "github.token": "gh-read",
          "secrets.PULUMI_ACCESS_TOKEN": "token", "vars.GCP_WORKLOAD_IDENTITY_PROVIDER":
          "projects/1/locations/global/workloadIdentityPools/ci/providers/github",
          "vars.GCP_PREVIEW_SERVICE_ACCOUNT": PREVIEW_SA}
RUNNER = {"GITHUB_REPOSITORY": "acme/tables", "GITHUB_SERVER_URL": "https://github.com", "GITHUB_RUN_ID": "7"}
MARKER = "<!-- ddb2bigtable-review -->"


def the_world(labels=(), token_kind="write", comments=(), stacks=None, pulumi_tokens=("token",)):
    return {"gh": {"tokens": {"gh-read": token_kind}, "pulls": {"42": {"state": "OPEN", "labels": list(labels)}},
                   "comments": {"42": list(comments)}},
            "pulumi": {"tokens": list(pulumi_tokens), "stacks": stacks or {}}}


def run(tmp_path, job, repo, world_, values=None):
    env = {**standins(tmp_path, world_), **RUNNER}
    return run_github_job(WORKFLOW, job, repo, {**VALUES, **(values or {})}, env)


def test_every_run_step_goes_under_bash_with_pipefail_not_githubs_bare_default():
    """Without `shell`, GitHub runs `bash -e {0}`: a failed command before a pipe passes."""
    for name in ("bigtable-pr.yml", "bigtable-deploy.yml", "bigtable-pr-stage.yml", "bigtable-drift.yml",
                 "prices-refresh.yml"):
        workflow = load(name)
        for job in workflow["jobs"].values():
            for step in job["steps"]:
                if "run" in step:
                    assert github_shell(workflow, job, step) == GITHUB_BASH, (name, step.get("name"))
    pipe = "false | cat\n"
    assert subprocess.run([*GITHUB_DEFAULT, "-c", pipe]).returncode == 0
    assert subprocess.run([*GITHUB_BASH, "-c", pipe]).returncode == 1


def test_the_trigger_has_labeled_and_no_path_filter():
    on = WORKFLOW[True]["pull_request"]  # YAML 1.1 reads the key `on` as true
    assert {"labeled", "unlabeled", "synchronize"} <= set(on["types"]) and "paths" not in on


@pytest.fixture
def destructive(tmp_path):
    return pull_request(tmp_path, "specs/product-catalog.yaml", "  storage: ssd ", "  storage: hdd ")


def test_the_changes_job_says_whether_the_review_runs(tmp_path, destructive):
    ran = run(tmp_path, "changes", destructive, the_world())
    assert ran.returncode == 0, ran.log
    assert (destructive / "changed.txt").read_text() == "specs/product-catalog.yaml\n"


def test_a_destructive_change_is_refused_without_the_label_as_it_is_now(tmp_path, destructive):
    ran = run(tmp_path, "diff", destructive, the_world(labels=["db"]))
    assert ran.returncode == 1 and ran.failed_step == "the review's policy", ran.log
    assert "allow-destructive" in ran.log and "DESTRUCTIVE" in ran.summary
    assert "destructive" in ran.log  # diff --fail-on names the rule that tripped


def test_the_label_added_since_the_event_lets_it_through(tmp_path, destructive):
    # the event payload (not read) had no label; the pull request has it now
    ran = run(tmp_path, "diff", destructive, the_world(labels=["allow-destructive"]))
    assert ran.returncode == 0, ran.log
    assert "destructive changes are let through" in ran.log
    assert ["gh", "pr", "view", "42", "--repo", "acme/tables", "--json", "labels", "--jq", ".labels[].name"] in \
        world(tmp_path)["calls"]


def test_a_fork_gets_the_diff_in_the_summary_and_needs_no_write_token(tmp_path, destructive):
    jobs = WORKFLOW["jobs"]
    assert jobs["diff"]["permissions"] == {"contents": "read", "pull-requests": "read"}
    assert "head.repo.full_name == github.repository" in jobs["preview"]["if"]  # no secrets for a fork
    ran = run(tmp_path, "diff", destructive, the_world(labels=["allow-destructive"], token_kind="read"))
    assert ran.returncode == 0, ran.log
    assert ran.summary.startswith("<!-- ddb2bigtable-diff -->")


def test_previews_run_in_their_environment_as_the_preview_identity_and_create_missing_stacks(tmp_path, destructive):
    job = WORKFLOW["jobs"]["preview"]
    assert job["environment"] == "preview"
    ran = run(tmp_path, "preview", destructive, the_world(stacks={"dev": {"resources": 12}}))
    assert ran.returncode == 0, ran.log
    assert ran.identities == [PREVIEW_SA]
    assert set(world(tmp_path)["pulumi"]["stacks"]) == {"dev", "staging", "prod"}
    (comment,) = world(tmp_path)["gh"]["comments"]["42"]
    assert comment["body"].startswith(MARKER + "\n") and "DESTRUCTIVE" in comment["body"]
    assert "- `dev`: ok" in comment["body"] and "- `prod`: ok" in comment["body"]
    assert "pulumi preview of staging: exit 0" in ran.summary


def test_one_comment_updated_in_place_even_past_the_first_page(tmp_path, destructive):
    others = [{"id": i, "body": f"comment {i}"} for i in range(1, 46)]
    others.insert(39, {"id": 99, "body": MARKER + "\nthe review of an earlier push"})
    ran = run(tmp_path, "preview", destructive, the_world(comments=others))
    assert ran.returncode == 0, ran.log
    comments = world(tmp_path)["gh"]["comments"]["42"]
    assert len(comments) == 46 and [c["id"] for c in comments if c["body"].startswith(MARKER)] == [99]
    assert "earlier push" not in next(c for c in comments if c["id"] == 99)["body"]


def test_an_expired_pulumi_token_fails_the_previews_and_says_so_in_the_comment(tmp_path, destructive):
    ran = run(tmp_path, "preview", destructive, the_world(pulumi_tokens=("another-token",)))
    assert ran.returncode == 1, ran.log
    assert "invalid access token" in ran.summary
    (comment,) = world(tmp_path)["gh"]["comments"]["42"]
    assert "- `dev`: **FAILED** (exit 255)" in comment["body"]


def test_the_policy_rules_in_policy_fail_the_review_and_are_the_same_on_gitlab(tmp_path):
    """POLICY is the place for the review's rules: its cost-increase rule refuses a pull request
    whose stage cost rises past it, label or not (allow-destructive lets only destructive through)."""
    assert WORKFLOW["env"]["POLICY"] == load("gitlab-ci.yml")["variables"]["POLICY"] == "cost-increase:50"
    costly = pull_request(tmp_path, "specs/product-catalog.yaml", "      reads: 400 ", "      reads: 400000 ")
    ran = run(tmp_path, "diff", costly, the_world(labels=["allow-destructive"]))
    assert ran.returncode == 1 and ran.failed_step == "the review's policy", ran.log
    assert "cost-increase" in ran.log and "refuses this pull request" in ran.log
