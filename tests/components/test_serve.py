"""`serve` deployed as code, under Pulumi's mocks: the real program, a stage with `serve:`.

What is asserted is what `pulumi up` would create: a Cloud Run service running the plan's
image and `ddb2bigtable serve` command, a service account of its own with
`roles/bigtable.user` on each instance, the callers it admits (IAM invokers, or SigV4 key
pairs from Secret Manager as a secret env ref), and never an `allUsers` invoker.
"""

from __future__ import annotations

import re
import textwrap
from typing import Any

import pytest
import yaml

from ddb2bigtable.cli.serve_cmd import serve as serve_command
from ddb2bigtable.program import plan_for_stack
from ddb2bigtable.serve.protocol.signatures import KEYS_ENV
from ddb2bigtable.spec.errors import InputError

from ..conftest import ROOT
from ..pulumi_harness import Registered, Run, run_program, stack_config

SERVICE = "gcp:cloudrunv2/service:Service"
ACCOUNT = "gcp:serviceaccount/account:Account"
BIGTABLE_IAM = "gcp:bigtable/instanceIamMember:InstanceIamMember"
INVOKER = "gcp:cloudrunv2/serviceIamMember:ServiceIamMember"
SECRET_IAM = "gcp:secretmanager/secretIamMember:SecretIamMember"
PROFILE = "gcp:bigtable/appProfile:AppProfile"
POLICY = "gcp:monitoring/alertPolicy:AlertPolicy"
IMAGE = "us-west1-docker.pkg.dev/my-project-dev/tools/ddb2bigtable:0.1.0"
APP = "serviceAccount:orders-app@my-project-dev.iam.gserviceaccount.com"


def with_serve(stack: str, serve: dict[str, Any]) -> dict[str, Any]:
    config = stack_config(stack)
    return {**config, "ddb2bigtable:stage": {**config["ddb2bigtable:stage"], "serve": serve}}


def only(run: Run, type_: str) -> Registered:
    (resource,) = run.of_type(type_)
    return resource


def container(run: Run) -> dict[str, Any]:
    (box,) = only(run, SERVICE).inputs["template"]["containers"]
    return box


def test_no_service_account_or_grant_unless_serve_is_enabled():
    for stack in ("dev", "prod"):
        run = run_program(stack)
        assert not run.of_type(SERVICE) and not run.of_type(ACCOUNT) and not run.of_type(INVOKER)
        assert "serve_endpoint_urls" not in run.outputs
    run = run_program("dev", with_serve("dev", {"enabled": False, "image": IMAGE}))
    assert not run.of_type(SERVICE) and not run.of_type(ACCOUNT)


def test_iam_signing_runs_serve_unsigned_behind_the_invoker_check():
    run = run_program("dev", with_serve("dev", {"enabled": True, "image": IMAGE, "min_instances": 1,
                                                "max_instances": 4, "cpu": 2, "memory": "1Gi", "concurrency": 40,
                                                "invokers": [APP]}))
    plan = plan_for_stack("dev", ROOT, with_serve("dev", {"enabled": True, "image": IMAGE, "invokers": [APP]}))[2]
    service = only(run, SERVICE).inputs
    box = container(run)
    assert box["image"] == IMAGE and box["commands"] == ["ddb2bigtable"]
    assert box["args"] == ["serve", "--stage", "dev", "--host", "0.0.0.0", "--port", "8080", "--workers", "2",
                           "--unsigned"]
    assert box["ports"] == {"containerPort": 8080}
    assert box["resources"] == {"limits": {"cpu": "2", "memory": "1Gi"}, "startupCpuBoost": True}
    assert "envs" not in box  # no key pairs: Cloud Run's IAM check is the gate
    template = service["template"]
    assert service["scaling"] == {"minInstanceCount": 1, "maxInstanceCount": 4} and "scaling" not in template
    assert template["maxInstanceRequestConcurrency"] == 40
    assert template["serviceAccount"] == "serve-dev@my-project-dev.iam.gserviceaccount.com"
    assert service["invokerIamDisabled"] is False and service["ingress"] == "INGRESS_TRAFFIC_ALL"
    (region,) = plan.serve.regions  # home: the first instance's home cluster's region
    assert service["name"] == "ddb2bigtable-dev" and service["location"] == region
    assert region == plan.instances[0].clusters[0].gcp_region
    assert service["deletionProtection"] is False  # dev is torn down at will
    assert only(run, ACCOUNT).inputs["accountId"] == "serve-dev"
    grants = {r.inputs["instance"]: r.inputs for r in run.of_type(BIGTABLE_IAM)}
    assert set(grants) == {i.id for i in plan.instances}
    assert all(g["role"] == "roles/bigtable.user" and g["member"] == "serviceAccount:serve-dev@my-project-dev"
               ".iam.gserviceaccount.com" for g in grants.values())
    invoker = only(run, INVOKER).inputs
    assert (invoker["role"], invoker["member"], invoker["name"]) == ("roles/run.invoker", APP, "ddb2bigtable-dev")
    assert not run.of_type(SECRET_IAM)
    assert run.outputs["serve_endpoint_urls"] == {region: "https://ddb2bigtable-dev-abc123-uc.a.run.app"}
    transactional = {(r.inputs["instance"], r.inputs["appProfileId"]) for r in run.of_type(PROFILE)
                     if r.inputs.get("singleClusterRouting", {}).get("allowTransactionalWrites")}
    assert {i for i, _ in transactional} == set(grants)  # serve's CheckAndMutateRow has a profile everywhere


def test_the_service_waits_for_the_instances_and_its_grants():
    run = run_program("dev", with_serve("dev", {"enabled": True, "image": IMAGE}))
    needs = set(only(run, SERVICE).dependencies)
    for grant in run.of_type(BIGTABLE_IAM):
        assert grant.urn in needs
    assert any("bigtable/instance:Instance" in urn for urn in needs)


def test_key_signing_takes_the_pairs_from_secret_manager_as_an_env_ref():
    run = run_program("dev", with_serve("dev", {"enabled": True, "image": IMAGE, "signing": "keys",
                                                "keys_secret": "serve-keys", "keys_secret_version": 3}))
    box = container(run)
    assert "--unsigned" not in box["args"]  # serve checks every signature itself
    region = only(run, SERVICE).inputs["location"]  # a signature must name the service's own URL as its Host
    hosts = [box["args"][i + 1] for i, flag in enumerate(box["args"]) if flag == "--public-host"]
    assert hosts == [f"ddb2bigtable-dev-*.{region}.run.app", "ddb2bigtable-dev-*.a.run.app"]
    assert box["envs"] == [{"name": KEYS_ENV, "valueSource": {"secretKeyRef": {"secret": "serve-keys",
                                                                                "version": "3"}}}]
    assert all("value" not in env for env in box["envs"])  # a reference, never the secret
    assert only(run, SERVICE).inputs["invokerIamDisabled"] is True
    secret = only(run, SECRET_IAM).inputs
    assert (secret["secretId"], secret["role"], secret["member"]) == (
        "serve-keys", "roles/secretmanager.secretAccessor", "serviceAccount:serve-dev@my-project-dev.iam.gserviceaccount.com")
    assert not run.of_type(INVOKER)
    assert only(run, SECRET_IAM).urn in only(run, SERVICE).dependencies  # readable before a revision starts


def test_key_signing_passes_the_stage_s_signing_regions_and_public_hosts_to_every_service():
    """What a signature may be scoped to besides the tables' regions and Cloud Run's URLs reaches
    each region's container as the serve CLI's own options."""
    run = run_program("prod", with_serve("prod", {
        "enabled": True, "image": IMAGE, "signing": "keys", "keys_secret": "serve-keys", "regions": "all",
        "signing_regions": ["eu-west-1", "ap-south-1"], "public_hosts": ["ddb.example.com", "*.edge.example.com"]}))
    services = run.of_type(SERVICE)
    assert len(services) > 1
    for service in services:
        (box,) = service.inputs["template"]["containers"]
        params = serve_command.make_context("serve", box["args"][1:]).params
        assert params["regions"] == ("eu-west-1", "ap-south-1")
        assert {"ddb.example.com", "*.edge.example.com",
                f"ddb2bigtable-prod-*.{service.inputs['location']}.run.app"} <= set(params["public_hosts"])


@pytest.mark.parametrize("serve", [
    {"enabled": True, "image": IMAGE, "invokers": [APP, "group:orders@example.com"]},
    {"enabled": True, "image": IMAGE, "signing": "keys", "keys_secret": "projects/p/secrets/serve-keys"},
    {"enabled": True, "image": IMAGE},
], ids=["iam", "keys", "defaults"])
def test_no_binding_ever_opens_the_endpoint_to_everyone(serve):
    run = run_program("prod", with_serve("prod", serve))
    for secret in run.of_type(SECRET_IAM):  # a secret named with its project keeps it
        assert secret.inputs["secretId"] == "projects/p/secrets/serve-keys" and "project" not in secret.inputs
    members = [r.inputs.get("member") for r in run.resources] + [m for r in run.resources
                                                                 for m in r.inputs.get("members", [])]
    assert not {"allUsers", "allAuthenticatedUsers"} & set(members)
    assert only(run, SERVICE).protect and only(run, SERVICE).inputs["deletionProtection"] is True  # prod


def test_signing_none_is_refused_outside_the_emulator_stage():
    with pytest.raises(InputError) as error:
        plan_for_stack("dev", ROOT, with_serve("dev", {"enabled": True, "image": IMAGE, "signing": "none"}))
    (problem,) = error.value.problems
    assert problem.path == "config.ddb2bigtable:stage.serve.signing"
    assert "emulator stage only" in problem.message


def test_serve_keys_env_is_the_variable_serve_reads():
    plan = plan_for_stack("dev", ROOT, with_serve("dev", {"enabled": True, "image": IMAGE}))[2]
    assert plan.serve is not None and plan.serve.keys_env == KEYS_ENV


def test_the_docs_example_deploys_as_the_page_says():
    """docs/serve.md's stage snippet, pasted into the dev stack, gives the service the page describes."""
    text = (ROOT / "docs" / "serve.md").read_text(encoding="utf-8").split("## Deploying serve", 1)[1]
    snippet = re.search(r"```yaml\n(.*?)```", text, re.S).group(1)
    settings = yaml.safe_load(textwrap.dedent("\n".join(line for line in snippet.splitlines()
                                                        if not line.startswith("#"))))["serve"]
    run = run_program("dev", with_serve("dev", settings))
    box = container(run)
    assert box["image"] == settings["image"] and box["args"][:3] == ["serve", "--stage", "dev"]
    assert only(run, INVOKER).inputs["member"] == settings["invokers"][0]
    assert [*run.outputs["serve_endpoint_urls"].values()] == ["https://ddb2bigtable-dev-abc123-uc.a.run.app"]


@pytest.mark.parametrize("serve", [
    {"enabled": True, "image": IMAGE, "cpu": 4, "memory": "2Gi"},
    {"enabled": True, "image": IMAGE, "signing": "keys", "keys_secret": "serve-keys"},
], ids=["iam", "keys"])
def test_the_container_s_command_is_one_the_serve_cli_takes(serve):
    """The plan's command parses with the real `serve` command's options (no option the CLI lacks)."""
    plan = plan_for_stack("prod", ROOT, with_serve("prod", serve))[2].serve
    assert plan is not None and plan.command[:2] == ("ddb2bigtable", "serve")
    context = serve_command.make_context("serve", list(plan.command[2:]))
    assert (context.params["stage"], context.params["host"], context.params["port"]) == ("prod", "0.0.0.0", plan.port)
    assert context.params["workers"] == plan.cpu == serve.get("cpu", 1)
    assert context.params["unsigned"] == (plan.signing == "iam")


def test_regions_all_puts_a_service_beside_every_cluster_with_one_identity():
    """prod keeps every replica region: an application in each reaches a nearby endpoint."""
    run = run_program("prod", with_serve("prod", {"enabled": True, "image": IMAGE, "regions": "all",
                                                  "invokers": [APP]}))
    plan = plan_for_stack("prod", ROOT, with_serve("prod", {"enabled": True, "image": IMAGE, "regions": "all"}))[2]
    everywhere = {c.gcp_region for i in plan.instances for c in i.clusters}
    assert len(everywhere) > 1 and set(plan.serve.regions) == everywhere
    services = {r.inputs["location"]: r.inputs for r in run.of_type(SERVICE)}
    assert set(services) == everywhere and {s["name"] for s in services.values()} == {"ddb2bigtable-prod"}
    assert {r.inputs["location"] for r in run.of_type(INVOKER)} == everywhere  # each service admits the app
    assert len(run.of_type(ACCOUNT)) == 1 and len(run.of_type(BIGTABLE_IAM)) == len(plan.instances)
    assert set(run.outputs["serve_endpoint_urls"]) == everywhere


def test_the_endpoint_s_alerts_watch_its_errors_and_its_ceiling_and_notify_the_stage_s_channels():
    channel = "projects/my-project-prod/notificationChannels/7"
    config = with_serve("prod", {"enabled": True, "image": IMAGE, "max_instances": 12})
    config["ddb2bigtable:stage"]["alerts"] = {"channels": [channel]}
    policies = {r.inputs["userLabels"]["alert"]: r.inputs for r in run_program("prod", config).of_type(POLICY)
                if r.inputs["userLabels"]["alert"].startswith("serve-")}
    assert set(policies) == {"serve-errors", "serve-turned-away"}
    for kind, which in (("serve-errors", 'response_code_class="5xx"'), ("serve-turned-away", 'response_code="429"')):
        (condition,) = policies[kind]["conditions"]
        threshold = condition["conditionThreshold"]
        assert 'resource.labels.service_name="ddb2bigtable-prod"' in threshold["filter"] and which in threshold["filter"]
        assert which not in threshold["denominatorFilter"] and threshold["thresholdValue"] == 0.01
        assert policies[kind]["notificationChannels"] == [channel]
    assert "12 instances" in policies["serve-turned-away"]["documentation"]["content"]
    quiet = with_serve("pr", {"enabled": True, "image": IMAGE})  # the pr template turns alerts off
    assert not [r for r in run_program("pr", quiet).of_type(POLICY) if "serve" in r.inputs["displayName"]]
