"""The post-deploy hook: a Dataflow load job per table, as a Pulumi dynamic resource.

Why a dynamic resource (not a resource hook or pulumi-command): it needs no provider
plugin, its `create` runs only during `pulumi up` after the tables it depends on exist
(never during `pulumi preview`), Pulumi's own diff on the `fingerprint` input decides
whether to launch again, and the job id is an ordinary output.

Its delete cancels the job when it is still running: `pulumi destroy` of a stage (a pull
request's teardown) would otherwise leave a Dataflow job billing and writing into a table
being deleted; a replaced load's old job stops too. Through Dataflow's REST API
(projects.locations.jobs get, then update with requestedState JOB_STATE_CANCELLED, as
`gcloud dataflow jobs cancel` does; Dataflow docs, "Stop a running pipeline", read
2026-12-07), with the deploying identity's credentials. A job that could not be asked about
or cancelled fails the delete, so the destroy fails where it can be seen.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING, Any

import pulumi
import pulumi.dynamic as dynamic

from ddb2bigtable.load.jobs import LoadJobPlan

if TYPE_CHECKING:
    import requests

DATAFLOW = "https://dataflow.googleapis.com/v1b3"
ENDED = {"JOB_STATE_DONE", "JOB_STATE_FAILED", "JOB_STATE_CANCELLED", "JOB_STATE_UPDATED", "JOB_STATE_DRAINED",
         "JOB_STATE_CANCELLING", "JOB_STATE_DRAINING"}  # ended, or already stopping
TIMEOUT = 30  # seconds, each call


def session() -> requests.Session:
    """The deploying identity's session, google-auth's AuthorizedSession (a requests Session;
    imported lazily, as `launch` imports Beam)."""
    import google.auth
    from google.auth.transport.requests import AuthorizedSession

    credentials, _ = google.auth.default(scopes=["https://www.googleapis.com/auth/cloud-platform"])
    return AuthorizedSession(credentials)


def cancel(http: requests.Session, job_id: str, project: str, region: str, endpoint: str = DATAFLOW) -> str:
    """Cancels the job unless it has ended (or is gone); returns the state it was found in."""
    url = f"{endpoint}/projects/{project}/locations/{region}/jobs/{job_id}"
    found = http.get(url, timeout=TIMEOUT)
    if found.status_code == 404:
        return "gone"
    if found.status_code != 200:
        raise RuntimeError(f"Dataflow job {job_id} ({project}, {region}): could not read its state, "
                           f"{found.status_code} {found.text[:300]}; cancel it with `gcloud dataflow jobs cancel "
                           f"{job_id} --region {region} --project {project}` and run the destroy again")
    state = found.json().get("currentState", "")
    if state in ENDED:
        return state
    stopped = http.put(url, json={"requestedState": "JOB_STATE_CANCELLED"}, timeout=TIMEOUT)
    if stopped.status_code != 200:
        raise RuntimeError(f"Dataflow job {job_id} ({project}, {region}) is {state} and could not be cancelled: "
                           f"{stopped.status_code} {stopped.text[:300]}")
    return state


def launch(props: dict[str, Any]) -> str:
    """Starts the Beam pipeline on Dataflow and returns its job id (imports Beam lazily)."""
    from ddb2bigtable.load.beam.dataflow import launch_dataflow

    return launch_dataflow(LoadJobPlan(**{k: props[k] for k in LoadJobPlan.__dataclass_fields__}))


class LoadJobProvider(dynamic.ResourceProvider):
    """Create = launch; a changed fingerprint = replace = launch again; delete = cancel the job
    if it still runs (a finished load leaves its rows: nothing to undo)."""

    def create(self, props: dict[str, Any]) -> dynamic.CreateResult:
        job_id = launch(props)
        return dynamic.CreateResult(id_=job_id, outs={**props, "job_id": job_id})

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> dynamic.DiffResult:
        changed = olds.get("fingerprint") != news.get("fingerprint")
        return dynamic.DiffResult(changes=changed, replaces=["fingerprint"] if changed else [],
                                  delete_before_replace=False)

    def delete(self, job_id: str, props: dict[str, Any]) -> None:
        cancel(session(), job_id, props["project"], props["region"])


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
