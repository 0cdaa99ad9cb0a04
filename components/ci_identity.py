"""`ddb2bigtable:ci:Identity`: the pipeline's own identity, as code: a workload identity pool,
its OIDC provider for GitHub or GitLab, and one service account per trust level, each bound
to the jobs that may become it and to nothing wider.

Why per environment, not per repository: a binding to the repository lets any job of it (a
branch's, or a pull request that edits a workflow) impersonate the prod deploy account.
GitHub puts a job's environment in its token's subject (`repo:ORG/REPO:environment:prod`), so
each deploy account is bound to its environment's subject, and the environment's deployment
branches (main) decide which jobs get that subject. GitLab's subject names the branch, not the
environment, so the provider maps the claims `ref_protected` and `environment` into one
attribute, `deploy_target`, which is the environment only for a protected branch's job
(GitLab docs, "OpenID Connect (OIDC) Authentication Using ID Tokens": `environment` is present
when the job names one). The preview account is read-only and distinct from every deploy one.

Translation only: the caller names the forge, the repository, the environments, their projects
and the roles; `trusts` turns them into principals (a pure function, tested directly), the
component into pulumi-gcp resources. Principal formats: Google Cloud IAM docs, "Principal
identifiers" (workload identity pools), read 2026-12-07.
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


@dataclass(frozen=True)
class CiIdentityArgs:
    """What the pipeline's identity needs to know; nothing here is chosen by the component.

    `deploy_environments` maps each environment deployed from the protected default branch
    (dev, staging, prod) to the project its account gets `deploy_roles` in; `review_project` is
    where the per-pull-request stages live (GitHub's environment `review_environment`, GitLab's
    `review/*` environments, from any branch); `issuer_uri` is a self-managed GitLab's URL."""

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
    """Claims to attributes. GitLab's `deploy_target`: the environment for a protected branch's
    job, `review` for a review environment's job from any branch, empty otherwise."""
    if args.forge == "github":
        return {"google.subject": "assertion.sub", "attribute.repository": "assertion.repository"}
    return {"google.subject": "assertion.sub", "attribute.project_path": "assertion.project_path",
            "attribute.deploy_target": (
                'assertion.ref_protected == "true" && has(assertion.environment) ? assertion.environment : '
                '(has(assertion.environment) && assertion.environment.startsWith("review/") ? "review" : "")')}


def attribute_condition(args: CiIdentityArgs) -> str:
    """The provider accepts this repository's tokens only: no other repository's job gets in."""
    claim = "repository" if args.forge == "github" else "project_path"
    return f'assertion.{claim} == "{args.repository}"'


def trusts(args: CiIdentityArgs) -> list[Trust]:
    """Each account with its members: deploy accounts per environment, the review stages' one,
    the read-only preview one."""
    check(args)
    pool = f"//iam.googleapis.com/{pool_path(args)}"
    if args.forge == "github":
        def environment(name: str) -> str:
            return f"principal:{pool}/subject/repo:{args.repository}:environment:{name}"
        review, preview = environment(args.review_environment), environment(args.preview_environment)
    else:
        def environment(name: str) -> str:
            return f"principalSet:{pool}/attribute.deploy_target/{name}"
        review, preview = environment("review"), f"principalSet:{pool}/*"  # read-only: any job of the project
    found = [Trust(account_id(args, name), f"deploys {name}", (environment(name),), project, args.deploy_roles)
             for name, project in args.deploy_environments.items()]
    found.append(Trust(account_id(args, "review"), "deploys the per-pull-request stages", (review,),
                       args.review_project, args.deploy_roles))
    found.append(Trust(account_id(args, "preview"), "previews every stage, read-only", (preview,), args.project,
                       args.preview_roles))
    return found


class CiIdentity(pulumi.ComponentResource):
    """The pool, its provider, and each Trust as a service account with its workload-identity
    binding and project roles. `provider_name` is the pipeline's GCP_WORKLOAD_IDENTITY_PROVIDER,
    `accounts` each account's email by purpose key (environment name, `review`, `preview`)."""

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
        self.register_outputs({"provider_name": self.provider_name, "accounts": self.accounts})
