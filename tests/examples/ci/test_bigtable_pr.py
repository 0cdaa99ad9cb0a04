"""bigtable-pr.yml, the review: its diff step runs on a pull request's checkout (the whole
jobs, the gate and the previews: test_review_jobs.py)."""

from __future__ import annotations

import pytest

from .steps import bash, ddb2bigtable_steps, github_env, load, project, pull_request, step

WORKFLOW = load("bigtable-pr.yml")
EVENT = {"github.base_ref": "main"}
DIFF = "capacity and cost diff"


def test_every_ddb2bigtable_step_is_run_here():
    """Here and in test_review_jobs.py, which runs the diff and preview jobs whole."""
    assert ddb2bigtable_steps(WORKFLOW) == {("diff", DIFF), ("diff", "the review's policy"),
                                            ("local", "ddb2bigtable up --stage local"),
                                            ("preview", "previews and the review comment")}


def run_diff(repo):
    diff = step(WORKFLOW, "diff", DIFF)
    return bash(diff["run"], repo, github_env(WORKFLOW, "diff", diff, EVENT))


def test_a_replaced_instance_is_in_the_summary_as_destructive(tmp_path):
    repo = pull_request(tmp_path, "specs/product-catalog.yaml", "  storage: ssd ", "  storage: hdd ")
    ran = run_diff(repo)
    assert ran.returncode == 0, ran.stderr
    comment = (repo / "diff.md").read_text()
    assert comment.startswith("<!-- ddb2bigtable-diff -->") and "DESTRUCTIVE" in comment and comment in ran.summary


def test_more_capacity_is_commented_with_no_destructive_change(tmp_path):
    repo = pull_request(tmp_path, "specs/product-catalog.yaml", "      reads: 400 ", "      reads: 4000 ")
    ran = run_diff(repo)
    assert ran.returncode == 0, ran.stderr
    comment = (repo / "diff.md").read_text()
    assert "DESTRUCTIVE" not in comment and "| prod |" in comment and comment in ran.summary


def test_an_invalid_spec_fails_the_step_with_the_located_error_and_no_output(tmp_path):
    repo = pull_request(tmp_path, "specs/movies.yaml", "version: 1", "version: 1\nbogus_key: 1")
    ran = run_diff(repo)
    assert ran.returncode == 2
    assert "specs/movies.yaml" in ran.stderr and "Traceback" not in ran.stderr


@pytest.mark.slow
def test_the_local_job_loads_and_verifies_the_sample_exports_on_the_emulator(tmp_path):
    root = project(tmp_path, "exports")
    up = step(WORKFLOW, "local", "ddb2bigtable up --stage local")
    ran = bash(up["run"], root, github_env(WORKFLOW, "local", up, EVENT))
    assert ran.returncode == 0, ran.summary
    assert "### `ddb2bigtable up --stage local`: exit 0" in ran.summary
    assert "local stage ready" in ran.summary
