"""`ddb2bigtable up --stage local`: the stage's tables, GC rules and data in the emulator.

The emulator has no instance admin, so the plan's instances exist only as names; tables,
families and GC rules are created through the table-admin API, then each table whose
export is under the exports folder (`<export>/<table id>/`) is loaded and verified. The
specs and the exports folder are the stage's (`specs`, `load.export`) unless given: so a
team rehearses its own table on the `local` stage without a stage file of its own. A
fresh emulator starts empty, so its resume state starts empty too.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..bigtable import emulator
from ..bigtable.table_admin import AdminAction, ensure_tables
from ..bigtable.table_types import types_profile
from ..plan.app_profiles import load_profile_id
from ..plan.model import InstancePlan, StagePlan
from ..plan.planner import plan_stage
from ..spec.errors import InputError, Problem
from ..spec.model import Spec, TableSpec
from ..spec.reading import read_specs
from ..spec.stage import Stage, load_stage
from .export_folders import export_folders, unused_exports
from .reports import LoadReport
from .run import LoadOptions, run_load
from .verify import VerifyReport, run_verify

DEFAULT_PROJECT = "local-project"
WORK_DIR = ".ddb2bigtable"


@dataclass
class UpResult:
    emulator: str
    emulator_pid: int | None = None  # the emulator this run started (None: one already running)
    actions: list[AdminAction] = field(default_factory=list)
    loads: list[LoadReport] = field(default_factory=list)
    verifies: list[VerifyReport] = field(default_factory=list)
    without_export: list[str] = field(default_factory=list)
    unused_exports: list[str] = field(default_factory=list)  # export folders no table id names, said whole
    plan: StagePlan | None = None

    @property
    def ok(self) -> bool:
        return not self.reasons

    @property
    def reasons(self) -> list[str]:
        """Why the stage is not ready, a table at a time (empty: ready)."""
        why = [f"{r.table}: the load did not account for every item" for r in self.loads if not r.complete]
        return why + [f"{v.table}: {'; '.join(v.reasons)}" for v in self.verifies if not v.ok]


def up(root: Path, stage_name: str, *, keep_running: bool = False, specs: list[str] | None = None,
       exports: Path | None = None,
       progress: Callable[[str], Callable[..., None]] = lambda table: (lambda n, total=None: None)) -> UpResult:
    """The stage's tables created, loaded and verified on the emulator. `specs` (paths as
    given) replace the stage's list; `exports` (a folder of `<table id>/` exports) its
    `load.export`."""
    try:
        stage, read, plan, exports, unused = _before_the_emulator(root, stage_name, specs, exports)
    except InputError as error:
        error.not_done = "nothing was created or loaded"
        raise
    project = stage.gcp_project or DEFAULT_PROJECT
    running = emulator.running_or_start()
    result = UpResult(emulator=running.address, emulator_pid=running.process.pid if running.process else None,
                      plan=plan, unused_exports=unused)
    try:
        with emulator.pointed_at(running.address):  # the clients find it; restored after
            for spec, instance in zip(read, plan.instances, strict=True):
                result.actions += ensure_tables(project, instance)
                for table in spec.tables:
                    _load_and_verify(root, stage, instance, table, exports, fresh=running.process is not None,
                                     result=result, progress=progress)
    finally:
        if not keep_running:
            running.stop()
    return result


def _before_the_emulator(root: Path, stage_name: str, specs: list[str] | None,
                         exports: Path | None) -> tuple[Stage, list[Spec], StagePlan, Path | None, list[str]]:
    """The stage, specs, plan, exports folder and the warnings about it: every check made
    before the emulator starts, so bad input there leaves nothing created."""
    stage = load_stage(stage_name, root)
    if not stage.emulator:
        where = stage.location
        raise InputError([Problem.at(where, stage.file, "emulator",
                                     f"`up` runs emulator stages; {stage_name!r} is a cloud stage: deploy it with "
                                     f"`pulumi up --stack {stage_name}`")])
    if exports is not None and not exports.is_dir():
        raise InputError([Problem.about(str(exports), "--exports", "no such folder: give the folder holding one "
                                        "export folder per table id (<DIR>/<table id>/AWSDynamoDB/...)")])
    if exports is not None and (exports / "AWSDynamoDB").is_dir():
        raise InputError([Problem.about(str(exports), "--exports", "is one export, not a folder of them: give its "
                                        "parent, with the export in a folder named by its table id "
                                        "(<DIR>/<table id>/AWSDynamoDB/...)")])
    read = read_specs(specs or [str(p) for p in stage.spec_paths(root)])
    plan = plan_stage(stage, read)
    if exports is None and stage.load and stage.load.export:
        exports = root / stage.load.export
    return stage, read, plan, exports, _unused_exports(exports, [table for spec in read for table in spec.tables])


def _unused_exports(exports: Path | None, tables: list[TableSpec]) -> list[str]:
    """What `up` says of the export folders under `exports` that no table id names; none
    named at all while some are there is bad input (exit 2), before the emulator starts."""
    if exports is None:
        return []
    folders = export_folders(exports)
    unused = unused_exports(folders, tables)
    if unused and len(unused) == len(folders):
        ids = ", ".join(t.id for t in tables)
        raise InputError([Problem.about(f"{exports / u.folder}/", "",
                                        f"{u.advice}; nothing would be loaded: an export's folder is named by its "
                                        f"table id (<DIR>/<table id>/AWSDynamoDB/...), and the specs' are {ids}")
                          for u in unused])
    guessed = [u.warning(exports) for u in unused if u.nearest]
    others = [f"{u.folder}/" for u in unused if not u.nearest]
    return guessed + ([f"{exports}/ holds export folders that match no table id, not loaded: {', '.join(others)}"]
                      if others else [])


def _load_and_verify(root: Path, stage: Stage, instance: InstancePlan, table: TableSpec, exports: Path | None, *,
                     fresh: bool, result: UpResult, progress: Callable[[str], Callable[..., None]]) -> None:
    """One table's export (`<exports>/<table id>/`) loaded and verified, if it has one."""
    export = exports / table.id if exports else None
    project = stage.gcp_project or DEFAULT_PROJECT
    if export is None or not export.is_dir():
        result.without_export.append(f"{instance.id}/{table.id}")
        return
    work_dir = root / WORK_DIR / stage.name / instance.id / table.id
    if fresh:  # our own new emulator: nothing to resume into
        shutil.rmtree(work_dir, ignore_errors=True)
    profile = load_profile_id(instance)
    options = LoadOptions(project=project, instance_id=instance.id, app_profile_id=profile,
                          work_dir=work_dir, sample=stage.load.sample if stage.load else None,
                          types_profile_id=types_profile(instance))
    result.loads.append(run_load(table, str(export), options, progress(f"{instance.id}/{table.id}")))
    result.verifies.append(run_verify(table, str(export), project=project, instance_id=instance.id,
                                      work_dir=work_dir))
