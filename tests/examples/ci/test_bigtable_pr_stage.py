"""bigtable-pr-stage.yml: the stage its `pulumi config set` lines make is planned and
deployed (under Pulumi's mocks), and the PR comment carries the serve URL and the load's ids."""

from __future__ import annotations

import json

from ...pulumi_harness import run_program
from .steps import bash, ddb2bigtable_steps, github_env, load, project, pulumi_config, step, write_stack

WORKFLOW = load("bigtable-pr-stage.yml")
EVENT = {
    "github.event.pull_request.number": "123",
    "vars.GCP_PR_PROJECT": "my-project-dev",
    "vars.PR_SAMPLE_EXPORT": "gs://my-exports/sample",
    "vars.PR_TEMP_LOCATION": "gs://my-exports/tmp",
    "vars.PR_LOAD_SERVICE_ACCOUNT": "loader@my-project-dev.iam.gserviceaccount.com",
    "vars.SERVE_IMAGE": "us-docker.pkg.dev/my-project-dev/images/ddb2bigtable@sha256:" + "0" * 64,
    "vars.SERVE_INVOKER": "serviceAccount:tests@my-project-dev.iam.gserviceaccount.com",
    "secrets.PULUMI_ACCESS_TOKEN": "token",
    "vars.PR_STAGE_MAX_HOURLY_USD || '10'": "10",
}
CONFIGURE = "the stack pr-<number> from the pr template"
PLAN = "the plan of the stage (a bad stage config fails here, before anything is billed)"
GUARD = "the cost guard (a stage over the hourly cap starts only with the label allow-stage-cost)"


def stage_config() -> dict:
    configure = step(WORKFLOW, "stage", CONFIGURE)
    return pulumi_config(configure["run"], github_env(WORKFLOW, "stage", configure, EVENT))


def test_every_ddb2bigtable_step_is_run_here():
    """Here, and the cost guard in test_stage_jobs.py, which runs the stage job whole."""
    assert ddb2bigtable_steps(WORKFLOW) == {("stage", PLAN), ("stage", GUARD)}


def test_the_triggers_and_the_jobs_each_event_runs():
    on = WORKFLOW[True]  # YAML 1.1 reads the key `on` as true
    assert on["pull_request"]["types"] == ["opened", "synchronize", "reopened", "closed", "labeled"]
    assert on["schedule"] and "workflow_dispatch" in on
    jobs = WORKFLOW["jobs"]
    assert "action != 'closed'" in jobs["stage"]["if"] and "action == 'closed'" in jobs["teardown"]["if"]
    assert "schedule" in jobs["sweep"]["if"]
    # teardown waits for an `up` of the same pull request, and neither is ever cancelled
    assert jobs["stage"]["concurrency"] == jobs["teardown"]["concurrency"]
    assert jobs["stage"]["concurrency"]["cancel-in-progress"] is False
    teardown = step(WORKFLOW, "teardown", "pulumi destroy and stack rm")["run"]
    assert 'pulumi destroy --stack "$STACK" --yes' in teardown and 'pulumi stack rm "$STACK" --yes' in teardown
    sweep = step(WORKFLOW, "sweep", "destroy every pr-* stack whose pull request is not open")["run"]
    assert "gh pr view" in sweep and "pulumi destroy" in sweep and "pulumi stack rm" in sweep


def test_the_configured_stack_is_the_pr_template_with_a_dataflow_sample_load_and_serve():
    config = stage_config()
    stage = config["ddb2bigtable:stage"]
    assert config["gcp:project"] == "my-project-dev" and stage["template"] == "pr"
    assert stage["load"] == {"runner": "dataflow", "export": "gs://my-exports/sample", "temp_location":
                             "gs://my-exports/tmp", "service_account": EVENT["vars.PR_LOAD_SERVICE_ACCOUNT"]}
    assert stage["serve"]["enabled"] is True and stage["serve"]["invokers"] == [EVENT["vars.SERVE_INVOKER"]]


def test_the_plan_step_plans_the_configured_stack_into_the_job_summary(tmp_path):
    root = project(tmp_path)
    write_stack(root, "pr-123", stage_config())  # what the config step leaves on the runner
    plan = step(WORKFLOW, "stage", PLAN)
    ran = bash(plan["run"], root, github_env(WORKFLOW, "stage", plan, EVENT))
    assert ran.returncode == 0, ran.stderr
    assert "shop-global-pr-123" in ran.summary  # the template's suffix defaults to -<stack name>


def test_a_bad_stage_config_fails_the_plan_step_before_up(tmp_path):
    root = project(tmp_path)
    config = stage_config()
    config["ddb2bigtable:stage"]["load"]["runner"] = "dataflw"
    write_stack(root, "pr-123", config)
    plan = step(WORKFLOW, "stage", PLAN)
    ran = bash(plan["run"], root, github_env(WORKFLOW, "stage", plan, EVENT))
    assert ran.returncode == 2 and "Pulumi.pr-123.yaml" in ran.stderr and "Traceback" not in ran.stderr


def test_the_comment_has_the_marker_the_serve_url_and_the_load_job_ids(tmp_path):
    root = project(tmp_path)
    outputs = run_program("pr-123", config=stage_config()).outputs  # the real program under Pulumi's mocks
    (root / "outputs.json").write_text(json.dumps(outputs))  # what `pulumi stack output --json` writes
    comment = step(WORKFLOW, "stage", "the comment and the job summary")
    ran = bash(comment["run"], root, github_env(WORKFLOW, "stage", comment, EVENT))
    assert ran.returncode == 0, ran.stderr
    body = (root / "comment.md").read_text()
    post = step(WORKFLOW, "stage", "post or update the PR comment")["run"]
    marker = body.splitlines()[0]
    assert marker == "<!-- ddb2bigtable-stage -->" and f"'{marker}'" in post  # the post step finds it again
    assert "### Stage `pr-123` deployed" in body and body in ran.summary
    (url,) = outputs["serve_endpoint_urls"].values()
    assert url in body
    assert outputs["load_jobs"] and all(f"| `{t}` | `{j}` |" in body for t, j in outputs["load_jobs"].items())
