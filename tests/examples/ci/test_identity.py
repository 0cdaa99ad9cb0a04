"""Each job of the pipelines takes the Google identity of its trust level, under the variable
name components.CiIdentity outputs for that account: a deploy job its own stage's account,
the per-pull-request stage the review account (not a deploy one), the previews and the drift
check the read-only one; and every GitLab job that takes an identity names an environment,
which the provider's mapping reads."""

from __future__ import annotations

import pytest

from components.ci_identity import CiIdentityArgs, variable_names

from .jobs import gitlab_job
from .steps import load

NAMES = variable_names(CiIdentityArgs(
    project="acme-ci", project_number="123456789012", forge="github", repository="acme/tables",
    deploy_environments={"dev": "acme-dev", "staging": "acme-staging", "prod": "acme-prod"},
    review_project="acme-dev", deploy_roles=("roles/bigtable.admin",)))
# a job's environment -> the account it may become (GitHub: environments of those names; GitLab:
# the deploy_target attribute the environment maps to)
ACCOUNT = {"dev": NAMES["dev"], "staging": NAMES["staging"], "prod": NAMES["prod"], "pr": NAMES["review"],
           "preview": NAMES["preview"]}
OWN = ["bigtable-pr.yml", "bigtable-deploy.yml", "bigtable-pr-stage.yml", "bigtable-drift.yml"]


def github_logins() -> list[tuple[str, str, str, dict[str, str]]]:
    """(workflow, job, environment, the auth step's inputs) of every Google login."""
    return [(name, job_id, job.get("environment", ""), s["with"]) for name in OWN
            for job_id, job in load(name)["jobs"].items() for s in job["steps"]
            if s.get("uses", "").startswith("google-github-actions/auth@")]


@pytest.mark.parametrize("name,job,environment,inputs", github_logins(), ids=[f"{n}:{j}" for n, j, _, _ in github_logins()])
def test_each_github_job_takes_the_account_of_its_environment(name, job, environment, inputs):
    assert inputs["service_account"] == f"${{{{ vars.{ACCOUNT[environment]} }}}}"
    assert inputs["workload_identity_provider"] == "${{ vars.GCP_WORKLOAD_IDENTITY_PROVIDER }}"


def test_every_account_ciidentity_makes_is_used_by_github_and_only_those():
    used = {inputs["service_account"] for *_, inputs in github_logins()}
    assert used == {f"${{{{ vars.{name} }}}}" for name in NAMES.values()}
    # prices-refresh.yml's account reads price APIs only; CiIdentity does not make it
    (prices,) = [s["with"]["service_account"] for s in load("prices-refresh.yml")["jobs"]["refresh"]["steps"]
                 if s.get("uses", "").startswith("google-github-actions/auth@")]
    assert prices == "${{ vars.GCP_PRICES_SERVICE_ACCOUNT }}"


def gitlab_logins() -> list[str]:
    pipeline = load("gitlab-ci.yml")
    return [name for name, body in pipeline.items() if isinstance(body, dict) and not name.startswith(".")
            and "GITLAB_OIDC_TOKEN" in gitlab_job(pipeline, name).get("id_tokens", {})]


@pytest.mark.parametrize("name", gitlab_logins())
def test_each_gitlab_job_names_an_environment_and_takes_its_account(name):
    job = gitlab_job(load("gitlab-ci.yml"), name)
    environment = job["environment"]["name"]  # without one, the provider maps no deploy_target
    expected = ACCOUNT["pr" if environment.startswith("review/") else environment]
    assert job["variables"]["GCP_SERVICE_ACCOUNT"] == f"${expected}"
