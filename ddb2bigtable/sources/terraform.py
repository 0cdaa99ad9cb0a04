"""Terraform `.tf` files and `terraform show -json` (plan or state) -> `TableDefinition`s.

Both are brought to one shape, a list of resources (type, name, arguments, where they sit),
and read by the same code: `aws_dynamodb_table` (tf_tables.py), `aws_dynamodb_table_replica`
(one more replica of a table in the same file), and `aws_appautoscaling_target` / `_policy`
pointing at `table/NAME[/index/INDEX]`. The region is the table's provider's (`provider
"aws" { region = ... }`, an alias via `provider = aws.NAME`); a `show -json` document holds
it in the provider configuration or in the table's ARN; else --region, else the default
with a warning, as for CloudFormation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from . import cfn_autoscaling
from .cfn_fields import CMEK_ADVICE, table_class
from .intrinsics import Unresolved
from .located import Located, Path, walk
from .model import Imported, Notice, Options, ReplicaDef, Scaling, Sourced, TableDefinition, given
from .tf_hcl import HCL_KEY, Scope, blocks, resource_path, scope_of, unquote
from .tf_tables import TfFields, read_table

KIND = "terraform"
TABLE, REPLICA = "aws_dynamodb_table", "aws_dynamodb_table_replica"
TARGET, POLICY = "aws_appautoscaling_target", "aws_appautoscaling_policy"
_ORDER = (TABLE, TARGET, POLICY, REPLICA)  # each may refer to the ones before it
_ARN = re.compile(r"^arn:aws[\w-]*:dynamodb:([\w-]*):\d*:table/([^/]+)")
_PROVIDER = re.compile(r"^aws\.([\w-]+)$")
_META = ("dynamic", "count", "for_each", "depends_on", "lifecycle")


@dataclass(frozen=True)
class Resource:
    kind: str
    address: str  # `aws_dynamodb_table.orders`, `module.db.aws_dynamodb_table.orders` in `show -json`
    values: dict[str, Any]
    base: Path
    provider: str | None = None  # the alias of `provider = aws.ALIAS`

    def fields(self, loc: Located) -> TfFields:
        return TfFields(loc, self.address, self.values, self.base)


def is_terraform(data: Any) -> bool:
    if not isinstance(data, dict):
        return False
    return HCL_KEY in data or ("format_version" in data and ("values" in data or "planned_values" in data))


def _module(module: Any, base: Path, out: list[Resource]) -> None:
    """The managed resources of a `show -json` module and of its child modules."""
    if not isinstance(module, dict):
        return
    for i, resource in enumerate(module.get("resources") or []):
        if isinstance(resource, dict) and resource.get("mode", "managed") == "managed" \
                and isinstance(resource.get("values"), dict):
            kind = str(resource.get("type"))
            address = str(resource.get("address") or f"{kind}.{resource.get('name')}")
            out.append(Resource(kind, address, resource["values"], (*base, "resources", i, "values")))
    for j, child in enumerate(module.get("child_modules") or []):
        _module(child, (*base, "child_modules", j), out)


def _from_json(loc: Located) -> tuple[list[Resource], dict[str | None, Any]]:
    top = "values" if isinstance(loc.data.get("values"), dict) else "planned_values"
    found: list[Resource] = []
    _module(walk(loc.data, (top, "root_module")), (top, "root_module"), found)
    region = walk(loc.data, ("configuration", "provider_config", "aws", "expressions", "region", "constant_value"))
    return found, ({None: region} if isinstance(region, str) else {})


def _from_hcl(loc: Located, options: Options) -> tuple[list[Resource], dict[str | None, Any], list[Notice]]:
    """The resources of a `.tf` file in `_ORDER`, each evaluated with what the earlier ones define."""
    data = loc.data[HCL_KEY]
    parameters = dict(options.parameters)
    scope: Scope = scope_of(data, parameters)
    notices = [Notice("unknown-parameter", loc.file, f"--parameter {k} is not a variable of this file")
               for k in parameters if k not in scope.variables]
    notices += [Notice("not-evaluated", f"module.{label}", "modules are not expanded: import the module's directory "
                       "(with --parameter for its variables) or `terraform show -json` output")
                for label, _ in blocks(data, "module")]
    regions: dict[str | None, Any] = {}
    for label, body in blocks(data, "provider"):
        if label == "aws" and isinstance(body, dict):
            config = scope.evaluate(body)
            regions.setdefault(config.get("alias"), config.get("region"))
    raw = [(unquote(kind), unquote(name), body) for entry in data.get("resource") or [] if isinstance(entry, dict)
           for kind, named in entry.items() if isinstance(named, dict) for name, body in named.items()]
    found = []
    for kind in _ORDER:
        for k, name, body in raw:
            if k != kind or not isinstance(body, dict):
                continue
            alias = _PROVIDER.match(str(body.get("provider", "")).strip("${}\""))  # aws.X or "aws.X"
            notices += _unexpanded(f"{kind}.{name}", body)
            values = scope.evaluate({a: v for a, v in body.items() if a not in ("provider", *_META)})
            found.append(Resource(kind, f"{kind}.{name}", values, resource_path(kind, name),
                                  alias.group(1) if alias else None))
            for attribute, value in values.items():
                if not isinstance(value, (dict, list)):
                    scope.refs[f"{kind}.{name}.{attribute}"] = value
            if kind == TABLE:
                scope.refs[f"{kind}.{name}.id"] = values.get("name")
                # a stand-in ARN without region or account, so a replica can name its table
                scope.refs[f"{kind}.{name}.arn"] = f"arn:aws:dynamodb:::table/{values.get('name')}"
    return found, regions, notices


def _unexpanded(address: str, body: dict[str, Any]) -> list[Notice]:
    """What a plan would expand and this reader does not: named, so nothing goes missing silently."""
    out = []
    if "dynamic" in body:
        names = ", ".join(unquote(n) for entry in body["dynamic"] if isinstance(entry, dict) for n in entry)
        out.append(Notice("not-evaluated", address, f"dynamic blocks ({names}) are not expanded: write them out, or "
                          "import `terraform show -json` output, which has them expanded"))
    for meta in ("count", "for_each"):
        if meta in body:
            out.append(Notice("not-evaluated", address, f"{meta} is not expanded: one table is imported; import "
                              "`terraform show -json` output to get every instance"))
    return out


def _region(loc: Located, options: Options, regions: dict[str | None, Any], resource: Resource,
            notices: list[Notice]) -> Sourced[str]:
    arn = _ARN.match(str(resource.values.get("arn") or ""))
    if arn and arn.group(1):
        return given(arn.group(1), f"Terraform {resource.address}.arn")
    value = regions.get(resource.provider)
    where = f"{resource.address}: provider aws.{resource.provider}" if resource.provider \
        else 'provider "aws"'
    if isinstance(value, str):
        return given(value, f"Terraform {where} region")
    if isinstance(value, Unresolved):
        notices.append(Notice("unresolved", where, f"the region is not resolved: {value.reason}"))
    found, more = options.region_of(loc.file)
    notices += [n for n in more if n not in notices]
    return found


def _replica(loc: Located, options: Options, regions: dict[str | None, Any], resource: Resource,
             tables: list[TableDefinition], notices: list[Notice]) -> list[TableDefinition]:
    """`aws_dynamodb_table_replica`: one more replica of the table its global_table_arn names."""
    f = resource.fields(loc)
    arn = f.raw(("global_table_arn",))
    found = _ARN.match(arn) if isinstance(arn, str) else None
    if found is None or not any(t.name.value == found.group(2) for t in tables):
        notices.append(Notice("replica-unmatched", f.logical, "global_table_arn names no table of this file: "
                              "import the table's file together with it"))
        return tables
    region = _region(loc, options, regions, resource, notices)
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


def _scalings(loc: Located, resources: list[Resource]) -> tuple[dict[cfn_autoscaling.Key, Scaling], list[Notice]]:
    notices: list[Notice] = []
    found: dict[cfn_autoscaling.Key, Scaling] = {}
    names = ("resource_id", "scalable_dimension")
    for r in (r for r in resources if r.kind == TARGET and r.values.get("service_namespace") == "dynamodb"):
        f = r.fields(loc)
        if (key := cfn_autoscaling.scaling_key(f, notices, names)) is None:
            continue
        low, high = f.integer(("min_capacity",), "min_capacity"), f.integer(("max_capacity",), "max_capacity")
        if low is None or high is None:
            raise f.fail((), "a scalable target needs min_capacity and max_capacity")
        found[key] = Scaling(low, high)
    for r in (r for r in resources if r.kind == POLICY and r.values.get("service_namespace") == "dynamodb"):
        f = r.fields(loc)
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
    """Every DynamoDB table of one Terraform file or `show -json` document."""
    notices: list[Notice] = []
    if HCL_KEY in loc.data:
        resources, regions, notices = _from_hcl(loc, options)
    else:
        resources, regions = _from_json(loc)
    tables = [read_table(r.fields(loc), _region(loc, options, regions, r, notices))
              for r in resources if r.kind == TABLE]
    if not tables:
        raise loc.fail((), f"no {TABLE} here: expected a .tf file or `terraform show -json` output that defines one "
                       "(modules are not expanded: import the module's own .tf files)")
    for r in resources:
        if r.kind == REPLICA:
            tables = _replica(loc, options, regions, r, tables, notices)
    scaling, scaling_notices = _scalings(loc, resources)
    tables, unmatched = cfn_autoscaling.apply(tables, scaling)
    return Imported(loc.file, KIND, tuple(tables), tuple(notices + scaling_notices + unmatched))
