"""Stages: one Pulumi stack file per environment, read without Pulumi.

A stage says how much of each spec an environment gets (capacity, regions, autoscaling,
protection). It lives in Pulumi's own stack file (`stacks/Pulumi.<stage>.yaml`, key
`ddb2bigtable:stage`) so `pulumi up --stack prod` and `ddb2bigtable plan --stage prod`
can never disagree, yet `validate`, `plan` and `diff` stay fast and Pulumi-free.

Ephemeral stages (a stack per pull request) name a `template` stage and override only
what differs; their instance suffix defaults to `-<stack name>` so two pull requests never
share an instance.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from .checks import region_problem
from .errors import InputError, Problem
from .model import Location
from .schema_check import Issue, clean, did_you_mean, schema_problems
from .serve_settings import ServeSettings, serve_problems, serve_settings
from .yaml_source import YamlDocument, parse_yaml

STAGE_SCHEMA = "stage-v1.schema.json"
STACKS_DIR = "stacks"
STAGE_KEY = "ddb2bigtable:stage"
PROJECT_KEY = "gcp:project"


@dataclass(frozen=True)
class LoadSettings:
    """How `up`/the post-deploy hook loads data: runner, export location, sample fraction."""

    runner: Literal["local", "dataflow"] = "local"
    export: str | None = None
    sample: float | None = None
    service_account: str | None = None  # gets roles/bigtable.user on the instance, nothing more
    temp_location: str | None = None  # gs:// folder for Dataflow's staging files


@dataclass(frozen=True)
class AlertSettings:
    """Day-2 monitoring: alert policies and a dashboard per instance (plan/operations.py)."""

    enabled: bool = True
    channels: tuple[str, ...] = ()  # projects/P/notificationChannels/ID


@dataclass(frozen=True)
class DiscountSettings:
    """What the organisation pays below list price (plan/discounts.py prices it)."""

    bigtable_committed_use: Literal["1y", "3y"] | None = None  # spend-based CUD on node compute
    bigtable_negotiated_percent: float = 0.0
    dynamodb_reserved_capacity: Literal["1y", "3y"] | None = None  # provisioned RCU/WCU of Standard tables
    dynamodb_negotiated_percent: float = 0.0


@dataclass(frozen=True)
class Stage:
    """One environment's overrides of its specs; defaults are production-safe."""

    name: str
    file: str
    gcp_project: str | None
    specs: tuple[str, ...]  # paths as written, relative to the project root
    instance_suffix: str = ""
    capacity_scale: float = 1.0
    regions: str | tuple[str, ...] = "all"  # "all" | "home" (each table's home region) | AWS regions to keep
    autoscaling: bool = True
    failover_headroom: bool = True
    max_nodes_per_cluster: int = 30
    storage: str | None = None  # overrides instance.storage
    deletion_protection: bool | None = None
    load: LoadSettings | None = None
    emulator: bool = False
    live_source: bool = False  # `source.live`: compare the live DynamoDB tables with the specs
    alerts: AlertSettings = AlertSettings()  # on by default; never created for an emulator stage
    discounts: DiscountSettings = DiscountSettings()  # none: list prices
    serve: ServeSettings = ServeSettings()  # off: `pulumi up` deploys no endpoint (spec/serve_settings.py)
    template: str | None = None  # the stage this one was made from (ephemeral stacks)
    location: Location | None = None  # of the ddb2bigtable:stage key, for planner errors

    def spec_paths(self, root: Path) -> list[Path]:
        """The spec files, resolved against the project root."""
        return [root / spec for spec in self.specs]


def stack_path(name: str, root: Path) -> Path:
    return root / STACKS_DIR / f"Pulumi.{name}.yaml"


def stage_names(root: Path) -> list[str]:
    """Every stage with a stack file, sorted."""
    files = (root / STACKS_DIR).glob("Pulumi.*.yaml")
    return sorted(f.name.removeprefix("Pulumi.").removesuffix(".yaml") for f in files)


def load_stage(name: str, root: Path) -> Stage:
    """The stage `name` from `root/stacks/Pulumi.<name>.yaml`; `InputError` with every problem."""
    return _from_doc(name, _read_stack(name, root), root)


def stage_from_config(name: str, root: Path, config: dict[str, Any]) -> Stage:
    """The stage of a running Pulumi program, from the stack's config as Pulumi hands it over.

    Same checks as `load_stage`. Positions come from the stack file when it holds exactly
    this config (the usual case); config set some other way is reported at line 1.
    """
    path = stack_path(name, root)
    doc = _read_stack(name, root) if path.is_file() else None
    if doc is None or doc.value_at(("config",)) != config:
        doc = YamlDocument(str(path), {"config": config})
    return _from_doc(name, doc, root)


def _read_stack(name: str, root: Path) -> YamlDocument:
    path = stack_path(name, root)
    if not path.is_file():
        known = stage_names(root)
        listed = ", ".join(known) if known else f"none (no Pulumi.<stage>.yaml in {root / STACKS_DIR})"
        raise InputError([Problem.about(str(path), "", f"no stage {name!r} ({path} does not exist); "
                                        f"existing stages: {listed}{did_you_mean(name, known)}")])
    doc, problems = parse_yaml(path)
    if doc is None or problems:  # a duplicate key, an alias of itself: the stack says two things
        raise InputError(problems)
    return doc


def _from_doc(name: str, doc: YamlDocument, root: Path) -> Stage:
    problems = _config_problems(doc)
    if problems:
        raise InputError(problems)
    at = ("config", STAGE_KEY)
    data = doc.value_at(at)
    template = data.get("template")
    base: Stage | None = None
    if isinstance(template, str):
        if template == name:
            raise InputError([doc.problem((*at, "template"), "a stage cannot be its own template")])
        base = load_stage(template, root)
        if base.template:
            raise InputError([doc.problem((*at, "template"), f"{template!r} is itself made from "
                                                             f"{base.template!r}; name that stage instead")])
    issues = [i for i in schema_problems(doc, STAGE_SCHEMA, at)
              if base is None or "missing key" not in i[1].message]  # a template supplies what is missing
    problems += [p for _, p in issues] + _cross_checks(doc, data, issues, root)
    if problems:
        raise InputError(problems)
    line, column = doc.locate(at, key=True)
    return _stage(name, doc, data, Location(doc.file, line, column), base)


def _config_problems(doc: YamlDocument) -> list[Problem]:
    """The Pulumi wrapper around the stage: `config:` with the namespaced keys we read."""
    config = doc.value_at(("config",))
    if not isinstance(config, dict):
        return [doc.problem(("config",), "expected a Pulumi stack file with a `config:` mapping holding "
                                         f"`{STAGE_KEY}`", key=True)]
    out: list[Problem] = []
    if STAGE_KEY not in config:
        out.append(doc.problem(("config",), f"missing key {STAGE_KEY!r}: the stage settings, "
                                            f"e.g. {{specs: [specs/shop.yaml]}}", key=True))
    elif not isinstance(config[STAGE_KEY], dict):
        out.append(doc.problem(("config", STAGE_KEY), "expected a mapping (key: value) of stage settings"))
    project = config.get(PROJECT_KEY)
    if project is not None and not isinstance(project, str):
        out.append(doc.problem(("config", PROJECT_KEY), "expected the GCP project id as text"))
    return out


def _cross_checks(doc: YamlDocument, data: dict[str, Any], issues: list[Issue], root: Path) -> list[Problem]:
    at = ("config", STAGE_KEY)
    out: list[Problem] = []
    if "specs" in data and clean(issues, (*at, "specs")):
        existing = sorted(str(p.relative_to(root)) for p in root.glob("specs/**/*.yaml"))
        for i, spec in enumerate(data["specs"]):
            if not (root / spec).is_file():
                out.append(doc.problem((*at, "specs", i), f"spec file {spec!r} does not exist under {root}"
                                                          f"{did_you_mean(spec, existing)}"))
    regions = data.get("regions")
    if isinstance(regions, list) and clean(issues, (*at, "regions")):
        out += [doc.problem((*at, "regions", i), why)
                for i, region in enumerate(regions) if (why := region_problem(region))]
    load = data.get("load")
    if data.get("emulator") and isinstance(load, dict) and load.get("runner") == "dataflow":
        out.append(doc.problem((*at, "load", "runner"), "the emulator runs on this machine, where Dataflow "
                                                        "workers cannot reach it; use runner: local"))
    if isinstance(data.get("serve"), dict) and clean(issues, (*at, "serve")):
        out += serve_problems(data["serve"], data.get("emulator") is True,
                              lambda path, message: doc.problem((*at, "serve", *path), message, key=True))
    return out


def _stage(name: str, doc: YamlDocument, data: dict[str, Any], location: Location, base: Stage | None) -> Stage:
    fields: dict[str, Any] = dict(data)
    if "specs" in data:
        fields["specs"] = tuple(data["specs"])
    if isinstance(data.get("regions"), list):
        fields["regions"] = tuple(data["regions"])
    if "capacity_scale" in data:
        fields["capacity_scale"] = float(data["capacity_scale"])
    if "load" in data:
        fields["load"] = LoadSettings(**data["load"])
    if "source" in data:
        fields["live_source"] = fields.pop("source")["live"]
    if "alerts" in data:
        alerts = data["alerts"]
        fields["alerts"] = AlertSettings(enabled=alerts.get("enabled", True),
                                         channels=tuple(alerts.get("channels", ())))
    if "discounts" in data:
        bigtable, dynamodb = data["discounts"].get("bigtable", {}), data["discounts"].get("dynamodb", {})
        fields["discounts"] = DiscountSettings(
            bigtable_committed_use=bigtable.get("committed_use"),
            bigtable_negotiated_percent=float(bigtable.get("negotiated_percent", 0)),
            dynamodb_reserved_capacity=dynamodb.get("reserved_capacity"),
            dynamodb_negotiated_percent=float(dynamodb.get("negotiated_percent", 0)))
    if "serve" in data:
        fields["serve"] = serve_settings(data["serve"])
    project = doc.value_at(("config", PROJECT_KEY))
    if base is None:
        return Stage(name=name, file=doc.file, gcp_project=project, location=location, **fields)
    fields.setdefault("instance_suffix", f"-{name}")
    return replace(base, name=name, file=doc.file, gcp_project=project or base.gcp_project,
                   location=location, **fields)
