"""`ddb2bigtable:ci:Identity`: the pipeline's own identity, as code: a workload identity pool,
its OIDC provider for GitHub or GitLab, and one service account per trust level, each bound
to the jobs that may become it and to nothing wider.

Why per environment, not per repository: a binding to the repository lets any job of it (a
branch's, or a pull request that edits a workflow) impersonate the prod deploy account.
GitHub puts a job's environment in its token's subject (`repo:ORG/REPO:environment:prod`), so
each deploy account is bound to its environment's subject, and the environment's deployment
branches (main) decide which jobs get that subject (`github_binding="environment"`: public
repositories, Pro, Team, Enterprise). A private repository on GitHub Free has no environments
(GitHub Docs, "Managing environments for deployment"), so `github_binding="ref"` binds by
the claims every token carries (GitHub Docs, "OpenID Connect reference": `ref`,
`workflow_ref` = OWNER/REPO/.github/workflows/FILE@REF, `event_name`): each deploy account to
the deploy workflow run on the default branch, prod (`manual_environments`) only when a
person started it (`workflow_dispatch`); the review account to the stage workflow's jobs.
GitLab's subject names the branch, not the environment, so the provider maps the claims
`ref_protected` and `environment` into one attribute, `deploy_target`: `review` for a
`review/*` environment's job, the environment for a protected branch's job, empty otherwise.
The preview account is read-only and distinct from every deploy one.

GitLab's `environment` claim is present only when the job names an environment (GitLab docs,
"OpenID Connect (OIDC) Authentication Using ID Tokens", token payload). The mapping reads it
without `has()`: Google documents the ternary (`cond ? a : b`) and string functions in
attribute mappings (Google's Terraform provider, google_iam_workload_identity_pool_provider,
example `assertion.arn.contains(...) ? "prod" : "test"`) and `has(assertion.x)` only in
attribute conditions (Confidential Space, "Attestation assertions", page updated 2026-04-14),
not in mappings; both read 2026-12-07, not tried against IAM. So a GitLab job without an
environment maps to no `deploy_target` (the mapping fails or is empty: either way no binding
matches but the preview's), and every job of gitlab-ci.yml that needs Google names one.

Translation only: the caller names the forge, the repository, the environments, their projects
and the roles; `trusts` turns them into principals and `variable_names` into the pipelines'
variables (pure functions, tested directly), the component into pulumi-gcp resources.
Principal formats: Google Cloud IAM docs, "Principal identifiers" (workload identity pools),
read 2026-12-07.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

import pulumi
import pulumi_gcp as gcp

ISSUERS = {"github": "https://token.actions.githubusercontent.com", "gitlab": "https://gitlab.com"}
Forge = Literal["github", "gitlab"]
GithubBinding = Literal["environment", "ref"]


@dataclass(frozen=True)
class CiIdentityArgs:
    """What the pipeline's identity needs to know; nothing here is chosen by the component.

    `deploy_environments` maps each environment deployed from the protected default branch
    (dev, staging, prod) to the project its account gets `deploy_roles` in; `review_project` is
    where the per-pull-request stages live (GitHub's environment `review_environment`, GitLab's
    `review/*` environments, from any branch); `issuer_uri` is a self-managed GitLab's URL.
    `github_binding` is "environment" where GitHub has environments (public repositories, Pro,
    Team, Enterprise) and "ref" on a private repository of GitHub Free, where the deploy
    accounts are bound to `deploy_workflow` on `default_branch` instead, and each of
    `manual_environments` to its runs started by hand only."""

    project: str
    project_number: str
    forge: Forge
    repository: str
    deploy_environments: Mapping[str, str]
    review_project: str
    deploy_roles: tuple[str, ...]
    preview_roles: tuple[str, ...] = ("roles/viewer",)
    review_environment: str = "pr"
    preview_environment: str = "preview"
    issuer_uri: str | None = None
    pool_id: str = "ddb2bigtable-ci"
    account_prefix: str = "ci"
    github_binding: GithubBinding = "environment"
    default_branch: str = "main"
    deploy_workflow: str = "bigtable-deploy.yml"
    stage_workflow: str = "bigtable-pr-stage.yml"
    manual_environments: tuple[str, ...] = ("prod",)


@dataclass(frozen=True)
class Trust:
    """One service account and who may become it."""

    account_id: str
    purpose: str
    members: tuple[str, ...]
    project: str
    roles: tuple[str, ...]


def check(args: CiIdentityArgs) -> None:
    """Refuse what would bind the wrong jobs, before any resource is made."""
    slashes = args.repository.count("/")
    if args.forge not in ISSUERS:
        raise ValueError(f"forge {args.forge!r}: expected github or gitlab")
    if (args.forge == "github" and slashes != 1) or slashes < 1 or not re.fullmatch(r"[\w.\-/]+", args.repository):
        raise ValueError(f"repository {args.repository!r}: expected OWNER/REPO on GitHub, the project path "
                         f"(group/project) on GitLab")
    if args.github_binding not in ("environment", "ref"):
        raise ValueError(f"github_binding {args.github_binding!r}: expected environment (GitHub environments) or "
                         f"ref (a private repository on GitHub Free)")
    for field, value in (("default_branch", args.default_branch), ("deploy_workflow", args.deploy_workflow),
                         ("stage_workflow", args.stage_workflow)):
        if not re.fullmatch(r"[\w.\-/]+", value):  # it goes into the provider's CEL between quotes
            raise ValueError(f"{field} {value!r}: a branch or workflow file name (letters, digits, . _ - /)")
    if not args.deploy_environments:
        raise ValueError("deploy_environments: name at least one environment deployed from the default branch")
    if not re.fullmatch(r"\d+", args.project_number):
        raise ValueError(f"project_number {args.project_number!r}: the pool's project number (digits), "
                         f"`gcloud projects describe {args.project} --format 'value(projectNumber)'`")
    if not re.fullmatch(r"[a-z0-9-]{4,32}", args.pool_id):
        raise ValueError(f"pool_id {args.pool_id!r}: 4 to 32 of a-z, 0-9 and -")
    for name in (*args.deploy_environments, "review", "preview"):
        account = account_id(args, name)
        if not re.fullmatch(r"[a-z][a-z0-9-]{4,28}[a-z0-9]", account):
            raise ValueError(f"service account id {account!r} (for {name}): 6 to 30 of a-z, 0-9 and -, "
                             f"a letter first; shorten account_prefix or the environment's name")


def account_id(args: CiIdentityArgs, name: str) -> str:
    return f"{args.account_prefix}-{'deploy-' if name not in ('review', 'preview') else ''}{name}"


def pool_path(args: CiIdentityArgs) -> str:
    return f"projects/{args.project_number}/locations/global/workloadIdentityPools/{args.pool_id}"


def provider_id(args: CiIdentityArgs) -> str:
    return args.forge


def attribute_mapping(args: CiIdentityArgs) -> dict[str, str]:
    """Claims to attributes. `deploy_target`, on GitLab: `review` for a review environment's job
    from any branch, the environment for a protected branch's job, empty otherwise; on GitHub
    with `github_binding="ref"`: `by-hand` for the deploy workflow started by hand on the
    default branch, `on-merge` for its other runs there, `review` for the stage workflow's
    jobs, empty otherwise."""
    if args.forge == "github":
        mapping = {"google.subject": "assertion.sub", "attribute.repository": "assertion.repository"}
        if args.github_binding == "ref":
            workflows = f"{args.repository}/.github/workflows"
            mapping["attribute.deploy_target"] = (
                f'assertion.workflow_ref == "{workflows}/{args.deploy_workflow}@refs/heads/{args.default_branch}" ? '
                f'(assertion.event_name == "workflow_dispatch" ? "by-hand" : "on-merge") : '
                f'(assertion.workflow_ref.startsWith("{workflows}/{args.stage_workflow}@") ? "review" : "")')
        return mapping
    return {"google.subject": "assertion.sub", "attribute.project_path": "assertion.project_path",
            "attribute.deploy_target": (
                'assertion.environment.startsWith("review/") ? "review" : '
                '(assertion.ref_protected == "true" ? assertion.environment : "")')}


def attribute_condition(args: CiIdentityArgs) -> str:
    """The provider accepts this repository's tokens only: no other repository's job gets in."""
    claim = "repository" if args.forge == "github" else "project_path"
    return f'assertion.{claim} == "{args.repository}"'


def trusts(args: CiIdentityArgs) -> list[Trust]:
    """Each account with its members: deploy accounts per environment, the review stages' one,
    the read-only preview one."""
    check(args)
    pool = f"//iam.googleapis.com/{pool_path(args)}"

    def target(value: str) -> str:
        return f"principalSet:{pool}/attribute.deploy_target/{value}"

    def deployers(name: str) -> tuple[str, ...]:
        if args.forge == "gitlab":
            return (target(name),)
        if args.github_binding == "ref":
            return (target("by-hand"),) if name in args.manual_environments else (target("on-merge"), target("by-hand"))
        return (f"principal:{pool}/subject/repo:{args.repository}:environment:{name}",)

    if args.forge == "github" and args.github_binding == "environment":
        review, preview = deployers(args.review_environment), deployers(args.preview_environment)
    elif args.forge == "github":  # no environments: the preview is read-only, any job of the repository
        review, preview = (target("review"),), (f"principalSet:{pool}/attribute.repository/{args.repository}",)
    else:
        review, preview = (target("review"),), (f"principalSet:{pool}/*",)  # read-only: any job of the project
    found = [Trust(account_id(args, name), f"deploys {name}", deployers(name), project, args.deploy_roles)
             for name, project in args.deploy_environments.items()]
    found.append(Trust(account_id(args, "review"), "deploys the per-pull-request stages", review,
                       args.review_project, args.deploy_roles))
    found.append(Trust(account_id(args, "preview"), "previews every stage, read-only", preview, args.project,
                       args.preview_roles))
    return found


def variable_names(args: CiIdentityArgs) -> dict[str, str]:
    """The pipelines' variable for each account, by purpose key (environment name, `review`,
    `preview`): each name says what the account may do, and the names differ, so on every plan
    they can all be repository (project) variables; an account's email is no secret, its
    binding is what guards it."""
    names = {name: "GCP_DEPLOY_SERVICE_ACCOUNT_" + re.sub(r"[^A-Z0-9]", "_", name.upper())
             for name in args.deploy_environments}
    return {**names, "review": "GCP_REVIEW_SERVICE_ACCOUNT", "preview": "GCP_PREVIEW_SERVICE_ACCOUNT"}


class CiIdentity(pulumi.ComponentResource):
    """The pool, its provider, and each Trust as a service account with its workload-identity
    binding and project roles. `provider_name` is the pipeline's GCP_WORKLOAD_IDENTITY_PROVIDER,
    `accounts` each account's email by purpose key (environment name, `review`, `preview`),
    `variables` every variable the pipelines read, by its name (GCP_WORKLOAD_IDENTITY_PROVIDER,
    GCP_DEPLOY_SERVICE_ACCOUNT_DEV, ..., GCP_REVIEW_SERVICE_ACCOUNT, GCP_PREVIEW_SERVICE_ACCOUNT)."""

    def __init__(self, name: str, args: CiIdentityArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("ddb2bigtable:ci:Identity", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        planned = trusts(args)
        pool = gcp.iam.WorkloadIdentityPool(
            f"{name}-pool", project=args.project, workload_identity_pool_id=args.pool_id,
            display_name="ddb2bigtable CI", description=f"CI jobs of {args.repository} ({args.forge})", opts=child)
        gcp.iam.WorkloadIdentityPoolProvider(
            f"{name}-{args.forge}", project=args.project, workload_identity_pool_id=args.pool_id,
            workload_identity_pool_provider_id=provider_id(args), attribute_mapping=attribute_mapping(args),
            attribute_condition=attribute_condition(args),
            oidc={"issuer_uri": args.issuer_uri or ISSUERS[args.forge]},
            opts=pulumi.ResourceOptions(parent=self, depends_on=[pool]))
        self.provider_name = f"{pool_path(args)}/providers/{provider_id(args)}"
        self.accounts: dict[str, pulumi.Output[str]] = {}
        for trust in planned:
            key = trust.account_id.removeprefix(f"{args.account_prefix}-").removeprefix("deploy-")
            account = gcp.serviceaccount.Account(
                f"{name}-{key}", project=args.project, account_id=trust.account_id,
                display_name=f"CI: {trust.purpose}"[:100], opts=child)
            for number, member in enumerate(trust.members):
                gcp.serviceaccount.IAMMember(
                    f"{name}-{key}-wif-{number}", service_account_id=account.name,
                    role="roles/iam.workloadIdentityUser", member=member, opts=child)
            for role in trust.roles:
                gcp.projects.IAMMember(f"{name}-{key}-{role.rsplit('/', 1)[-1]}", project=trust.project, role=role,
                                       member=account.member, opts=child)
            self.accounts[key] = account.email
        names = variable_names(args)
        self.variables: dict[str, pulumi.Input[str]] = {
            "GCP_WORKLOAD_IDENTITY_PROVIDER": self.provider_name,
            **{names[key]: email for key, email in self.accounts.items()}}
        self.register_outputs({"provider_name": self.provider_name, "accounts": self.accounts,
                               "variables": self.variables})
