"""The post-deploy hook: Dataflow load jobs registered by the Pulumi program, and their provider."""

from __future__ import annotations

from dataclasses import replace

import pytest

from components import load_job
from ddb2bigtable.load.jobs import load_jobs
from ddb2bigtable.plan.model import TYPES_TABLE
from ddb2bigtable.program import plan_for_stack

from ..conftest import ROOT
from ..pulumi_harness import run_program, stack_config

DYNAMIC = "pulumi-python:dynamic:Resource"
LOAD = {"runner": "dataflow", "export": "gs://shop-exports/2026-11-20", "temp_location": "gs://shop-tmp/dataflow"}


def staging_with_load(**load) -> dict:
    config = stack_config("staging")
    config["ddb2bigtable:stage"] = {**config["ddb2bigtable:stage"], "load": {**LOAD, **load}}
    return config


def test_a_cloud_stage_with_load_registers_one_job_per_table_after_its_table():
    run = run_program("staging", config=staging_with_load())
    jobs = run.of_type(DYNAMIC)
    every = run.of_type("gcp:bigtable/table:Table")
    tables = {(r.inputs["instanceName"], r.inputs["name"]): r for r in every if r.inputs["name"] != TYPES_TABLE.id}
    assert {(j.inputs["instance_id"], j.inputs["table_id"]) for j in jobs} == set(tables)
    # beside them, every instance holds the record of its tables' types (no load job of its own)
    assert {r.inputs["instanceName"] for r in every if r.inputs["name"] == TYPES_TABLE.id} == \
        {instance for instance, _ in tables}
    for job in jobs:
        assert job.inputs["export"] == f"{LOAD['export']}/{job.inputs['table_id']}"
        assert job.inputs["app_profile_id"] == "migration-load"
        table = tables[(job.inputs["instance_id"], job.inputs["table_id"])]
        assert table.urn in job.dependencies  # launched only once its table exists
        other_tables = {t.urn for t in tables.values()} - {table.urn}
        assert not other_tables & set(job.dependencies)
    shop = [j for j in jobs if j.inputs["instance_id"] == "shop-global-stg"]
    assert {j.inputs["region"] for j in shop} == {"us-east4"}  # next to the migration-load cluster
    assert run.outputs["load_jobs"]["shop-global-stg/orders"] == "dataflow-job-shop-global-stg-orders-load"


def test_no_load_no_job_and_local_runner_no_job():
    assert not run_program("staging").of_type(DYNAMIC)
    assert not run_program("staging", config=staging_with_load(runner="local")).of_type(DYNAMIC)


def jobs_for(config: dict):
    stage, specs, plan = plan_for_stack("staging", ROOT, config)
    return {j.table_id: j for j in load_jobs(stage, specs, plan)}


def test_the_fingerprint_changes_with_the_export_or_the_mapping_only():
    base = jobs_for(staging_with_load())
    assert jobs_for(staging_with_load()) == base  # deterministic
    other_export = jobs_for(staging_with_load(export="gs://shop-exports/2026-11-21"))
    assert all(other_export[t].fingerprint != base[t].fingerprint for t in base)
    more_capacity = staging_with_load()
    more_capacity["ddb2bigtable:stage"]["capacity_scale"] = 0.9
    assert {t: j.fingerprint for t, j in jobs_for(more_capacity).items()} == {t: j.fingerprint for t, j in base.items()}
    sampled = jobs_for(staging_with_load(sample=0.5))
    assert all(sampled[t].fingerprint != base[t].fingerprint for t in base)


def test_the_provider_launches_on_create_and_relaunches_only_on_a_new_fingerprint(monkeypatch):
    launched = []
    monkeypatch.setattr(load_job, "launch", lambda props: launched.append(props["table_id"]) or "job-42")
    provider = load_job.LoadJobProvider()
    job = next(iter(jobs_for(staging_with_load()).values()))
    props = {**job.__dict__, "job_id": None}
    created = provider.create(props)
    assert created.id == "job-42" and created.outs["job_id"] == "job-42" and launched == [job.table_id]
    same = provider.diff("job-42", created.outs, props)
    assert not same.changes and not same.replaces
    changed = provider.diff("job-42", created.outs, {**props, "fingerprint": replace(job, fingerprint="x").fingerprint})
    assert changed.changes and changed.replaces == ["fingerprint"]


def test_an_emulator_stage_never_launches_dataflow():
    with pytest.raises(Exception, match="ddb2bigtable up"):
        run_program("local")


def test_a_job_waits_for_the_load_accounts_grant_and_names_its_spec_relative_to_the_project():
    account = "loader@shop-stg.iam.gserviceaccount.com"
    run = run_program("staging", config=staging_with_load(service_account=account))
    grants = {r.inputs["instance"]: r for r in run.of_type("gcp:bigtable/instanceIamMember:InstanceIamMember")}
    jobs = run.of_type(DYNAMIC)
    assert jobs and grants
    for job in jobs:
        grant = next(g for g in grants.values() if g.name == f"{job.inputs['instance_id']}-load-access")
        assert grant.urn in job.dependencies  # a job started before the grant could not write
        assert job.inputs["spec_file"].startswith("specs/") and not job.inputs["spec_file"].startswith("/")
