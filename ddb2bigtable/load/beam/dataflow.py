"""The post-deploy hook's launch: one load job on Dataflow, with the package its workers install."""

from __future__ import annotations

import asyncio
import logging
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import metadata
from pathlib import Path
from typing import Any

from ...exports.manifests import INCREMENTAL_EXPORT, open_export
from ...plan.operations import load_job_prefix
from ...spec.errors import InputError, Problem, ServiceError
from ...spec.model import TableSpec
from ..jobs import LoadJobPlan, table_fingerprint
from ..table_record import table_record
from .pipeline import BeamLoad, PipelineOptions, beam, build_pipeline

GCP_EXTRA_HINT = ("launching on Dataflow needs Apache Beam's GCP extra, which is not installed here: "
                  "pip install 'apache-beam[gcp]' (uv: uv pip install 'apache-beam[gcp]'), then run "
                  "`pulumi up` again")
CONTAINER_IMAGE_ENV = "DDB2BIGTABLE_SDK_CONTAINER_IMAGE"


class DataflowUnavailable(ServiceError):
    """Dataflow cannot be used from this environment; the message says what to install or set."""


def job_name(job: LoadJobPlan) -> str:
    """Dataflow's job-name rules ([a-z]([-a-z0-9]*[a-z0-9])?): one name per load content, so
    Dataflow itself refuses a second running job for the same load."""
    raw = f"{load_job_prefix(job.instance_id)}{job.table_id}".lower()
    name = re.sub(r"-+", "-", re.sub(r"[^a-z0-9-]", "-", raw)).strip("-")[:90].rstrip("-")
    return f"{name}-{job.fingerprint[:8].lower()}"


def work_location(job: LoadJobPlan) -> str:
    """Where a Dataflow load keeps dead letters, expired items and per-file counts."""
    if not job.temp_location:
        raise DataflowUnavailable(f"{job.instance_id}/{job.table_id}: a Dataflow load needs the stage's "
                                  f"load.temp_location (a gs:// folder for staging, temp files and dead letters)")
    return f"{job.temp_location.rstrip('/')}/ddb2bigtable/{job.instance_id}/{job.table_id}/{job.fingerprint}"


def pipeline_options_for(job: LoadJobPlan, package_dir: Path) -> PipelineOptions:
    """Dataflow options for one load job.

    How the workers get this package: `extra_packages` with this project's wheel (built by
    `launch_dataflow` with `uv build`, the toolchain Pulumi runs here). The workers
    `pip install` it with all its pinned dependencies: what the load uses
    (google-cloud-bigtable, orjson, amazon-ion, and the export readers' boto3 and
    google-cloud-storage, within apache-beam[gcp]'s range) and, unused there, Pulumi's SDKs
    (slower worker start-up: the price of one distribution); apache-beam 2.77 is already in
    Dataflow's matching SDK image. Rejected alternatives: `setup_file` (Beam builds an sdist with
    `python -m build --no-isolation`, which needs `build` and hatchling installed next to
    Pulumi) and `save_main_session` (this code is a package, not a main module).
    No `requirements_file`: an export in `gs://` or `s3://` needs nothing the wheel's
    dependencies do not bring (exports/locations.py).
    Set DDB2BIGTABLE_SDK_CONTAINER_IMAGE to a prebuilt image holding the package instead
    (faster worker start-up, nothing installed at run time). `package_dir` is this
    launch's own folder (`launch_folder`): two stages deployed at once never share one.
    """
    if not job.project:
        raise DataflowUnavailable(f"{job.instance_id}/{job.table_id}: a Dataflow load needs the stage's GCP "
                                  f"project (gcp:project)")
    work_location(job)  # a clear error without a temp_location
    temp = (job.temp_location or "").rstrip("/")
    settings: dict[str, Any] = {
        "runner": "DataflowRunner",
        "project": job.project,
        "region": job.region,
        "temp_location": f"{temp}/temp",
        "staging_location": f"{temp}/staging",
        "job_name": job_name(job),
        "save_main_session": False,
        "labels": [f"ddb2bigtable-instance={_label(job.instance_id)}", f"ddb2bigtable-table={_label(job.table_id)}"],
    }
    if job.service_account:
        settings["service_account_email"] = job.service_account
    image = os.environ.get(CONTAINER_IMAGE_ENV)
    if image:
        settings["sdk_container_image"] = image
    else:
        settings["extra_packages"] = [str(worker_wheel(package_dir))]
    return PipelineOptions(flags=[], **settings)


def _label(value: str) -> str:
    return re.sub(r"[^a-z0-9_-]", "-", value.lower())[:63]


def _version() -> str:
    try:
        return metadata.version("ddb2bigtable")
    except metadata.PackageNotFoundError:
        return "0.1.0"


def worker_wheel(package_dir: Path) -> Path:
    """Where `launch_dataflow` puts the wheel the workers install (hatchling's file name)."""
    return package_dir / f"ddb2bigtable-{_version()}-py3-none-any.whl"


@contextmanager
def launch_folder() -> Iterator[Path]:
    """A private temporary folder for one launch's wheel, removed once
    the job is submitted (Beam has staged it to the job's bucket by then). A shared
    folder let two launches at once delete each other's wheel."""
    with tempfile.TemporaryDirectory(prefix="ddb2bigtable-dataflow-") as folder:
        yield Path(folder)


def build_worker_package(package_dir: Path) -> None:
    """This project's wheel where `pipeline_options_for` names it."""
    root = Path(__file__).resolve().parents[3]
    if not (root / "pyproject.toml").is_file():
        raise DataflowUnavailable(f"cannot find this project's pyproject.toml next to {root / 'ddb2bigtable'} to "
                                  f"build the package Dataflow's workers install; launch from a checkout, or "
                                  f"set {CONTAINER_IMAGE_ENV} to an SDK image that holds it")
    uv = shutil.which("uv")
    if uv is None:
        raise DataflowUnavailable(f"building the package for Dataflow's workers needs uv "
                                  f"(https://docs.astral.sh/uv/), or set {CONTAINER_IMAGE_ENV}")
    built = subprocess.run([uv, "build", "--wheel", "--out-dir", str(package_dir), str(root)],
                           capture_output=True, text=True)
    if built.returncode != 0 or not worker_wheel(package_dir).is_file():
        raise DataflowUnavailable(f"`uv build --wheel {root}` failed: {built.stderr.strip()[-500:]}")


def require_gcp_extra() -> None:
    """DataflowUnavailable (with the pip command) unless Beam's GCP extra is installed."""
    try:
        previous = logging.root.manager.disable
        logging.disable(logging.WARNING)
        try:
            from apache_beam.io.gcp import gcsio  # noqa: F401  google-cloud-storage
            from apache_beam.runners.dataflow.internal import apiclient  # noqa: F401  google-cloud-dataflow-client
        finally:
            logging.disable(previous)
    except ImportError as error:
        raise DataflowUnavailable(f"{GCP_EXTRA_HINT} (missing: {error.name or error})") from None


def find_table(job: LoadJobPlan) -> TableSpec:
    """The table a job loads, from the spec file the plan came from; refused when the
    mapping there changed since the plan (its fingerprint would differ)."""
    from ...spec.reading import read_spec

    try:
        spec = read_spec(job.spec_file)
    except InputError as error:
        raise DataflowUnavailable(f"{job.instance_id}/{job.table_id}: {error}") from None
    table = next((t for t in spec.tables if t.id == job.table_id), None)
    if table is None or table_fingerprint(job.export, table, job.sample) != job.fingerprint:
        raise DataflowUnavailable(f"{job.instance_id}/{job.table_id}: {job.spec_file} no longer has this table "
                                  f"with the planned key, TTL and mapping; run `pulumi up` again")
    return table


def launch_dataflow(job: LoadJobPlan, table: TableSpec | None = None) -> str:
    """Starts the load on Dataflow and returns its job id, without waiting for it.

    The launcher reads only the export's manifests and the table's record of its types
    (checked against the spec's declared types: an InputError at the declaration that
    disagrees); the job infers its types over that record and records them before its
    first row (pipeline.py). A Dataflow job keeps no load state between launches, so it cannot check that an
    incremental export continues what the table holds: those are refused here (the local
    loader's `--chain` orders them, `replicate` follows the stream).
    """
    require_gcp_extra()
    manifest = open_export(job.export)
    if manifest.export_type == INCREMENTAL_EXPORT:
        raise InputError([Problem.about(job.export, "load.export", (
            "an incremental export: a Dataflow load cannot tell whether it continues what the table holds, "
            "and applied out of order it brings back deleted items; point load.export at the full export, then "
            "apply the incrementals with `ddb2bigtable load --chain` or catch up with `ddb2bigtable replicate`"))])
    with launch_folder() as package_dir:
        options = pipeline_options_for(job, package_dir)
        table = table or find_table(job)
        recorded = asyncio.run(table_record(job.project or "", table, job.instance_id, job.app_profile_id))
        if CONTAINER_IMAGE_ENV not in os.environ:
            build_worker_package(package_dir)
        load = BeamLoad(table=table, manifest=manifest, files=tuple(f.key for f in manifest.files),
                        project=job.project or "", instance_id=job.instance_id, app_profile_id=job.app_profile_id,
                        work_dir=work_location(job), run_id=time.strftime("%Y%m%dT%H%M%S"),
                        now_micros=int(time.time() * 1_000_000), types=None, sample=job.sample, recorded=recorded,
                        types_profile_id=job.types_profile_id)
        pipeline = beam.Pipeline(options=options)
        build_pipeline(pipeline, load)
        result: Any = pipeline.run()  # a DataflowPipelineResult: it has the job id
        return result.job_id()
