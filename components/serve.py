"""`ddb2bigtable:serve:CloudRun`: the plan's `serve` as a Cloud Run service in each of its
regions, one service account of its own and the IAM it needs, nothing wider.

Translation only (ddb2bigtable/plan/serve.py decides): the service runs the plan's image
and command; the account gets `roles/bigtable.user` on each instance and, with key
signing, `roles/secretmanager.secretAccessor` on the key secret, which Cloud Run puts in
serve's environment (`value_source.secret_key_ref`), so the secret's value never passes
through the plan or Pulumi's state. Callers: IAM signing grants `roles/run.invoker` to the
plan's invokers only; key signing turns Cloud Run's invoker check off
(`invoker_iam_disabled`) because serve checks every SigV4 signature itself. No `allUsers`
binding is ever made. The plan's alerts on the endpoint's requests become alert policies.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import pulumi
import pulumi_gcp as gcp

from ddb2bigtable.plan.model import ServePlan

from .instance import BigtableInstance
from .monitoring import condition_args

BIGTABLE_ROLE = "roles/bigtable.user"  # data reads and writes through app profiles; no admin
SECRET_ROLE = "roles/secretmanager.secretAccessor"
INVOKER_ROLE = "roles/run.invoker"
RUNBOOK = "docs/serve.md, section 'When a serve alert fires'"
INGRESS = {"all": "INGRESS_TRAFFIC_ALL", "internal": "INGRESS_TRAFFIC_INTERNAL_ONLY",
           "internal-and-cloud-load-balancing": "INGRESS_TRAFFIC_INTERNAL_LOAD_BALANCER"}


def container_args(plan: ServePlan) -> gcp.cloudrunv2.ServiceTemplateContainerArgsDict:
    """The one container: the plan's command, port, limits and (key signing) the secret env."""
    command, *args = plan.command
    container: gcp.cloudrunv2.ServiceTemplateContainerArgsDict = {
        "image": plan.image, "commands": [command], "args": args,
        "ports": {"container_port": plan.port},
        "resources": {"limits": {"cpu": str(plan.cpu), "memory": plan.memory},
                      "startup_cpu_boost": plan.startup_cpu_boost},
    }
    if plan.keys_secret:
        container["envs"] = [{"name": plan.keys_env, "value_source": {"secret_key_ref": {
            "secret": plan.keys_secret, "version": plan.keys_secret_version}}}]
    return container


class ServeService(pulumi.ComponentResource):
    """`instances` are the stage's instance components by plan id: the grants take their names,
    and the service waits for them (its app profiles included)."""

    def __init__(self, name: str, plan: ServePlan, instances: Mapping[str, BigtableInstance],
                 opts: pulumi.ResourceOptions | None = None):
        super().__init__("ddb2bigtable:serve:CloudRun", name, None, opts)
        assert plan.where == "cloud-run" and plan.signing != "none"  # the planner allows nothing else here
        child = pulumi.ResourceOptions(parent=self)
        project = plan.project
        self.account = gcp.serviceaccount.Account(
            f"{name}-account", account_id=plan.service_account_id, project=project,
            display_name=f"ddb2bigtable serve ({plan.service})"[:100], opts=child)
        grants: list[pulumi.Resource] = [
            gcp.bigtable.InstanceIamMember(f"{name}-{instance}-access", instance=instances[instance].instance.name,
                                           project=project, role=BIGTABLE_ROLE, member=self.account.member,
                                           opts=child)
            for instance in plan.instances]
        if plan.keys_secret:
            elsewhere = plan.keys_secret.startswith("projects/")  # a full name carries its own project
            grants.append(gcp.secretmanager.SecretIamMember(
                f"{name}-keys-access", secret_id=plan.keys_secret, project=None if elsewhere else project,
                role=SECRET_ROLE, member=self.account.member, opts=child))
        self.services = {region: gcp.cloudrunv2.Service(
            f"{name}-{region}", name=plan.service, project=project, location=region, ingress=INGRESS[plan.ingress],
            deletion_protection=plan.deletion_protection, invoker_iam_disabled=plan.signing == "keys",
            labels=dict(plan.labels), description=plan.why[:512],
            # Service-level scaling, as Google recommends: it holds across revisions, a rollout included.
            scaling={"min_instance_count": plan.min_instances, "max_instance_count": plan.max_instances},
            template={
                "service_account": self.account.email,
                "max_instance_request_concurrency": plan.concurrency,
                "containers": [container_args(plan)],
            },
            opts=pulumi.ResourceOptions(parent=self, protect=plan.deletion_protection,
                                        depends_on=[*instances.values(), *grants]))
            for region in plan.regions}
        self.invokers = [
            gcp.cloudrunv2.ServiceIamMember(f"{name}-{region}-invoker-{_label(member)}", name=service.name,
                                            project=project, location=region, role=INVOKER_ROLE, member=member,
                                            opts=child)
            for region, service in self.services.items() for member in plan.invokers]
        self.policies = [
            gcp.monitoring.AlertPolicy(
                f"{name}-{alert.kind}", project=project, display_name=f"serve {alert.id}"[:100], combiner="OR",
                severity=alert.severity, conditions=[condition_args(alert)],
                notification_channels=list(plan.alert_channels),
                documentation={"content": f"{alert.why}\n\nWhat to do: {RUNBOOK}.", "mime_type": "text/markdown"},
                user_labels={"managed-by": "ddb2bigtable", "alert": alert.kind}, opts=child)
            for alert in plan.alerts]
        self.urls = {region: service.uri for region, service in self.services.items()}
        self.register_outputs({"urls": self.urls, "service_account": self.account.email})


def _label(member: str) -> str:
    """A principal as part of a resource name, so removing one invoker renames no other."""
    return re.sub(r"[^A-Za-z0-9.@-]+", "-", member)
