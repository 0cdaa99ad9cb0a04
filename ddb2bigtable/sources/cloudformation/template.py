"""CloudFormation / SAM templates -> `TableDefinition`s.

The template is loaded by cfn-flip (YAML short forms `!Ref`, `!Sub`, `!GetAtt`, `!If`, ...
become their long forms; JSON as is), intrinsics are evaluated with the parameters
(`--parameter KEY=VALUE`, else defaults), and each `AWS::DynamoDB::Table`,
`AWS::DynamoDB::GlobalTable` and `AWS::Serverless::SimpleTable` becomes one table, with
the Application Auto Scaling resources that point at it. A template states no region of
its own (the stack's region is chosen at deploy time): `--region`, else us-east-1 with a
warning; a global table's home is the replica in that region (else its first replica).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..located import Located
from ..model import Imported, Notice, Options, TableDefinition
from . import autoscaling as cfn_autoscaling
from .fields import Fields
from .global_tables import read_global_table
from .intrinsics import Context, Unresolved, condition, is_intrinsic, mentions, parameter_values, resolve
from .tables import read_simple_table, read_table

KIND = "cloudformation"
TABLE, GLOBAL, SIMPLE = "AWS::DynamoDB::Table", "AWS::DynamoDB::GlobalTable", "AWS::Serverless::SimpleTable"
NESTED = ("AWS::CloudFormation::Stack", "AWS::Serverless::Application")


def is_template(data: Any) -> bool:
    return isinstance(data, dict) and isinstance(data.get("Resources"), dict)


def _resources(loc: Located) -> dict[str, dict[str, Any]]:
    resources = loc.check(("Resources",), loc.data.get("Resources"), (dict,), "Resources")
    for logical, resource in resources.items():
        loc.check(("Resources", logical), resource, (dict,), f"resource {logical}")
        loc.check(("Resources", logical, "Type"), resource.get("Type"), (str,), f"{logical}.Type")
    return resources


def _check_defaults(loc: Located, declared: dict[str, Any], given: dict[str, str]) -> None:
    """A Default that is a function (`!Sub "${Env}-x"`) is refused where it is used: CloudFormation
    evaluates no function there, and one that names its own parameter can never have a value."""
    for name, spec in declared.items():
        default = spec.get("Default") if isinstance(spec, dict) and name not in given else None
        if not isinstance(default, dict) or not is_intrinsic(default):
            continue
        function = next(iter(default))
        what = (f"refers to the parameter {name} itself ({function})" if mentions(default, name) else
                f"is a function ({function})")
        raise loc.fail(("Parameters", name, "Default"), f"{what}; CloudFormation takes a plain value as a "
                       f"parameter's Default and evaluates no function there: write the value, or pass "
                       f"--parameter {name}=VALUE")


def _context(loc: Located, options: Options, region: str, resources: dict[str, dict[str, Any]]) -> Context:
    """Parameters and conditions, and each table's name for `Ref` (what CloudFormation returns)."""
    declared = loc.data.get("Parameters") or {}
    if isinstance(declared, dict):
        _check_defaults(loc, declared, dict(options.parameters))
    base = Context(parameter_values(declared if isinstance(declared, dict) else {}, dict(options.parameters)),
                   region, {}, loc.data.get("Conditions") or {}, loc.data.get("Mappings") or {})
    refs: dict[str, Any] = {}
    for logical, resource in resources.items():
        if resource["Type"] in (TABLE, GLOBAL, SIMPLE):
            name = resolve((resource.get("Properties") or {}).get("TableName", logical), base)
            refs[logical] = name
    return replace(base, refs=refs)


def _included(loc: Located, logical: str, resource: dict[str, Any], ctx: Context, notices: list[Notice]) -> bool:
    """False when the resource's `Condition` is false with these parameters."""
    name = resource.get("Condition")
    if name is None:
        return True
    truth = condition(str(name), ctx)
    if isinstance(truth, Unresolved):
        notices.append(Notice("unresolved", logical, f"Condition {name} is not resolved ({truth.reason}); "
                              "the table is imported as if it were true"))
        return True
    if not truth:
        notices.append(Notice("condition-false", logical, f"Condition {name} is false with these parameters: "
                              "not imported (pass --parameter to change that)"))
    return bool(truth)


def read(loc: Located, options: Options) -> Imported:
    """Every DynamoDB table of one template, with its auto scaling."""
    resources = _resources(loc)
    region, region_notices = options.region_of(loc.file)
    notices: list[Notice] = []
    ctx = _context(loc, options, region.value, resources)
    declared = loc.data.get("Parameters") or {}
    notices += [Notice("unknown-parameter", loc.file, f"--parameter {k} is not a parameter of this template")
                for k, _ in options.parameters if k not in declared]
    tables: list[TableDefinition] = []
    for logical, resource in resources.items():
        kind = resource["Type"]
        if kind in NESTED:
            notices.append(Notice("nested-stack", logical, f"{kind} is not followed: import its template too"))
        if kind not in (TABLE, GLOBAL, SIMPLE) or not _included(loc, logical, resource, ctx, notices):
            continue
        props = loc.check(("Resources", logical, "Properties"), resolve(resource.get("Properties") or {}, ctx),
                          (dict,), f"{logical}.Properties")
        f = Fields(loc, logical, props)
        if kind == GLOBAL:
            table, found = read_global_table(f, options.region)
            tables.append(table)
            notices += found
        else:
            tables.append((read_table if kind == TABLE else read_simple_table)(f, region))
    if not tables:
        raise loc.fail(("Resources",), f"no DynamoDB table in this template: expected {TABLE}, {GLOBAL} or {SIMPLE}"
                       + (" (nested stacks are not followed: import their templates)"
                          if any(r["Type"] in NESTED for r in resources.values()) else ""))
    if any(r["Type"] in (TABLE, SIMPLE) for r in resources.values()):
        notices = region_notices + notices
    scaling, scaling_notices = cfn_autoscaling.scalings(loc, resources, ctx)
    tables, unmatched = cfn_autoscaling.apply(tables, scaling)
    return Imported(loc.file, KIND, tuple(tables), tuple(notices + scaling_notices + unmatched))
