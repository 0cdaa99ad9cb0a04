"""gitlab-ci.yml: the jobs' ddb2bigtable lines run as GitLab runs a script (one bash, each
line in turn, `set -eo pipefail`), with the job's variables and GitLab's predefined ones."""

from __future__ import annotations

import json
import re
import subprocess

import pytest

from ...pulumi_harness import run_program
from .steps import bash, load, project, pull_request, pulumi_config, write_stack

PIPELINE = load("gitlab-ci.yml")
MERGE_REQUEST = {"CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "main", "CI_MERGE_REQUEST_IID": "7",
                 "CI_MERGE_REQUEST_LABELS": "", "CI_PROJECT_ID": "1", "CI_API_V4_URL": "http://127.0.0.1:9/api/v4",
                 "GCP_PR_PROJECT": "my-project-dev", "PR_SAMPLE_EXPORT": "gs://my-exports/sample",
                 "PR_TEMP_LOCATION": "gs://my-exports/tmp",
                 "PR_LOAD_SERVICE_ACCOUNT": "loader@my-project-dev.iam.gserviceaccount.com",
                 "SERVE_IMAGE": "us-docker.pkg.dev/my-project-dev/images/ddb2bigtable@sha256:" + "0" * 64,
                 "SERVE_INVOKER": "serviceAccount:tests@my-project-dev.iam.gserviceaccount.com",
                 "GCP_REVIEW_SERVICE_ACCOUNT": "ci-review@my-ci.iam.gserviceaccount.com",
                 "PULUMI_REVIEW_ACCESS_TOKEN": "review-token"}


def job(name: str) -> dict:
    """The job with what it `extends` merged in (one level, as this file uses it)."""
    body = PIPELINE[name]
    parent = body.get("extends")
    return {**(job(parent) if parent else {}), **body}


def variables(name: str) -> dict[str, str]:
    """The job's variables, with $CI_* and earlier variables expanded as GitLab does."""
    values = {**MERGE_REQUEST, **{k: str(v) for k, v in PIPELINE["variables"].items()}}
    for key, value in job(name).get("variables", {}).items():
        values[key] = re.sub(r"\$(\w+)", lambda m: values[m.group(1)], str(value))
    return values


def script(name: str, without: str = "pulumi") -> str:
    """The job's script lines, those that call `without` left out (Pulumi is not here)."""
    lines = [line for line in job(name)["script"] if not line.lstrip().startswith(without)]
    return "\n".join(lines) + "\n"


def test_every_ddb2bigtable_line_is_in_a_job_run_here():
    runs = {name for name, body in PIPELINE.items()
            if isinstance(body, dict) and "ddb2bigtable " in "\n".join(body.get("script", []))}
    assert runs == {"diff", "local", ".deploy", "review-stage"}


def test_deploy_promotes_dev_staging_then_prod_by_hand_one_stack_at_a_time():
    assert [job(j).get("needs") for j in ("deploy-dev", "deploy-staging", "deploy-prod")] == \
        [None, ["deploy-dev"], ["deploy-staging"]]
    assert [job(j)["environment"]["name"] for j in ("deploy-dev", "deploy-staging", "deploy-prod")] == \
        ["dev", "staging", "prod"]
    assert PIPELINE["deploy-prod"]["rules"][0]["when"] == "manual"
    assert PIPELINE[".deploy"]["resource_group"] == "pulumi-$STACK" and PIPELINE["default"]["interruptible"] is False
    stage, stop = job("review-stage"), job("stop-review-stage")
    assert stage["environment"]["on_stop"] == "stop-review-stage" and stop["environment"]["action"] == "stop"
    assert stage["resource_group"] == stop["resource_group"] == "pulumi-pr-$CI_MERGE_REQUEST_IID"
    assert "GITLAB_OIDC_TOKEN" in PIPELINE[".pulumi"]["id_tokens"]  # workload identity, no key


@pytest.mark.parametrize("labels,code", [("", 1), ("db,allow-destructive", 0)])
def test_without_a_gitlab_token_the_diff_job_reads_the_pipelines_labels(tmp_path, labels, code):
    """No DDB2BIGTABLE_GITLAB_TOKEN: no note, and the labels the pipeline started with (the
    token's way, labels read when the job runs: test_gitlab_jobs.py)."""
    repo = pull_request(tmp_path, "specs/product-catalog.yaml", "  storage: ssd ", "  storage: hdd ")
    base = subprocess.run(["git", "-C", str(repo), "merge-base", "HEAD", "origin/main"], capture_output=True,
                          text=True, check=True).stdout.strip()
    ran = bash(script("diff"), repo, {**variables("diff"), "CI_MERGE_REQUEST_LABELS": labels,
                                      "CI_MERGE_REQUEST_DIFF_BASE_SHA": base})
    assert ran.returncode == code, ran.stderr
    assert (repo / "diff.md").read_text().startswith("<!-- ddb2bigtable-diff -->")
    assert json.loads((repo / "diff.json").read_text())["destructive"] > 0
    assert "no DDB2BIGTABLE_GITLAB_TOKEN" in ran.stdout
    assert ("refuses this merge request" in ran.stdout) == (code == 1)


def test_the_review_stage_plans_its_stack_and_gives_the_environment_the_serve_url(tmp_path):
    root = project(tmp_path)
    values = variables("review-stage")
    assert values["STACK"] == "pr-7"
    config = pulumi_config(script("review-stage", without="uv run"), values)
    write_stack(root, "pr-7", config)
    (root / "outputs.json").write_text(json.dumps(outputs := run_program("pr-7", config=config).outputs))
    ran = bash(script("review-stage"), root, values)
    assert ran.returncode == 0, ran.stderr
    assert "shop-global-pr-7" in (root / "plan.md").read_text()
    (url,) = outputs["serve_endpoint_urls"].values()
    assert (root / "stage.env").read_text() == f"SERVE_URL={url}\n" and url in ran.stdout
    assert PIPELINE["review-stage"]["environment"]["url"] == "$SERVE_URL"


@pytest.mark.slow
def test_the_local_job_loads_and_verifies_on_the_emulator(tmp_path):
    root = project(tmp_path, "exports")
    ran = bash(script("local"), root, variables("local"))
    assert ran.returncode == 0, ran.stdout[-2000:]
    assert "local stage ready" in (root / "up.txt").read_text()
