"""The CI pipeline's own identity under Pulumi's mocks: the pool and its provider accept one
repository's tokens; each deploy account is bound to its environment only (GitHub's subject,
GitLab's protected-branch attribute), so a branch job cannot become prod; the preview account
is read-only and distinct; README's setup program runs as written."""

from __future__ import annotations

import re

import pytest

from components.ci_identity import CiIdentityArgs, attribute_condition, attribute_mapping, trusts, variable_names

from ..conftest import ROOT
from ..pulumi_harness import run_program

POOL = "projects/123456789012/locations/global/workloadIdentityPools/ddb2bigtable-ci"
ROLES = ("roles/bigtable.admin", "roles/dataflow.admin")


def args(forge="github", repository="acme/tables", **more) -> CiIdentityArgs:
    return CiIdentityArgs(**{"project": "acme-ci", "project_number": "123456789012", "forge": forge,
                             "repository": repository, "review_project": "acme-dev", "deploy_roles": ROLES,
                             "deploy_environments": {"dev": "acme-dev", "staging": "acme-staging",
                                                     "prod": "acme-prod"}, **more})


def members(found, key):
    return next(t for t in found if t.account_id == f"ci-{key}").members


def test_github_binds_each_deploy_account_to_its_environments_subject_only():
    found = trusts(args())
    assert members(found, "deploy-prod") == (
        f"principal://iam.googleapis.com/{POOL}/subject/repo:acme/tables:environment:prod",)
    assert members(found, "deploy-dev") == (
        f"principal://iam.googleapis.com/{POOL}/subject/repo:acme/tables:environment:dev",)
    assert members(found, "review") == (f"principal://iam.googleapis.com/{POOL}/subject/repo:acme/tables:environment:pr",)
    assert members(found, "preview") == (
        f"principal://iam.googleapis.com/{POOL}/subject/repo:acme/tables:environment:preview",)
    every = [m for t in found for m in t.members]
    assert not any(m.startswith("principalSet:") for m in every)  # no binding to the whole repository
    assert len(set(every)) == len(every)  # no two accounts share a subject
    assert attribute_condition(args()) == 'assertion.repository == "acme/tables"'
    assert attribute_mapping(args())["google.subject"] == "assertion.sub"


def test_gitlab_binds_deploy_accounts_to_protected_branch_jobs_of_their_environment():
    gitlab = args("gitlab", "acme/data/tables")
    found = trusts(gitlab)
    assert members(found, "deploy-prod") == (f"principalSet://iam.googleapis.com/{POOL}/attribute.deploy_target/prod",)
    assert members(found, "review") == (f"principalSet://iam.googleapis.com/{POOL}/attribute.deploy_target/review",)
    mapping = attribute_mapping(gitlab)["attribute.deploy_target"]
    # review/* environments map to review from any branch; another environment counts only on a
    # protected branch. No has(): Google documents it in attribute conditions, not in mappings
    assert mapping == ('assertion.environment.startsWith("review/") ? "review" : '
                       '(assertion.ref_protected == "true" ? assertion.environment : "")')
    assert attribute_condition(gitlab) == 'assertion.project_path == "acme/data/tables"'


def test_the_preview_account_is_read_only_and_distinct():
    found = trusts(args(preview_roles=("roles/viewer", "roles/bigtable.viewer")))
    preview = next(t for t in found if t.account_id == "ci-preview")
    assert preview.roles == ("roles/viewer", "roles/bigtable.viewer")
    assert all(t.roles == ROLES for t in found if t is not preview)
    assert len({t.account_id for t in found}) == len(found) == 5


def test_github_free_private_binds_deploys_to_the_deploy_workflow_on_main_and_prod_to_runs_by_hand():
    """No environments there: the subject holds no environment to bind to, so the accounts are
    bound to what every token carries (workflow_ref, event_name)."""
    free = args(github_binding="ref")
    found = trusts(free)
    target = f"principalSet://iam.googleapis.com/{POOL}/attribute.deploy_target"
    assert members(found, "deploy-prod") == (f"{target}/by-hand",)
    assert members(found, "deploy-dev") == members(found, "deploy-staging") == (f"{target}/on-merge", f"{target}/by-hand")
    assert members(found, "review") == (f"{target}/review",)
    assert members(found, "preview") == (f"principalSet://iam.googleapis.com/{POOL}/attribute.repository/acme/tables",)
    mapping = attribute_mapping(free)["attribute.deploy_target"]
    assert mapping == (
        'assertion.workflow_ref == "acme/tables/.github/workflows/bigtable-deploy.yml@refs/heads/main" ? '
        '(assertion.event_name == "workflow_dispatch" ? "by-hand" : "on-merge") : '
        '(assertion.workflow_ref.startsWith("acme/tables/.github/workflows/bigtable-pr-stage.yml@") ? "review" : "")')
    assert attribute_condition(free) == attribute_condition(args())  # still this repository's tokens only
    assert trusts(args(github_binding="ref", manual_environments=()))[2].members == (f"{target}/on-merge",
                                                                                    f"{target}/by-hand")


def test_the_variables_name_each_account_for_what_it_may_do():
    assert variable_names(args()) == {"dev": "GCP_DEPLOY_SERVICE_ACCOUNT_DEV", "staging": "GCP_DEPLOY_SERVICE_ACCOUNT_STAGING",
                                      "prod": "GCP_DEPLOY_SERVICE_ACCOUNT_PROD", "review": "GCP_REVIEW_SERVICE_ACCOUNT",
                                      "preview": "GCP_PREVIEW_SERVICE_ACCOUNT"}


@pytest.mark.parametrize("change,said", [
    ({"repository": "acme"}, "expected OWNER/REPO"),
    ({"repository": "acme/tables/extra"}, "expected OWNER/REPO"),
    ({"deploy_environments": {}}, "at least one environment"),
    ({"project_number": "acme-ci"}, "project number"),
    ({"deploy_environments": {"a-very-long-environment-name": "p"}}, "6 to 30"),
    ({"forge": "bitbucket"}, "expected github or gitlab"),
    ({"github_binding": "branch"}, "expected environment (GitHub environments) or ref"),
    ({"github_binding": "ref", "default_branch": 'main" || true'}, "a branch or workflow file name"),
])
def test_arguments_that_would_bind_the_wrong_jobs_are_refused(change, said):
    with pytest.raises(ValueError, match=re.escape(said)):
        trusts(args(**change))


def program(tmp_path, forge="github", repository="acme/tables", binding="environment"):
    path = tmp_path / "__main__.py"
    path.write_text(f'''import pulumi
from components import CiIdentity, CiIdentityArgs
identity = CiIdentity("ci", CiIdentityArgs(
    project="acme-ci", project_number="123456789012", forge="{forge}", repository="{repository}",
    deploy_environments={{"dev": "acme-dev", "prod": "acme-prod"}}, review_project="acme-dev",
    deploy_roles=("roles/bigtable.admin",), github_binding="{binding}"))
pulumi.export("provider", identity.provider_name)
pulumi.export("accounts", identity.accounts)
pulumi.export("variables", identity.variables)
''')
    return path


@pytest.mark.parametrize("forge,issuer", [("github", "https://token.actions.githubusercontent.com"),
                                          ("gitlab", "https://gitlab.com")])
def test_the_component_makes_the_pool_provider_accounts_and_bindings(tmp_path, forge, issuer):
    run = run_program("ci", config={}, program=program(tmp_path, forge))
    (provider,) = run.of_type("gcp:iam/workloadIdentityPoolProvider:WorkloadIdentityPoolProvider")
    assert provider.inputs["oidc"]["issuerUri"] == issuer
    assert provider.inputs["attributeCondition"] == attribute_condition(args(forge))
    assert provider.inputs["workloadIdentityPoolId"] == "ddb2bigtable-ci"
    assert run.outputs["provider"] == f"{POOL}/providers/{forge}"
    accounts = {r.inputs["accountId"] for r in run.of_type("gcp:serviceaccount/account:Account")}
    assert accounts == {"ci-deploy-dev", "ci-deploy-prod", "ci-review", "ci-preview"}
    assert run.outputs["accounts"]["prod"] == "ci-deploy-prod@acme-ci.iam.gserviceaccount.com"
    bindings = run.of_type("gcp:serviceaccount/iAMMember:IAMMember")
    assert {b.inputs["role"] for b in bindings} == {"roles/iam.workloadIdentityUser"}
    prod = next(b for b in bindings if b.name == "ci-prod-wif-0")
    assert prod.inputs["member"].endswith("environment:prod" if forge == "github" else "deploy_target/prod")
    grants = {(g.inputs["project"], g.inputs["role"], g.inputs["member"])
              for g in run.of_type("gcp:projects/iAMMember:IAMMember")}
    assert ("acme-prod", "roles/bigtable.admin", "serviceAccount:ci-deploy-prod@acme-ci.iam.gserviceaccount.com") in grants
    assert ("acme-ci", "roles/viewer", "serviceAccount:ci-preview@acme-ci.iam.gserviceaccount.com") in grants
    assert not any(member.startswith("serviceAccount:ci-preview") and role != "roles/viewer"
                   for _, role, member in grants)


def test_github_free_privates_binding_under_pulumis_mocks(tmp_path):
    run = run_program("ci", config={}, program=program(tmp_path, binding="ref"))
    (provider,) = run.of_type("gcp:iam/workloadIdentityPoolProvider:WorkloadIdentityPoolProvider")
    assert provider.inputs["attributeMapping"]["attribute.deploy_target"].startswith("assertion.workflow_ref == ")
    members = {b.name: b.inputs["member"] for b in run.of_type("gcp:serviceaccount/iAMMember:IAMMember")}
    assert {m for n, m in members.items() if n.startswith("ci-prod-wif-")} == {
        f"principalSet://iam.googleapis.com/{POOL}/attribute.deploy_target/by-hand"}
    assert run.outputs["variables"] == {
        "GCP_WORKLOAD_IDENTITY_PROVIDER": f"{POOL}/providers/github",
        "GCP_DEPLOY_SERVICE_ACCOUNT_DEV": "ci-deploy-dev@acme-ci.iam.gserviceaccount.com",
        "GCP_DEPLOY_SERVICE_ACCOUNT_PROD": "ci-deploy-prod@acme-ci.iam.gserviceaccount.com",
        "GCP_REVIEW_SERVICE_ACCOUNT": "ci-review@acme-ci.iam.gserviceaccount.com",
        "GCP_PREVIEW_SERVICE_ACCOUNT": "ci-preview@acme-ci.iam.gserviceaccount.com"}


def test_the_readmes_setup_program_runs_as_written(tmp_path):
    readme = (ROOT / "examples" / "ci" / "README.md").read_text()
    (code,) = [block for block in re.findall(r"```python\n(.*?)```", readme, re.DOTALL) if "CiIdentity(" in block]
    path = tmp_path / "ci-identity" / "__main__.py"
    path.parent.mkdir()
    path.write_text("\n".join(line.removeprefix("  ") for line in code.splitlines()))
    run = run_program("ci", config={}, program=path)
    assert run.outputs["variables"]["GCP_WORKLOAD_IDENTITY_PROVIDER"] == f"{POOL}/providers/github"
    assert set(run.outputs["variables"]) == {"GCP_WORKLOAD_IDENTITY_PROVIDER", "GCP_DEPLOY_SERVICE_ACCOUNT_DEV",
                                             "GCP_DEPLOY_SERVICE_ACCOUNT_STAGING", "GCP_DEPLOY_SERVICE_ACCOUNT_PROD",
                                             "GCP_REVIEW_SERVICE_ACCOUNT", "GCP_PREVIEW_SERVICE_ACCOUNT"}
