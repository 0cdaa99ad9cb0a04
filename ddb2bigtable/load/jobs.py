"""Which data loads a cloud stage launches after `pulumi up`, and when to launch them again.

One job per table that has an export under the stage's `load.export` prefix
(`<export>/<table id>/`). Its fingerprint covers what decides the rows a load writes:
the export location, the table's key, TTL and mapping, and the sample fraction. The
post-deploy hook launches a new job only when the fingerprint changes, so an ordinary
`pulumi up` (a node count changed) never reloads data.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..bigtable.table_types import types_profile
from ..plan.app_profiles import LOAD_PROFILE, load_cluster
from ..plan.model import StagePlan
from ..spec.model import Spec, TableSpec
from ..spec.stage import Stage
from .state import fingerprint


@dataclass(frozen=True)
class LoadJobPlan:
    instance_id: str
    table_id: str
    export: str
    project: str | None
    region: str  # GCP region of the load cluster: Dataflow workers run next to it
    app_profile_id: str
    sample: float | None
    temp_location: str | None
    service_account: str | None
    spec_file: str  # the table's spec, relative to the project root (where `pulumi up` runs)
    fingerprint: str
    types_profile_id: str | None = None  # where the job records the table's types (table_types.types_profile)


def table_fingerprint(export: str, table: TableSpec, sample: float | None) -> str:
    """What decides the rows a load writes; a new value means a new load."""
    return fingerprint(export, repr(table.source.key), repr(table.source.ttl), repr(table.mapping), sample)


def load_jobs(stage: Stage, specs: list[Spec], plan: StagePlan) -> list[LoadJobPlan]:
    load = stage.load
    if load is None or load.export is None or load.runner != "dataflow" or stage.emulator:
        return []
    jobs = []
    # The spec files as the stage lists them, relative to the project: Pulumi keeps the job's
    # inputs in its state, and another machine's absolute path would mean nothing there.
    for spec_file, spec, instance in zip(stage.specs, specs, plan.instances, strict=True):
        cluster = load_cluster(spec, list(instance.clusters))
        for table in spec.tables:
            export = f"{load.export.rstrip('/')}/{table.id}"
            jobs.append(LoadJobPlan(
                instance_id=instance.id, table_id=table.id, export=export, project=stage.gcp_project,
                region=cluster.gcp_region, app_profile_id=LOAD_PROFILE, sample=load.sample,
                temp_location=load.temp_location, service_account=load.service_account, spec_file=spec_file,
                fingerprint=table_fingerprint(export, table, load.sample), types_profile_id=types_profile(instance),
            ))
    return jobs
