"""bigtable-deploy.yml: the promotion's shape, and its ddb2bigtable steps run for every stage."""

from __future__ import annotations

import json

import pytest

from ...pulumi_harness import run_program, stack_config
from .steps import bash, ddb2bigtable_steps, github_env, load, project, step

WORKFLOW = load("bigtable-deploy.yml")
STAGES = ["dev", "staging", "prod"]


def test_every_ddb2bigtable_step_is_run_here():
    assert ddb2bigtable_steps(WORKFLOW) == {(s, "the plan being deployed") for s in STAGES}


def test_each_stage_needs_the_one_before_in_its_own_environment_and_never_cancels_an_up():
    jobs = WORKFLOW["jobs"]
    assert [jobs[s].get("needs") for s in STAGES] == ["reviewed", "dev", "staging"]  # a failed up stops the promotion
    for stage in STAGES:
        job = jobs[stage]
        assert job["environment"] == stage and job["env"]["STACK"] == stage
        assert job["concurrency"] == {"group": f"pulumi-{stage}", "cancel-in-progress": False}
        assert job["permissions"] == {"contents": "read", "id-token": "write"}
    assert WORKFLOW["permissions"] == {}
    assert WORKFLOW[True]["push"]["branches"] == ["main"]  # YAML 1.1 reads the key `on` as true


@pytest.mark.parametrize("stage", STAGES)
def test_the_plan_of_the_stage_goes_to_the_job_summary(tmp_path, stage):
    root = project(tmp_path)
    plan = step(WORKFLOW, stage, "the plan being deployed")
    ran = bash(plan["run"], root, github_env(WORKFLOW, stage, plan, {}))
    assert ran.returncode == 0, ran.stderr
    instances = stack_config(stage)["ddb2bigtable:stage"]["instance_suffix"]
    assert f"shop-global{instances}" in ran.summary and ran.summary.lstrip().startswith("#")


@pytest.mark.parametrize("stage", ["dev", "prod"])
def test_the_job_summary_shows_the_stacks_outputs_after_up(tmp_path, stage):
    root = project(tmp_path)
    outputs = run_program(stage).outputs  # the real program under Pulumi's mocks
    (root / "outputs.json").write_text(json.dumps(outputs))  # what `pulumi stack output --json` writes
    summary = step(WORKFLOW, stage, "job summary")
    ran = bash(summary["run"], root, github_env(WORKFLOW, stage, summary, {}))
    assert ran.returncode == 0, ran.stderr
    assert ran.summary.startswith(f"### Stage `{stage}` deployed: ${outputs['monthly_estimate_usd']:,.2f}/month")
    for instance, details in outputs["instances"].items():
        row = next(line for line in ran.summary.splitlines() if line.startswith(f"| `{instance}` |"))
        assert ", ".join(details["tables"]) in row and f"${details['monthly_estimate_usd']:,.2f}" in row
        for c in details["clusters"]:
            size = f"{c['nodes']} node" if "nodes" in c else f"{c['min_nodes']}-{c['max_nodes']} nodes"
            assert f"{c['zone']}: {size}" in row
    assert "No serve endpoint" in ran.summary and "No load launched" in ran.summary  # neither stage has them


def test_a_missing_outputs_file_fails_the_summary_with_what_to_run(tmp_path):
    root = project(tmp_path)
    summary = step(WORKFLOW, "dev", "job summary")
    ran = bash(summary["run"], root, github_env(WORKFLOW, "dev", summary, {}))
    assert ran.returncode == 2 and "pulumi stack output --stack <stack> --json" in ran.stderr
    assert "Traceback" not in ran.stderr
