"""The Pulumi program: stack config -> stage -> plan -> components -> outputs.

Wiring only; every decision is in `ddb2bigtable` (the engine) and every resource in
`components`. See docs/operations.md, "Deploying a stage with Pulumi".
"""

from pathlib import Path

import pulumi

from components import BigtableInstance, BigtableMonitoring, ServeService, launch_loads, warn_on_source_drift
from ddb2bigtable.load.jobs import load_jobs
from ddb2bigtable.program import plan_for_stack, stack_outputs
from ddb2bigtable.spec.errors import InputError

config = {"gcp:project": pulumi.Config("gcp").get("project"),
          "ddb2bigtable:stage": pulumi.Config("ddb2bigtable").get_object("stage")}
try:
    stage, specs, plan = plan_for_stack(pulumi.get_stack(), Path(__file__).resolve().parent, config)
except InputError as error:
    raise pulumi.RunError(str(error)) from None
for warning in plan.warnings:
    pulumi.log.warn(f"{warning.code} {warning.instance}/{warning.table or '-'}: {warning.message}")
account = stage.load.service_account if stage.load else None
instances = {i.id: BigtableInstance(i.id, i, stage.gcp_project, account) for i in plan.instances}
for i in plan.instances:
    if i.operations and i.operations.enabled:
        BigtableMonitoring(f"{i.id}-monitoring", i, stage.gcp_project,
                           pulumi.ResourceOptions(depends_on=[instances[i.id]]))
for key, value in stack_outputs(plan).items():
    pulumi.export(key, value)
if plan.serve:  # the DynamoDB-compatible endpoint, by region: an SDK's endpoint_url
    pulumi.export("serve_endpoint_urls", ServeService(f"serve-{plan.stage}", plan.serve, instances).urls)
jobs = launch_loads(load_jobs(stage, specs, plan), instances)  # post-deploy hook: only on `up`, on change
if jobs:
    pulumi.export("load_jobs", jobs)
if stage.live_source:
    pulumi.export("source_drift", pulumi.Output.all(*[warn_on_source_drift(t) for s in specs for t in s.tables]))
