"""What the Pulumi program needs from the engine, without importing Pulumi here.

`__main__.py` hands over the stack name and config; this returns the stage, its specs and
the plan, or `InputError` with located problems (the program turns it into a
`pulumi.RunError`, so a deploy stops before creating anything).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .plan.model import StagePlan
from .plan.planner import plan_stage
from .spec.errors import InputError, Problem
from .spec.model import Spec
from .spec.reading import read_specs
from .spec.stage import Stage, stage_from_config


def plan_for_stack(stack: str, root: Path, config: dict[str, Any]) -> tuple[Stage, list[Spec], StagePlan]:
    stage = stage_from_config(stack, root, {k: v for k, v in config.items() if v is not None})
    if stage.emulator:
        where = stage.location
        raise InputError([Problem.at(where, stage.file, "emulator",
                                     f"stage {stack!r} runs on the Bigtable emulator, which has no "
                                     f"instance admin for Pulumi to drive: run `ddb2bigtable up --stage {stack}` "
                                     f"instead of `pulumi up`")])
    specs = read_specs([str(p) for p in stage.spec_paths(root)])
    return stage, specs, plan_stage(stage, specs)


def stack_outputs(plan: StagePlan) -> dict[str, Any]:
    """The stack outputs: what a pipeline or a person needs after `pulumi up`."""
    instances = {}
    for i in plan.instances:
        clusters = []
        for c in i.clusters:
            sizing: dict[str, Any] = ({"nodes": c.nodes} if c.autoscaling is None else
                                      {"min_nodes": c.autoscaling.min_nodes, "max_nodes": c.autoscaling.max_nodes})
            clusters.append({"id": c.id, "zone": c.zone, **sizing})
        instances[i.id] = {
            "clusters": clusters,
            "tables": [t.id for t in i.tables],
            "app_profiles": [p.id for p in i.app_profiles],
            "monthly_estimate_usd": i.cost.bigtable_monthly_usd,
        }
    return {"stage": plan.stage, "instances": instances,
            "monthly_estimate_usd": round(sum(i.cost.bigtable_monthly_usd for i in plan.instances), 2)}
