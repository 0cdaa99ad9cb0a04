"""bigtable-pr-stage.yml's jobs run whole, under GitHub's shell, with stand-in `pulumi` and
`gh`: the stage is configured, planned, deployed and commented once; teardown and sweep tell
"no such stack" from "could not ask" and fail on the second; the prices pull request starts
no stage."""

from __future__ import annotations

import re

import pytest

from ...pulumi_harness import run_program
from .jobs import run_github_job, standins, world
from .steps import load, project, step

WORKFLOW = load("bigtable-pr-stage.yml")
VALUES = {"github.event.pull_request.number": "123", "github.token": "gh-token",
          "secrets.PULUMI_ACCESS_TOKEN": "token", "vars.GCP_WORKLOAD_IDENTITY_PROVIDER": "projects/1/x",
          "vars.GCP_REVIEW_SERVICE_ACCOUNT": "review@p.iam.gserviceaccount.com",
          "vars.GCP_PR_PROJECT": "my-project-dev", "vars.PR_SAMPLE_EXPORT": "gs://my-exports/sample",
          "vars.PR_TEMP_LOCATION": "gs://my-exports/tmp",
          "vars.PR_LOAD_SERVICE_ACCOUNT": "loader@my-project-dev.iam.gserviceaccount.com",
          "vars.SERVE_IMAGE": "us-docker.pkg.dev/my-project-dev/images/ddb2bigtable@sha256:" + "0" * 64,
          "vars.SERVE_INVOKER": "serviceAccount:tests@my-project-dev.iam.gserviceaccount.com",
          "vars.PR_STAGE_MAX_HOURLY_USD || '10'": "10"}
RUNNER = {"GITHUB_REPOSITORY": "acme/tables"}


def the_world(stacks=None, pulls=None, pulumi_tokens=("token",), gh_tokens=None, **pulumi):
    return {"gh": {"tokens": gh_tokens if gh_tokens is not None else {"gh-token": "write"},
                   "pulls": pulls or {"123": {"state": "OPEN"}}},
            "pulumi": {"tokens": list(pulumi_tokens), "stacks": stacks or {}, **pulumi}}


def run(tmp_path, job, world_, values=None):
    root = project(tmp_path / "repo")
    return root, run_github_job(WORKFLOW, job, root, {**VALUES, **(values or {})},
                                {**standins(tmp_path, world_), **RUNNER})


def test_the_prices_pull_request_starts_no_stage():
    paths = WORKFLOW[True]["pull_request"]["paths"]  # YAML 1.1 reads the key `on` as true
    assert "prices.lock.json" not in paths and "specs/**" in paths
    assert "prices.lock.json" in load("prices-refresh.yml")["jobs"]["refresh"]["steps"][-1]["with"]["add-paths"]


def test_the_stage_job_configures_plans_deploys_and_comments_once(tmp_path):
    config_step = step(WORKFLOW, "stage", "the stack pr-<number> from the pr template")
    assert "pulumi stack select --create" in config_step["run"]
    from .test_bigtable_pr_stage import stage_config
    outputs = run_program("pr-123", config=stage_config()).outputs
    world_ = the_world(outputs_after_up={"pr-123": outputs})
    root, ran = run(tmp_path, "stage", world_)
    assert ran.returncode == 0, ran.log
    assert "shop-global-pr-123" in ran.summary and "### Stage `pr-123` deployed" in ran.summary
    state = world(tmp_path)
    assert state["pulumi"]["stacks"]["pr-123"]["resources"] > 0
    (comment,) = state["gh"]["comments"]["123"]
    assert comment["body"].startswith("<!-- ddb2bigtable-stage -->") and next(iter(outputs["serve_endpoint_urls"].values())) in comment["body"]
    root2, again = run(tmp_path / "again", "stage", {**world(tmp_path), "calls": []})  # the next push
    assert again.returncode == 0, again.log
    (updated,) = world(tmp_path / "again")["gh"]["comments"]["123"]
    assert updated["id"] == comment["id"]


@pytest.mark.parametrize("labels,code", [(["db"], 1), (["allow-stage-cost"], 0)])
def test_a_stage_over_the_hourly_cap_starts_only_with_the_label(tmp_path, labels, code):
    assert "labeled" in WORKFLOW[True]["pull_request"]["types"]
    world_ = the_world(pulls={"123": {"state": "OPEN", "labels": labels}})
    root, ran = run(tmp_path, "stage", world_, {"vars.PR_STAGE_MAX_HOURLY_USD || '10'": "5"})
    assert ran.returncode == code, ran.log
    hourly = re.search(r"about \$([\d.]+) an hour of Bigtable", ran.summary)
    assert hourly and 5 < float(hourly.group(1)) < 10  # the example specs' pr stage: some $7 an hour
    ups = [c for c in world(tmp_path)["calls"] if c[:2] == ["pulumi", "up"]]
    assert bool(ups) == (code == 0)
    if code:
        assert "over the cap of $5" in ran.log and "Nothing was created" in ran.log


@pytest.mark.parametrize("case,stacks,tokens,code,said", [
    ("deployed", {"pr-123": {"resources": 12}}, ("token",), 0, "destroyed and its stack removed"),
    ("never deployed", {"pr-7": {"resources": 3}}, ("token",), 0, "no stack, nothing to tear down"),
    ("expired token", {"pr-123": {"resources": 12}}, ("other",), 255, ""),
])
def test_teardown_tells_no_stack_from_could_not_ask(tmp_path, case, stacks, tokens, code, said):
    root, ran = run(tmp_path, "teardown", the_world(stacks=stacks, pulumi_tokens=tokens))
    assert ran.returncode == code, ran.log
    assert said in ran.summary
    if code:
        assert "invalid access token" in ran.log and "nothing to tear down" not in ran.log
    assert ("pr-123" in world(tmp_path)["pulumi"]["stacks"]) == (case == "expired token")


def test_teardown_fails_while_an_update_holds_the_stack(tmp_path):
    root, ran = run(tmp_path, "teardown", the_world(stacks={"pr-123": {"resources": 12}}, locked=["pr-123"]))
    assert ran.returncode == 255 and "[409] Conflict" in ran.log


def test_the_sweep_removes_closed_pull_requests_stages_and_keeps_open_ones(tmp_path):
    stacks = {"pr-1": {"resources": 5}, "pr-2": {"resources": 5}, "pr-3": {"resources": 0}, "dev": {"resources": 9}}
    pulls = {"1": {"state": "MERGED"}, "2": {"state": "OPEN"}, "3": {"state": "CLOSED"}}
    root, ran = run(tmp_path, "sweep", the_world(stacks=stacks, pulls=pulls, org="acme"))
    assert ran.returncode == 0, ran.log
    assert set(world(tmp_path)["pulumi"]["stacks"]) == {"pr-2", "dev"}
    assert "`pr-1` (pull request MERGED): destroyed and removed" in ran.summary


@pytest.mark.parametrize("world_,said", [
    ({"pulumi_tokens": ("other",)}, "invalid access token"),                   # expired Pulumi token
    ({"outage": "[503] Service Unavailable"}, "[503] Service Unavailable"),    # Pulumi Cloud down
    ({"gh_tokens": {}, "stacks": {"pr-1": {"resources": 5}}}, "Bad credentials"),  # GitHub refuses the token
    ({"stacks": {"pr-9": {"resources": 5}}}, "Could not resolve to a PullRequest"),
    ({"stacks": {"pr-1": {"resources": 5}}, "pulls": {"1": {"state": "CLOSED"}}, "locked": ["pr-1"]}, "[409] Conflict"),
])
def test_the_sweep_fails_when_it_could_not_ask_or_could_not_remove(tmp_path, world_, said):
    root, ran = run(tmp_path, "sweep", the_world(**world_))
    assert ran.returncode != 0, ran.log
    assert said in ran.log
