"""The post-deploy hook: a Dataflow load job per table, as a Pulumi dynamic resource.

Why a dynamic resource (not a resource hook or pulumi-command): it needs no provider
plugin, its `create` runs only during `pulumi up` after the tables it depends on exist
(never during `pulumi preview`), Pulumi's own diff on the `fingerprint` input decides
whether to launch again, and the job id is an ordinary output.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import pulumi
import pulumi.dynamic as dynamic

from ddb2bigtable.load.jobs import LoadJobPlan


def launch(props: dict[str, Any]) -> str:
    """Starts the Beam pipeline on Dataflow and returns its job id (imports Beam lazily)."""
    from ddb2bigtable.load.beam.dataflow import launch_dataflow

    return launch_dataflow(LoadJobPlan(**{k: props[k] for k in LoadJobPlan.__dataclass_fields__}))


class LoadJobProvider(dynamic.ResourceProvider):
    """Create = launch; a changed fingerprint = replace = launch again; delete = forget."""

    def create(self, props: dict[str, Any]) -> dynamic.CreateResult:
        job_id = launch(props)
        return dynamic.CreateResult(id_=job_id, outs={**props, "job_id": job_id})

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> dynamic.DiffResult:
        changed = olds.get("fingerprint") != news.get("fingerprint")
        return dynamic.DiffResult(changes=changed, replaces=["fingerprint"] if changed else [],
                                  delete_before_replace=False)

    def delete(self, _id: str, _props: dict[str, Any]) -> None:
        """A finished load leaves its rows; nothing to undo."""


class LoadJob(dynamic.Resource):
    job_id: pulumi.Output[str]

    def __init__(self, name: str, job: LoadJobPlan, opts: pulumi.ResourceOptions | None = None):
        super().__init__(LoadJobProvider(), name, {**asdict(job), "job_id": None}, opts)


def launch_loads(jobs: list[LoadJobPlan], instances: dict[str, Any]) -> dict[str, pulumi.Output[str]]:
    """One LoadJob per planned load, after its table (and so its GC rules) exists and after
    the load's service account may write to the instance: a job started before the grant
    would fail its first writes."""
    outputs = {}
    for job in jobs:
        instance = instances[job.instance_id]
        grant = instance.load_access
        depends_on = [instance.tables[job.table_id], *([grant] if grant is not None else [])]
        resource = LoadJob(f"{job.instance_id}-{job.table_id}-load", job,
                           opts=pulumi.ResourceOptions(depends_on=depends_on))
        outputs[f"{job.instance_id}/{job.table_id}"] = resource.job_id
    return outputs
