"""Deploy what was reviewed: the review comment records the fingerprint of the inputs its
previews saw, and bigtable-deploy.yml's first job refuses main's commit when its inputs differ
(main moved on between review and merge), when no pull request brought it, or when the review
left no fingerprint; a person may still deploy by hand (deploy_unreviewed)."""

from __future__ import annotations

import subprocess

import pytest

from .jobs import run_github_job, standins, world
from .steps import git, load, pull_request
from .test_review_jobs import RUNNER, VALUES, the_world

DEPLOY = load("bigtable-deploy.yml")
REVIEW = load("bigtable-pr.yml")


def head(repo):
    return subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()


@pytest.fixture
def reviewed(tmp_path):
    """A pull request's checkout and the review comment its preview job posted."""
    repo = pull_request(tmp_path, "specs/product-catalog.yaml", "      reads: 400 ", "      reads: 4000 ")
    ran = run_github_job(REVIEW, "preview", repo, VALUES, {**standins(tmp_path, the_world()), **RUNNER})
    assert ran.returncode == 0, ran.log
    (comment,) = world(tmp_path)["gh"]["comments"]["42"]
    assert comment["body"].splitlines()[1].startswith("<!-- reviewed-inputs: ")
    return repo, comment


def check(tmp_path, repo, comment, pulls, unreviewed=""):
    state = {"gh": {"tokens": {"gh-read": "read"}, "pulls": {"42": {"state": "MERGED"}},
                    "comments": {"42": [comment]}, "commit_pulls": {head(repo): pulls}}}
    values = {"github.token": "gh-read", "inputs.deploy_unreviewed": unreviewed}
    return run_github_job(DEPLOY, "reviewed", repo, values,
                          {**standins(tmp_path / "deploy", state), **RUNNER, "GITHUB_SHA": head(repo)})


def test_every_stage_waits_for_the_check(tmp_path):
    jobs = DEPLOY["jobs"]
    assert jobs["dev"]["needs"] == "reviewed" and jobs["staging"]["needs"] == "dev"
    assert jobs["reviewed"]["env"]["REVIEW_PATHS"] == REVIEW["env"]["REVIEW_PATHS"]


def test_mains_inputs_as_reviewed_deploy(tmp_path, reviewed):
    repo, comment = reviewed
    ran = check(tmp_path, repo, comment, ["42"])
    assert ran.returncode == 0, ran.log
    assert "are those pull request #42's review showed" in ran.log


def test_main_moved_on_since_the_review_is_refused_unless_by_hand(tmp_path, reviewed):
    repo, comment = reviewed
    spec = repo / "specs" / "movies.yaml"
    spec.write_text(spec.read_text() + "\n")  # another merge landed in between
    git(repo, "commit", "-q", "-am", "main moved on")
    ran = check(tmp_path, repo, comment, ["42"])
    assert ran.returncode == 1 and "main moved on" in ran.log, ran.log
    by_hand = check(tmp_path / "again", repo, comment, ["42"], unreviewed="true")
    assert by_hand.returncode == 0 and "as asked by hand" in by_hand.log


def test_a_commit_no_pull_request_brought_is_refused(tmp_path, reviewed):
    repo, comment = reviewed
    ran = check(tmp_path, repo, comment, [])
    assert ran.returncode == 1 and "nothing was reviewed" in ran.log


def test_a_review_without_its_fingerprint_is_refused(tmp_path, reviewed):
    repo, comment = reviewed
    ran = check(tmp_path, repo, {**comment, "body": comment["body"].replace("reviewed-inputs", "x")}, ["42"])
    assert ran.returncode == 1 and "has no review comment with its inputs" in ran.log
