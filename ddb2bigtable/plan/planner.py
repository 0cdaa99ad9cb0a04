"""Spec + stage -> plan. The one place that calls every rule module in order.

Each decision lives in the module named for it (topology, clusters, gc_rules, tables, app_profiles,
labels, advice, cost); this module only wires them and checks what only the combination
of spec and stage can break (an id made too long by the stage's suffix, CMEK on some
clusters but not all).
"""

from __future__ import annotations

from pathlib import Path

from ..spec.errors import InputError, Problem
from ..spec.ids import id_problem
from ..spec.model import Spec
from ..spec.reading import read_specs
from ..spec.stage import Stage, load_stage, stage_names
from .advice import advise
from .app_profiles import plan_app_profiles
from .clusters import plan_clusters
from .cost import estimate
from .labels import instance_labels
from .model import InstancePlan, PlanWarning, StagePlan
from .operations import plan_operations
from .price_lock import PriceLock
from .serve import plan_serve
from .tables import plan_table
from .topology import placements


def _problem_at_instance(spec: Spec, message: str) -> Problem:
    where = spec.instance.location
    return Problem.at(where, spec.path, "instance.id", message)


def plan_instance(spec: Spec, stage: Stage, lock: PriceLock | None = None) -> tuple[InstancePlan, list[PlanWarning]]:
    instance_id = spec.instance.id + stage.instance_suffix
    problem = id_problem("instance", instance_id)
    if problem:
        raise InputError([_problem_at_instance(
            spec, f"with the {stage.name} stage's suffix {stage.instance_suffix!r}: {problem}; shorten the id")])
    storage = stage.storage or spec.instance.storage
    places = placements(spec, stage)
    kms_keys = spec.instance.kms_keys
    if kms_keys:
        missing = [p.gcp_region for p in places if not any(r in kms_keys for r in p.aws_regions)]
        if missing:
            raise InputError([_problem_at_instance(
                spec, f"CMEK must cover every cluster or none; no kms_keys entry for the cluster in "
                      f"{', '.join(missing)}: add a key for that region's AWS counterpart")])
    clusters, warnings = plan_clusters(spec, stage, places, storage, kms_keys)
    tables = []
    for t in spec.tables:
        table, table_warnings = plan_table(t, instance_id, stage.deletion_protection)
        tables.append(table)
        warnings += table_warnings
    labels, label_warnings = instance_labels(spec, stage.name, instance_id)
    warnings += label_warnings + advise(spec, instance_id, len(clusters))
    # Production-safe unless the stage turns it off (dev, pr-*, local do): a stage that
    # forgets the setting must not leave a production instance one `destroy` from gone.
    protected = True if stage.deletion_protection is None else stage.deletion_protection
    cost = estimate(spec, stage, clusters, lock)
    warnings += [PlanWarning("price-not-in-lock", instance_id, None,
                             f"{gap}: its cost lines use the shipped table or an estimate (each line says which); "
                             "run `ddb2bigtable prices refresh` with this region to price it exactly")
                 for gap in cost.lock_gaps]
    return InstancePlan(
        id=instance_id, display_name=spec.instance.display_name or instance_id, spec_file=spec.path,
        storage_type=storage, node_scaling_factor=spec.instance.node_scaling_factor,
        deletion_protection=protected, labels=labels, clusters=tuple(clusters), tables=tuple(tables),
        app_profiles=tuple(plan_app_profiles(spec, clusters, stage.serve.enabled)), cost=cost,
        operations=plan_operations(stage, instance_id, clusters,
                                   dataflow_load=stage.load is not None and stage.load.runner == "dataflow"),
    ), warnings


def plan_stage(stage: Stage, specs: list[Spec], lock: PriceLock | None = None) -> StagePlan:
    """The stage's plan; priced from `lock` (price_lock.lock_for) where it has the figure."""
    instances, warnings, problems = [], [], []
    for spec in specs:
        try:
            instance, instance_warnings = plan_instance(spec, stage, lock)
        except InputError as error:
            problems += error.problems
            continue
        instances.append(instance)
        warnings += instance_warnings
    if problems:
        raise InputError(problems)
    serve, serve_warnings = plan_serve(stage, tuple(instances))
    return StagePlan(stage=stage.name, emulator=stage.emulator, instances=tuple(instances),
                     warnings=tuple(warnings + serve_warnings), project=stage.gcp_project, serve=serve)


def plan_files(root: Path, stage_name: str, spec_paths: list[str] | None = None,
               lock: PriceLock | None = None) -> StagePlan:
    """The plan of `stage_name`, for the given specs or, by default, the stage's own list."""
    stage = load_stage(stage_name, root)
    paths = spec_paths if spec_paths else [str(p) for p in stage.spec_paths(root)]
    return plan_stage(stage, read_specs(paths), lock)


def stage_problems(root: Path, specs: list[Spec], names: list[str] | None = None) -> list[Problem]:
    """What planning `specs` breaks in the stages that list them (or in `names`, for every
    spec): a spec can be valid alone yet unplannable where it runs (more regions than an
    instance takes, an id too long with the stage's suffix), and CI should learn that at
    `validate`, not at `plan --stage prod`. A problem several stages share is listed once."""
    found: dict[Problem, list[str]] = {}
    for name in names if names is not None else stage_names(root):
        try:
            stage = load_stage(name, root)
        except InputError as error:
            for problem in error.problems:
                found.setdefault(problem, [])
            continue
        listed = {path.resolve() for path in stage.spec_paths(root)}
        chosen = specs if names is not None else [s for s in specs if Path(s.path).resolve() in listed]
        try:
            if chosen:
                plan_stage(stage, chosen)
        except InputError as error:
            for problem in error.problems:
                found.setdefault(problem, []).append(name)
    return [p if not stages else Problem(p.file, p.line, p.column, p.path,
                                         f"{p.message} (stage{'s' if len(stages) > 1 else ''} {', '.join(stages)})")
            for p, stages in found.items()]
