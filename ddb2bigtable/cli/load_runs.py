"""The data commands behind `load`, `verify` and `up`: resolve spec, stage and target, run, print.

Imported by `load.py` only when a data command runs, so `validate`, `plan` and `diff`
never import the Bigtable client. With BIGTABLE_EMULATOR_HOST set, the client talks to
that emulator; the project and the instance come from the stage's plan either way.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
)
from rich.text import Text

from ..bigtable.emulator import EMULATOR_ENV, EmulatorError, quiet_connection_warning
from ..bigtable.table_admin import ensure_tables
from ..bigtable.table_types import types_profile
from ..exports.errors import ExportUnavailable
from ..exports.manifests import ExportError
from ..load.chain_runs import run_chain
from ..load.local_stage import DEFAULT_PROJECT, WORK_DIR, UpResult, up
from ..load.reports import LoadReport
from ..load.run import LoadOptions, run_load
from ..load.verify import run_verify
from ..load.work_folder import private_dir, private_open
from ..plan.app_profiles import load_profile_id
from ..plan.model import InstancePlan
from ..plan.planner import plan_stage
from ..render.load_report import load_json, print_load, print_up_summary, print_verify, verify_json
from ..render.terminal import print_plan
from ..spec.errors import InputError, Problem
from ..spec.model import Spec, TableSpec
from ..spec.reading import read_specs
from ..spec.schema_check import did_you_mean
from ..spec.stage import Stage, load_stage
from .output import echo_warning
from .serve_cmd import start_beside


def _quiet(command: Callable[..., int]) -> Callable[..., int]:
    """The command with the client's emulator warning silenced while it runs."""
    @functools.wraps(command)
    def run(*args: Any, **kwargs: Any) -> int:
        with quiet_connection_warning():
            return command(*args, **kwargs)
    return run


@dataclass(frozen=True)
class Target:
    stage: Stage
    table: TableSpec
    instance: InstancePlan
    project: str


def resolve(root: Path, spec_paths: list[str], table_id: str, stage_name: str) -> Target:
    """The table `--table` names among the spec files given, or the stage's list when none are
    (docs/cli.md, Grammar: specs are arguments, a table is --table, on every command)."""
    stage = load_stage(stage_name, root)
    paths = spec_paths or [str(p) for p in stage.spec_paths(root)]
    tables = [(s, t) for s in read_specs(paths) for t in s.tables]
    holders = [(s, t) for s, t in tables if t.id == table_id]
    if len(holders) != 1:
        where = " ".join(spec_paths) or f"the specs stage {stage.name!r} lists"
        raise InputError([Problem.about(where, "--table", _table_problem(table_id, tables, holders))])
    ((spec, table),) = holders
    (instance,) = plan_stage(stage, [spec]).instances
    if stage.emulator and not os.environ.get(EMULATOR_ENV):
        raise InputError([Problem.about(stage.file, "emulator",
                                        f"stage {stage.name!r} targets the emulator: set "
                                        f"{EMULATOR_ENV}=127.0.0.1:<port> (or run "
                                        f"`ddb2bigtable up --stage {stage.name}`)")])
    return Target(stage, table, instance, stage.gcp_project or DEFAULT_PROJECT)


def _table_problem(table_id: str, tables: list[tuple[Spec, TableSpec]], holders: list[tuple[Spec, TableSpec]]) -> str:
    if holders:
        return (f"table id {table_id!r} is in {len(holders)} specs ({', '.join(s.path for s, _ in holders)}): "
                "give the spec file holding the one meant")
    ids = sorted(t.id for _, t in tables)
    one = len({s.path for s, _ in tables}) == 1
    return (f"no table {table_id!r} in {'this spec; its' if one else 'these specs; their'} tables: {', '.join(ids)}"
            + did_you_mean(table_id, ids))


def _export_problem(export: str, error: Exception) -> Exception:
    if isinstance(error, ExportUnavailable):  # the bucket failed, not the input: exit 1, the URL named already
        return error
    said = str(error)  # an export error names its location already; say it once
    return InputError([Problem.about("--export", "", said if export in said else f"{export}: {said}")])


class _Rate(ProgressColumn):
    """Items per second as a whole number ('17,526 items/s', not the raw float)."""

    def render(self, task: Task) -> Text:
        return Text(f"{task.speed:,.0f} items/s" if task.speed else "- items/s")


@contextmanager
def progress_bars(console: Console) -> Iterator[Callable[[str], Callable[[int], None]]]:
    """`name -> advance(n)`: one bar per table with items/s; nothing when not on a terminal."""
    bars = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TaskProgressColumn(),
                    _Rate(), TimeElapsedColumn(), console=console, disable=not console.is_terminal)

    def factory(name: str) -> Callable[..., None]:
        task = bars.add_task(name, total=None)

        def advance(n: int, total: int | None = None) -> None:
            if total is not None:  # the manifest's item count, once the load has read it
                bars.update(task, total=total)
            bars.advance(task, n)
        return advance

    with bars:
        yield factory


@contextmanager
def _nothing_loaded_unless(started: list[bool]) -> Iterator[None]:
    """Bad input met before the load wrote an item says `nothing was loaded`, not the load's
    own `the load stopped before its end` (cli/output.NOT_DONE), which would claim it began."""
    try:
        yield
    except InputError as error:
        if not started:
            error.not_done = "nothing was loaded"
        raise


def _noting_writes(advance: Callable[..., None], started: list[bool]) -> Callable[..., None]:
    """The progress bar's `advance`, also noting in `started` that items went through."""
    def noted(n: int, total: int | None = None) -> None:
        if n:
            started.append(True)
        advance(n, total)
    return noted


@_quiet
def run_load_command(root: Path, specs: list[str], table_id: str, export: str, stage_name: str, create_tables: bool,
                     runner: str, work_dir: Path | None, fmt: str, *, redact: bool = False,
                     fresh: bool = False, allow_other_table: bool = False, chain: bool = False) -> int:
    started: list[bool] = []  # set once an item is written: from then on the load stopped part-way
    with _nothing_loaded_unless(started):
        target = resolve(root, specs, table_id, stage_name)
        work = private_dir(work_dir or root / WORK_DIR / stage_name / target.instance.id / table_id)  # before tables
        reason = "--fresh" if fresh else None
        if create_tables:
            actions = ensure_tables(target.project, target.instance, [table_id])
            if any(a.table == table_id and a.what == "created table" for a in actions):
                reason = "the table was just created (--create-tables), so nothing is loaded yet"
        profile = load_profile_id(target.instance)
        options = LoadOptions(project=target.project, instance_id=target.instance.id, app_profile_id=profile,
                              work_dir=work, sample=target.stage.load.sample if target.stage.load else None,
                              redact_dead_letters=redact, fresh=reason, allow_other_table=allow_other_table,
                              types_profile_id=types_profile(target.instance))
        console = Console(stderr=fmt == "json")
        try:
            with progress_bars(console) as bars:
                def load_one(table: TableSpec, location: str, opts: LoadOptions) -> LoadReport:
                    if runner == "beam":
                        from ..load.beam.direct import run_beam_load

                        started.append(True)  # the pipeline reports no progress: never claim nothing was loaded
                        return run_beam_load(table, location, opts)
                    name = f"{target.instance.id}/{table_id}" + (f" {location.rsplit('/', 1)[-1]}" if chain else "")
                    return run_load(table, location, opts, _noting_writes(bars(name), started))

                reports = (run_chain(target.table, export, options, load_one) if chain
                           else [load_one(target.table, export, options)])
        except (ExportError, EmulatorError) as error:
            raise _export_problem(export, error) from None
    complete = all(r.complete for r in reports)
    if fmt == "json":
        shown = {"chain": [load_json(r) for r in reports], "complete": complete} if chain else load_json(reports[0])
        click.echo(json.dumps(shown, indent=2))
    else:
        for report in reports:
            print_load(report, console)
    return 0 if complete else 1


@_quiet
def run_verify_command(root: Path, specs: list[str], table_id: str, export: str, stage_name: str, sample: int | None,
                       work_dir: Path | None, fmt: str, *, chain: bool = False) -> int:
    target = resolve(root, specs, table_id, stage_name)
    work = work_dir or root / WORK_DIR / stage_name / target.instance.id / table_id
    if work_dir is not None and not work_dir.is_dir():  # given and not there: said, never passed over in silence
        siblings = [p.name for p in work_dir.parent.iterdir() if p.is_dir()] if work_dir.parent.is_dir() else []
        echo_warning(f"warning: --work-dir {work_dir}: no such folder, so the load's dead letters and skips are not "
                     f"known here (they would count as missing){did_you_mean(work_dir.name, siblings)}")
    try:
        report = run_verify(target.table, export, project=target.project, instance_id=target.instance.id,
                            work_dir=work if work.is_dir() else None, sample=sample, chain=chain)
    except ExportError as error:
        raise _export_problem(export, error) from None
    if fmt == "json":
        click.echo(json.dumps(verify_json(report), indent=2))
    else:
        print_verify(report, Console())
    return 0 if report.ok else 1


@_quiet
def run_up_command(root: Path, stage_name: str, keep_running: bool, fmt: str, *, specs: list[str] | None = None,
                   exports: Path | None = None, verbose: bool = False) -> int:
    console = Console(stderr=fmt == "json")
    try:
        with progress_bars(console) as bars:
            result = up(root, stage_name, keep_running=keep_running, specs=specs, exports=exports, progress=bars)
    except (ExportError, EmulatorError) as error:
        raise InputError([Problem.about(stage_name, "", str(error))]) from None
    served = start_beside(root, stage_name, result.emulator, specs) if keep_running and result.ok else None
    report = _write_up_report(root / WORK_DIR / stage_name, result)
    if fmt == "json":
        click.echo(json.dumps({"emulator": result.emulator, "ok": result.ok, "reasons": result.reasons,
                               "report": str(report),
                               "serve": {"endpoint_url": served[1], "pid": served[0]} if served else None,
                               "tables_created": [f"{a.table}: {a.what}" for a in result.actions],
                               "loads": [load_json(r) for r in result.loads],
                               "verifies": [verify_json(v) for v in result.verifies],
                               "without_export": result.without_export,
                               "unused_exports": result.unused_exports}, indent=2))
        return 0 if result.ok else 1
    if verbose and result.plan:
        print_plan(result.plan, console)
    instances = result.plan.instances if result.plan else ()
    console.print(f"emulator {result.emulator}: {len(instances)} instance(s), "
                  f"{sum(len(i.tables) for i in instances)} table(s), {len(result.actions)} table-admin changes"
                  + ("" if verbose else "; the plan: --verbose"))
    print_up_summary(result.loads, result.verifies, console, notes=verbose)
    if result.without_export:
        console.print(f"tables created without data (no <export>/<table id>/ folder): "
                      f"{', '.join(result.without_export)}")
    for warning in result.unused_exports:
        echo_warning(f"warning: {warning}")  # folded at a terminal, a path never cut
    notes = sum(len(r.lossy) + len(r.typed_json) for r in result.loads)
    noted = f", {notes} notes on what the mapping keeps of the items" if notes else ""
    console.print(f"the whole report (plan, loads, verifies{noted}): {report}")
    # unwrapped (click, not rich), so a script can take the address and PID from its line
    if keep_running:
        click.echo(f"the emulator keeps running: export {EMULATOR_ENV}={result.emulator}"
                   + (f"; stop it with: kill {result.emulator_pid}" if result.emulator_pid else ""))
    if served:
        click.echo(f"serve answers DynamoDB's API at {served[1]} (the application's endpoint_url, any key); "
                   f"stop it with: kill {served[0]}; its log: {served[2]}")
    console.print("[green]local stage ready[/]" if result.ok else
                  Text("local stage FAILED: " + "; ".join(result.reasons), style="red"))
    return 0 if result.ok else 1


def _write_up_report(folder: Path, result: UpResult) -> Path:
    """Everything `up` knows, for reading after the one-screen summary: the plan, each
    load's and verify's whole report (the mapping's notes with them). Owner-only, as
    the work folder it is in."""
    path = private_dir(folder) / "up-report.txt"
    with private_open(path) as out:
        console = Console(file=out, width=110, color_system=None, force_terminal=False)
        if result.plan:
            print_plan(result.plan, console)
        for r, v in zip(result.loads, result.verifies, strict=True):
            console.rule(r.table)
            print_load(r, console)
            print_verify(v, console)
        if result.without_export:
            console.print(f"tables created without data: {', '.join(result.without_export)}")
        for warning in result.unused_exports:
            console.print(f"warning: {warning}")
    return path
