"""Runs the real `__main__.py` under Pulumi's own mocks and records what it registers.

No CLI, no plugins: `pulumi.runtime.set_mocks` replaces the engine and the resource
monitor, the program runs unchanged, and a monitor subclass records each registration
(type, name, parent, protect, inputs) and the stack's outputs. Mock inputs arrive with
the provider's camelCase names.
"""

from __future__ import annotations

import asyncio
import json
import logging
import runpy
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pulumi
import yaml
from pulumi.runtime import rpc
from pulumi.runtime.mocks import MockMonitor

from .conftest import ROOT, shipped_config

PROJECT = "ddb2bigtable"


@dataclass
class Registered:
    type: str
    name: str
    urn: str
    parent: str
    protect: bool
    inputs: dict[str, Any]
    dependencies: list[str]


@dataclass
class Run:
    resources: list[Registered] = field(default_factory=list)
    outputs: dict[str, Any] = field(default_factory=dict)
    invokes: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def of_type(self, type_: str) -> list[Registered]:
        return [r for r in self.resources if r.type == type_]

    def by_urn(self, urn: str) -> Registered:
        return next(r for r in self.resources if r.urn == urn)


class _Mocks(pulumi.runtime.Mocks):
    def __init__(self, run: Run, invoke_results: dict[str, dict[str, Any]]):
        self.run, self.invoke_results = run, invoke_results

    def new_resource(self, args: pulumi.runtime.MockResourceArgs):
        outputs = dict(args.inputs)
        if args.typ == "pulumi-python:dynamic:Resource":  # what LoadJobProvider.create would return
            outputs["job_id"] = f"dataflow-job-{args.name}"
        if args.typ == "gcp:serviceaccount/account:Account":  # what GCP derives from the account id
            outputs["email"] = f"{args.inputs['accountId']}@{args.inputs.get('project')}.iam.gserviceaccount.com"
            outputs["member"] = f"serviceAccount:{outputs['email']}"
        if args.typ == "gcp:cloudrunv2/service:Service":
            outputs["uri"] = f"https://{args.inputs['name']}-abc123-uc.a.run.app"
        return [f"{args.name}-id", outputs]

    def call(self, args: pulumi.runtime.MockCallArgs):
        self.run.invokes.append((args.token, dict(args.args)))
        return self.invoke_results.get(args.token, {})


class _Monitor(MockMonitor):
    def __init__(self, mocks: _Mocks):
        super().__init__(mocks)
        self.run = mocks.run

    def RegisterResource(self, request):
        response = super().RegisterResource(request)
        if request.type != "pulumi:pulumi:Stack":
            self.run.resources.append(Registered(
                type=request.type, name=request.name, urn=response.urn, parent=request.parent,
                protect=request.protect, inputs=rpc.deserialize_properties(request.object),
                dependencies=list(request.dependencies)))
        return response


class _Warnings(logging.Handler):
    def __init__(self, run: Run):
        super().__init__(logging.WARNING)
        self.run = run

    def emit(self, record: logging.LogRecord) -> None:
        self.run.warnings.append(record.getMessage())


def stack_config(stage: str, root: Path = ROOT) -> dict[str, Any]:
    """The `config:` of `stacks/Pulumi.<stage>.yaml`, as `pulumi up --stack <stage>` reads it;
    the repository's own with the shipped specs alone in its list."""
    if root == ROOT:
        return shipped_config(stage)
    return yaml.safe_load((root / "stacks" / f"Pulumi.{stage}.yaml").read_text())["config"]


def run_program(stack: str, config: dict[str, Any] | None = None, invoke_results: dict[str, dict] | None = None,
                program: Path = ROOT / "__main__.py") -> Run:
    run = Run()
    asyncio.set_event_loop(asyncio.new_event_loop())  # asyncio.run() elsewhere in the session unsets it
    mocks = _Mocks(run, invoke_results or {})
    logger = logging.getLogger(f"pulumi-mocks-{stack}-{id(run)}")
    logger.propagate = False
    logger.addHandler(_Warnings(run))
    pulumi.runtime.set_mocks(mocks, project=PROJECT, stack=stack, preview=False, logger=logger,
                             monitor=_Monitor(mocks))
    settings = stack_config(stack) if config is None else config
    pulumi.runtime.set_all_config({k: v if isinstance(v, str) else json.dumps(v) for k, v in settings.items()})

    stack_resource = pulumi.runtime.get_root_resource()
    stack_resource.outputs.clear()  # the mock root stack outlives set_mocks: forget the last run's exports

    @pulumi.runtime.test
    def program_run():
        runpy.run_path(str(program), run_name="__main__")
        return pulumi.Output.from_input(dict(stack_resource.outputs)).apply(run.outputs.update)

    program_run()
    return run
