"""gitlab-ci.yml's jobs run whole, as gitlab-runner runs them (bash, pipefail, errexit, one
eval of before_script and script), with stand-in `pulumi` and a local GitLab API: the diff
from the merge base, the label read when the job runs, one note updated in place, the
preview as the read-only identity, deploys of the newest commit only, and stops and sweeps
that fail when they could not ask."""

from __future__ import annotations

import json
import subprocess

import pytest

from ...pulumi_harness import run_program
from . import fake_gitlab
from .jobs import gitlab_job, gitlab_variables, run_gitlab_job, standins, world
from .steps import CI, git, load, project

PIPELINE = load("gitlab-ci.yml")
MARKER = "<!-- ddb2bigtable-diff -->"
STAGES = ("dev", "staging", "prod")


@pytest.fixture
def gitlab():
    api = fake_gitlab.GitLab(merge_requests={"7": {"state": "opened", "labels": []}})
    for url in fake_gitlab.serve(api):
        api.url = url  # type: ignore[attr-defined]
        yield api


def predefined(gitlab, **more):
    return {"CI_API_V4_URL": gitlab.url, "CI_PROJECT_ID": "1", "CI_MERGE_REQUEST_IID": "7",
            "CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "main", "CI_MERGE_REQUEST_LABELS": "", "CI_DEFAULT_BRANCH": "main",
            "DDB2BIGTABLE_GITLAB_TOKEN": fake_gitlab.TOKEN, "PULUMI_DEPLOY_ACCESS_TOKEN": "token",
            "PULUMI_PREVIEW_ACCESS_TOKEN": "preview-token", "PULUMI_REVIEW_ACCESS_TOKEN": "review-token",
            "GCP_REVIEW_SERVICE_ACCOUNT": "review@p.iam.gserviceaccount.com",
            "GCP_WORKLOAD_IDENTITY_PROVIDER": "projects/1/locations/global/workloadIdentityPools/ci/providers/gitlab",
            **{f"GCP_DEPLOY_SERVICE_ACCOUNT_{s.upper()}": f"deploy-{s}@p.iam.gserviceaccount.com" for s in STAGES},
            "GCP_PREVIEW_SERVICE_ACCOUNT": "preview@p.iam.gserviceaccount.com", "CI_JOB_URL": "https://gitlab/j/1",
            **more}


def sha(repo, ref="HEAD"):
    return subprocess.run(["git", "-C", str(repo), "rev-parse", ref], capture_output=True, text=True,
                          check=True).stdout.strip()


def merge_request_after_main_moved(tmp_path):
    """A merge request raising a table's reads, branched before main replaced an instance
    (ssd -> hdd): from main's tip the request seems to put ssd back, a DESTRUCTIVE change."""
    origin = project(tmp_path / "origin")
    git(origin, "init", "-q", "-b", "main")
    git(origin, "add", ".")
    git(origin, "commit", "-q", "-m", "base")
    base = sha(origin)
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(origin), str(clone)], check=True, capture_output=True)
    git(clone, "checkout", "-q", "-b", "change")
    spec = clone / "specs/product-catalog.yaml"
    spec.write_text(spec.read_text().replace("      reads: 400 ", "      reads: 800 ", 1))
    git(clone, "commit", "-q", "-am", "more reads")
    moved = origin / "specs/product-catalog.yaml"
    moved.write_text(moved.read_text().replace("  storage: ssd ", "  storage: hdd ", 1))
    git(origin, "commit", "-q", "-am", "main moves on")
    git(clone, "fetch", "-q", "origin")
    return clone, base


def test_the_diff_is_from_the_merge_base_not_mains_tip(tmp_path, gitlab):
    clone, base = merge_request_after_main_moved(tmp_path)
    ran = run_gitlab_job(PIPELINE, "diff", clone, predefined(gitlab, CI_MERGE_REQUEST_DIFF_BASE_SHA=base),
                         standins(tmp_path, {}))
    assert ran.returncode == 0, ran.log
    assert json.loads((clone / "diff.json").read_text())["destructive"] == 0
    assert "DESTRUCTIVE" not in (clone / "diff.md").read_text()


@pytest.mark.parametrize("labels,code", [([], 1), (["db", "allow-destructive"], 0)])
def test_the_label_is_read_when_the_job_runs(tmp_path, gitlab, labels, code):
    clone, base = merge_request_after_main_moved(tmp_path)
    spec = clone / "specs/product-catalog.yaml"
    spec.write_text(spec.read_text().replace("  storage: ssd ", "  storage: hdd ", 1))  # destructive here
    git(clone, "commit", "-q", "-am", "hdd")
    gitlab.merge_requests["7"]["labels"] = labels  # the pipeline started without the label
    ran = run_gitlab_job(PIPELINE, "diff", clone, predefined(gitlab, CI_MERGE_REQUEST_DIFF_BASE_SHA=base),
                         standins(tmp_path, {}))
    assert ran.returncode == code, ran.log
    assert ("refuses this merge request" in ran.log) == (code == 1)


def test_one_note_updated_in_place_past_the_first_page(tmp_path, gitlab):
    clone, base = merge_request_after_main_moved(tmp_path)
    thread = [{"id": i, "body": f"note {i}", "system": i % 3 == 0} for i in range(1, 30)]
    thread.insert(24, {"id": 77, "body": MARKER + "\nthe diff of an earlier pipeline", "system": False})
    gitlab.notes["7"] = thread
    ran = run_gitlab_job(PIPELINE, "diff", clone, predefined(gitlab, CI_MERGE_REQUEST_DIFF_BASE_SHA=base),
                         standins(tmp_path, {}))
    assert ran.returncode == 0, ran.log
    mine = [n for n in gitlab.notes["7"] if n["body"].startswith(MARKER)]
    assert len(gitlab.notes["7"]) == 30 and [n["id"] for n in mine] == [77] and "earlier" not in mine[0]["body"]


def test_a_refused_gitlab_token_fails_the_diff_job(tmp_path, gitlab):
    clone, base = merge_request_after_main_moved(tmp_path)
    ran = run_gitlab_job(PIPELINE, "diff", clone, predefined(gitlab, CI_MERGE_REQUEST_DIFF_BASE_SHA=base,
                                                             DDB2BIGTABLE_GITLAB_TOKEN="expired"), standins(tmp_path, {}))
    assert ran.returncode == 1 and "401 Unauthorized" in ran.log


def test_the_preview_is_the_read_only_identity_and_creates_a_missing_stack(tmp_path, gitlab):
    root = project(tmp_path / "repo")
    assert gitlab_job(PIPELINE, "preview")["environment"] == {"name": "preview", "action": "prepare"}
    ran = run_gitlab_job(PIPELINE, "preview", root, predefined(gitlab, STACK="prod"),
                         standins(tmp_path, {"pulumi": {"stacks": {}, "tokens": ["preview-token"]}}))
    assert ran.returncode == 0, ran.log
    credentials = json.loads((root / ".gcp-credentials.json").read_text())
    assert credentials["service_account_impersonation_url"].endswith("/preview@p.iam.gserviceaccount.com:generateAccessToken")
    assert "prod" in world(tmp_path)["pulumi"]["stacks"]


@pytest.mark.parametrize("job,account,token", [
    ("deploy-dev", "deploy-dev@p.iam.gserviceaccount.com", "token"),
    ("deploy-prod", "deploy-prod@p.iam.gserviceaccount.com", "token"),
    ("preview", "preview@p.iam.gserviceaccount.com", "preview-token"),
    ("review-stage", "review@p.iam.gserviceaccount.com", "review-token"),
    ("stop-review-stage", "review@p.iam.gserviceaccount.com", "review-token"),
    ("sweep-review-stages", "review@p.iam.gserviceaccount.com", "review-token"),
])
def test_each_job_has_the_identity_and_token_of_its_trust_level(gitlab, job, account, token):
    values = gitlab_variables(PIPELINE, job, predefined(gitlab, STACK="prod"))
    assert (values["GCP_SERVICE_ACCOUNT"], values["PULUMI_ACCESS_TOKEN"]) == (account, token)
    # a project variable named PULUMI_ACCESS_TOKEN would outrank every job's choice: none is defined
    assert "PULUMI_ACCESS_TOKEN" not in predefined(gitlab)


def review_the(clone, gitlab, sha, fingerprint=None):
    """What the merge request's diff job left: its note with the inputs' fingerprint."""
    paths = gitlab_variables(PIPELINE, "diff", predefined(gitlab))["REVIEW_PATHS"].split()
    tree = subprocess.run(["git", "-C", str(clone), "ls-tree", "-r", "HEAD", "--", *paths], capture_output=True,
                          check=True).stdout
    fingerprint = fingerprint or __import__("hashlib").sha256(tree).hexdigest()[:16]
    gitlab.commit_merge_requests[sha] = ["7"]
    gitlab.notes["7"] = [{"id": 1, "body": f"{MARKER}\n<!-- reviewed-inputs: {fingerprint} -->\n...", "system": False}]


def test_the_diff_note_records_the_reviewed_inputs(tmp_path, gitlab):
    clone, base = merge_request_after_main_moved(tmp_path)
    ran = run_gitlab_job(PIPELINE, "diff", clone, predefined(gitlab, CI_MERGE_REQUEST_DIFF_BASE_SHA=base),
                         standins(tmp_path, {}))
    assert ran.returncode == 0, ran.log
    (note,) = gitlab.notes["7"]
    review_the(clone, gitlab, "x")
    assert note["body"].splitlines()[:2] == gitlab.notes["7"][0]["body"].splitlines()[:2]


@pytest.mark.parametrize("case", ["other inputs", "no merge request", "by hand"])
def test_a_deploy_of_inputs_no_review_showed_is_refused(tmp_path, gitlab, case):
    clone = deploy_checkout(tmp_path, moved=False)
    head = sha(clone)
    if case != "no merge request":
        review_the(clone, gitlab, head, fingerprint="0123456789abcdef")
    more = {"DEPLOY_UNREVIEWED": "true"} if case == "by hand" else {}
    ran = run_gitlab_job(PIPELINE, "deploy-dev", clone,
                         predefined(gitlab, CI_COMMIT_SHA=head, CI_COMMIT_SHORT_SHA=head[:8], **more),
                         standins(tmp_path, {"pulumi": {"stacks": {}}}))
    ups = [c for c in world(tmp_path).get("calls", []) if c[:2] == ["pulumi", "up"]]
    if case == "by hand":
        assert ran.returncode == 0 and "as asked (DEPLOY_UNREVIEWED)" in ran.log and ups, ran.log
    else:
        assert ran.returncode == 1 and "not those a merge request's review showed" in ran.log and not ups


def deploy_checkout(tmp_path, moved: bool):
    origin = project(tmp_path / "origin")
    git(origin, "init", "-q", "-b", "main")
    git(origin, "add", ".")
    git(origin, "commit", "-q", "-m", "merge 1")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(origin), str(clone)], check=True, capture_output=True)
    if moved:
        (origin / "specs" / "note.txt").write_text("merge 2\n")
        git(origin, "add", ".")
        git(origin, "commit", "-q", "-m", "merge 2")
    return clone


def test_the_readme_says_how_to_order_the_resource_groups():
    readme = (CI / "README.md").read_text()
    assert "resource_groups/pulumi-$stack?process_mode=oldest_first" in readme


@pytest.mark.parametrize("moved", [False, True])
@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_only_the_newest_commit_of_main_deploys(tmp_path, gitlab, moved, stack):
    assert PIPELINE[".deploy"]["resource_group"] == "pulumi-$STACK"
    clone = deploy_checkout(tmp_path, moved)
    head = sha(clone)
    outputs = run_program(stack).outputs  # the real program under Pulumi's mocks
    review_the(clone, gitlab, head)
    ran = run_gitlab_job(PIPELINE, f"deploy-{stack}", clone,
                         predefined(gitlab, CI_COMMIT_SHA=head, CI_COMMIT_SHORT_SHA=head[:8]),
                         standins(tmp_path, {"pulumi": {"stacks": {}, "outputs_after_up": {stack: outputs}}}))
    ups = [c for c in world(tmp_path).get("calls", []) if c[:2] == ["pulumi", "up"]]
    if moved:
        assert ran.returncode == 1 and "its own pipeline deploys it" in ran.log and ups == []
    else:
        assert ran.returncode == 0, ran.log
        assert ups and world(tmp_path)["pulumi"]["stacks"][stack]["resources"] > 0
        credentials = json.loads((clone / ".gcp-credentials.json").read_text())
        assert credentials["service_account_impersonation_url"].endswith(f"/deploy-{stack}@p.iam.gserviceaccount.com"
                                                                         ":generateAccessToken")
        assert "shop-global" in (clone / "plan.md").read_text()
        assert (clone / "summary.md").read_text().startswith(f"### Stage `{stack}` deployed")


@pytest.mark.parametrize("stacks,tokens,code", [({"pr-7": {"resources": 4}}, ["review-token"], 0),
                                                ({}, ["review-token"], 0),
                                                ({"pr-7": {"resources": 4}}, ["other"], 1)])
def test_the_stop_job_fails_when_it_could_not_ask_and_says_so_on_the_merge_request(tmp_path, gitlab, stacks, tokens,
                                                                                     code):
    rule = PIPELINE["stop-review-stage"]["rules"][0]
    assert rule["when"] == "manual" and rule["allow_failure"] is True  # else the MR's pipeline waits for it
    root = project(tmp_path / "repo")
    env = standins(tmp_path, {"pulumi": {"stacks": stacks, "tokens": tokens}})
    ran = run_gitlab_job(PIPELINE, "stop-review-stage", root, predefined(gitlab), env)
    assert ran.returncode == code, ran.log
    assert "pr-7" not in world(tmp_path)["pulumi"]["stacks"] or code
    status = "failed" if code else "success"
    after = run_gitlab_job(PIPELINE, "stop-review-stage", root, predefined(gitlab, CI_JOB_STATUS=status), env,
                           key="after_script")
    assert after.returncode == 0, after.log
    notes = gitlab.notes.get("7", [])
    assert bool(notes) == bool(code) and all("`pr-7` failed" in n["body"] for n in notes)


@pytest.mark.parametrize("world_,code,said", [
    ({"stacks": {"pr-7": {"resources": 4}, "pr-8": {"resources": 1}, "dev": {"resources": 9}}}, 0, "pr-8 (merge request merged)"),
    ({"stacks": {"pr-7": {"resources": 4}}, "outage": "[503] Service Unavailable"}, 1, "[503]"),
    ({"stacks": {"pr-9": {"resources": 4}}}, 1, "404 Not found"),
])
def test_the_sweep_removes_closed_stages_and_fails_when_it_could_not_ask(tmp_path, gitlab, world_, code, said):
    gitlab.merge_requests["8"] = {"state": "merged", "labels": []}
    root = project(tmp_path / "repo")
    ran = run_gitlab_job(PIPELINE, "sweep-review-stages", root, predefined(gitlab),
                         standins(tmp_path, {"pulumi": {"tokens": ["review-token"], **world_}}))
    assert ran.returncode == code, ran.log
    assert said in ran.log
    if code == 0:
        assert set(world(tmp_path)["pulumi"]["stacks"]) == {"pr-7", "dev"}


@pytest.mark.parametrize("labels,code", [(["db"], 1), (["allow-stage-cost"], 0)])
def test_a_review_stage_over_the_hourly_cap_starts_only_with_the_label(tmp_path, gitlab, labels, code):
    gitlab.merge_requests["7"]["labels"] = labels
    root = project(tmp_path / "repo")
    stage = {"GCP_PR_PROJECT": "my-project-dev", "PR_SAMPLE_EXPORT": "gs://my-exports/sample",
             "PR_TEMP_LOCATION": "gs://my-exports/tmp", "PR_LOAD_SERVICE_ACCOUNT": "loader@my-project-dev.iam.gserviceaccount.com",
             "SERVE_IMAGE": "us-docker.pkg.dev/my-project-dev/images/ddb2bigtable@sha256:" + "0" * 64,
             "SERVE_INVOKER": "serviceAccount:tests@my-project-dev.iam.gserviceaccount.com",
             "PR_STAGE_MAX_HOURLY_USD": "5"}  # a project variable outranks the YAML's 10
    ran = run_gitlab_job(PIPELINE, "review-stage", root, predefined(gitlab, **stage),
                         standins(tmp_path, {"pulumi": {"tokens": ["review-token"]}}))
    assert ran.returncode == code, ran.log
    assert "an hour of Bigtable (the cap: $5)" in ran.log
    ups = [c for c in world(tmp_path)["calls"] if c[:2] == ["pulumi", "up"]]
    assert bool(ups) == (code == 0)
    assert ("Nothing was created" in ran.log) == (code == 1)
