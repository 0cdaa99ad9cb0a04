"""Terraform `.tf` files and `terraform show -json` (plan or state) -> `TableDefinition`s.

A configuration (a `.tf` file or a folder) is evaluated first (`tf_calls`: variables,
locals, functions, count/for_each, dynamic blocks, module calls); `show -json` holds values
already. Both are brought to one shape, a list of resources (type, address, arguments,
where they sit), and read by the same code: `aws_dynamodb_table` (tables.py), `aws_dynamodb_table_replica`
(one more replica of a table in the same file), and `aws_appautoscaling_target` / `_policy`
pointing at `table/NAME[/index/INDEX]`. The region is the table's provider's (`provider
"aws" { region = ... }`, an alias via `provider = aws.NAME`); a `show -json` document holds
it in the provider configuration or in the table's ARN; else --region, else the default
with a warning, as for CloudFormation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path as FilePath
from typing import Any

from ...spec.errors import InputError, Problem
from ..cloudformation import autoscaling as cfn_autoscaling
from ..cloudformation.fields import CMEK_ADVICE, table_class
from ..cloudformation.intrinsics import Unresolved
from ..located import Located, Path, walk
from ..model import Dropped, Imported, Notice, Options, ReplicaDef, Scaling, Sourced, TableDefinition, given
from .calls import configuration
from .files import Files
from .modules import MAX_MODULE_DEPTH, POLICY, REPLICA, RESOURCE_POLICY, TABLE, TARGET, Resource
from .tables import TfFields, read_table

KIND = "terraform"
_ARN = re.compile(r"^arn:aws[\w-]*:dynamodb:([\w-]*):\d*:table/([^/]+)")


@dataclass(frozen=True)
class HclLocated(Located):
    """A configuration of several files: a problem names the file of its resource."""

    files: dict[Path, str] = field(default_factory=dict)  # resource path -> the file defining it

    def problem(self, path: Path, message: str) -> Problem:
        at = path
        while at not in self.files and at:
            at = at[:-1]
        found = super().problem(path, message)
        return replace(found, file=self.files.get(at, self.file))


def fields(loc: Located, resource: Resource) -> TfFields:
    return TfFields(loc, resource.address, resource.values, resource.base)


def is_terraform(data: Any) -> bool:
    if not isinstance(data, dict):
        return False
    return "format_version" in data and ("values" in data or "planned_values" in data)


def _modules(loc: Located, root: Any, base: Path, region: Any) -> list[Resource]:
    """The managed resources of a `show -json` module and of its child modules, walked without
    recursion (a document may nest thousands of modules)."""
    out: list[Resource] = []
    stack = [(root, base, 0)]
    while stack:
        module, at, depth = stack.pop()
        if not isinstance(module, dict):
            continue
        if depth > MAX_MODULE_DEPTH:
            raise loc.fail(at, f"child modules nest more than {MAX_MODULE_DEPTH} deep; Terraform's own modules "
                           "nest a few levels: this is not `terraform show -json` output of a real configuration")
        for i, resource in enumerate(module.get("resources") or []):
            if isinstance(resource, dict) and resource.get("mode", "managed") == "managed" \
                    and isinstance(resource.get("values"), dict):
                kind = str(resource.get("type"))
                address = str(resource.get("address") or f"{kind}.{resource.get('name')}")
                out.append(Resource(kind, address, resource["values"], (*at, "resources", i, "values"),
                                    region=region))
        children = module.get("child_modules") or []
        if isinstance(children, list):
            stack += [(child, (*at, "child_modules", j), depth + 1) for j, child in reversed(list(enumerate(children)))]
    return out


def _from_json(loc: Located) -> list[Resource]:
    top = "values" if isinstance(loc.data.get("values"), dict) else "planned_values"
    region = walk(loc.data, ("configuration", "provider_config", "aws", "expressions", "region", "constant_value"))
    return _modules(loc, walk(loc.data, (top, "root_module")), (top, "root_module"),
                    region if isinstance(region, str) else None)


def read_configuration(path: str, options: Options) -> Imported:
    """A `.tf` file or a directory of them: the root module evaluated with its modules."""
    files, source = Files(), FilePath(path)
    if source.is_dir():
        root, bodies = source, files.module(source)
        if not bodies:
            raise InputError([Problem.about(path, "", "a directory source must hold Terraform .tf files; name the "
                                            "files to import instead")])
    else:
        root, bodies = source.parent, [files.body(source)]
    resources, run = configuration(root, bodies, files, options)
    loc = HclLocated(path, {}, run.marks, run.sources)
    return _read(loc, options, resources, run.notices)


def _region(loc: Located, options: Options, resource: Resource, notices: list[Notice]) -> Sourced[str]:
    arn = _ARN.match(str(resource.values.get("arn") or ""))
    if arn and arn.group(1):
        return given(arn.group(1), f"Terraform {resource.address}.arn")
    if isinstance(resource.values.get("region"), str):
        return given(resource.values["region"], f"Terraform {resource.address}.region")
    value = resource.region
    where = f"{resource.address}: provider aws.{resource.provider}" if resource.provider else 'provider "aws"'
    if isinstance(value, str):
        return given(value, f"Terraform {where} region")
    if isinstance(value, Unresolved):
        notice = Notice("unresolved", where, f"the region is not resolved: {value.reason}")
        if notice not in notices:
            notices.append(notice)
    found, more = options.region_of(loc.file)
    notices += [n for n in more if n not in notices]
    return found


def _replica(loc: Located, options: Options, resource: Resource, tables: list[TableDefinition],
             notices: list[Notice]) -> list[TableDefinition]:
    """`aws_dynamodb_table_replica`: one more replica of the table its global_table_arn names."""
    f = fields(loc, resource)
    arn = f.raw(("global_table_arn",))
    found = _ARN.match(arn) if isinstance(arn, str) else None
    if found is None or not any(t.name.value == found.group(2) for t in tables):
        notices.append(Notice("replica-unmatched", f.logical, "global_table_arn names no table of this file: "
                              "import the table's file together with it"))
        return tables
    region = _region(loc, options, resource, notices)
    for argument in ("tags", "kms_key_arn"):
        if f.has((argument,)):
            advice = CMEK_ADVICE if argument == "kms_key_arn" else (
                "a spec holds it once per table (the home region's): set it on the Bigtable side if it matters")
            notices.append(Notice("not-in-spec", f.logical, f"{argument} of the replica in {region.value} "
                                  f"({f.origin((argument,))}): {advice}"))
    # the replica's own PITR and class are replica fields (replicas[].point_in_time_recovery, .table_class)
    # point_in_time_recovery defaults to false (the provider's docs), table_class_override to the table's class
    own_pitr = f.flag(("point_in_time_recovery",), "point_in_time_recovery") or given(
        False, f.origin(()) + " (no point_in_time_recovery: false)")
    klass = table_class(f, ("table_class_override",)) if f.has(("table_class_override",)) else None

    def add(t: TableDefinition) -> TableDefinition:
        pitr = own_pitr if own_pitr.value != (t.pitr.value if t.pitr is not None else False) else None
        own_class = klass if klass is not None and (t.table_class is None or klass.value != t.table_class.value) \
            else None
        return replace(t, replicas=(*t.replicas, ReplicaDef(region, table_class=own_class, pitr=pitr)))
    return [add(t) if t.name.value == found.group(2) else t for t in tables]


def _policies(table: TableDefinition, resources: list[Resource]) -> TableDefinition:
    """`aws_dynamodb_resource_policy` on the table: what a spec cannot hold, reported."""
    found = [Dropped("resource-based policy", f"Terraform {r.address}", "Bigtable access is IAM on the project, "
                     "instance or table: grant the principals roles/bigtable.user there")
             for r in resources if r.kind == RESOURCE_POLICY
             and (arn := _ARN.match(str(r.values.get("resource_arn")))) and arn.group(2) == table.name.value]
    return replace(table, dropped=(*table.dropped, *found)) if found else table


def _scalings(loc: Located, resources: list[Resource]) -> tuple[dict[cfn_autoscaling.Key, Scaling], list[Notice]]:
    notices: list[Notice] = []
    found: dict[cfn_autoscaling.Key, Scaling] = {}
    names = ("resource_id", "scalable_dimension")
    for r in (r for r in resources if r.kind == TARGET and r.values.get("service_namespace") == "dynamodb"):
        f = fields(loc, r)
        if (key := cfn_autoscaling.scaling_key(f, notices, names)) is None:
            continue
        low, high = f.integer(("min_capacity",), "min_capacity"), f.integer(("max_capacity",), "max_capacity")
        if low is None or high is None:
            raise f.fail((), "a scalable target needs min_capacity and max_capacity")
        found[key] = Scaling(low, high)
    for r in (r for r in resources if r.kind == POLICY and r.values.get("service_namespace") == "dynamodb"):
        f = fields(loc, r)
        target = f.number(("target_tracking_scaling_policy_configuration", 0, "target_value"), "target_value")
        if target is None or (key := cfn_autoscaling.scaling_key(f, notices, names)) is None:
            continue
        if key not in found:
            notices.append(Notice("autoscaling-unmatched", f.logical, f"policy for {key} has no scalable target in "
                                  "the file; its target value is left out"))
            continue
        found[key] = replace(found[key], target=target)
    return found, notices


def read(loc: Located, options: Options) -> Imported:
    """Every DynamoDB table of a `terraform show -json` document (a configuration: `read_configuration`)."""
    return _read(loc, options, _from_json(loc), [])


def _table(loc: Located, options: Options, resource: Resource, notices: list[Notice]) -> TableDefinition:
    """One table; a value of a shape no reader check expected (a map where a list belongs) is bad
    input at the resource, never a traceback."""
    try:
        return read_table(fields(loc, resource), _region(loc, options, resource, notices))
    except (TypeError, AttributeError, KeyError, IndexError, ValueError) as error:
        raise loc.fail(resource.base, f"{resource.address}: an argument has a shape the AWS provider does not "
                       f"take ({str(error)[:120]}): run `terraform validate`, then fix it") from None


def _read(loc: Located, options: Options, resources: list[Resource], notices: list[Notice]) -> Imported:
    tables, seen = [], dict[tuple[str, str], str]()
    for r in (r for r in resources if r.kind == TABLE):
        table = _table(loc, options, r, notices)
        key = (table.name.value, table.region.value)
        if key in seen:  # two instances AWS would refuse; all_tables would blame two sources
            raise loc.fail(r.base, f"{r.address} has the name {key[0]!r} in {key[1]}, as {seen[key]} does: AWS holds "
                           "one table of a name per region; fix the name (does it need each.key?)")
        seen[key] = r.address
        tables.append(table)
    if not tables:
        unread = "".join(f"; {n.subject}: {n.message}" for n in notices if n.code in ("not-evaluated", "no-instances"))
        raise loc.fail((), f"no {TABLE} here: expected a .tf file, a folder of them or `terraform show -json` output "
                       f"that defines one{unread}")
    for r in resources:
        if r.kind == REPLICA:
            tables = _replica(loc, options, r, tables, notices)
    tables = [_policies(t, resources) for t in tables]
    scaling, scaling_notices = _scalings(loc, resources)
    tables, unmatched = cfn_autoscaling.apply(tables, scaling)
    return Imported(loc.file, KIND, tuple(tables), tuple(notices + scaling_notices + unmatched))
