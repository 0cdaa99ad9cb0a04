"""CloudFormation intrinsic functions, evaluated as far as a template alone allows.

Parameters take `--parameter KEY=VALUE`, else their `Default`; `Ref` to a DynamoDB table
gives its table name (as CloudFormation does); `Fn::Sub`, `Fn::Join`, `Fn::If` (with the
template's `Conditions`), `Fn::Select`, `Fn::Split` and `Fn::FindInMap` are computed. What
only a deployed stack knows (`Fn::GetAtt`, `Fn::ImportValue`, `AWS::AccountId`, a parameter
without a default) becomes `Unresolved` with the reason and the fix, so the caller can name
it in a warning instead of guessing silently.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Unresolved:
    """A value the template alone cannot give; `placeholder` stands in when one is needed."""

    reason: str
    placeholder: str = "UNRESOLVED"


NO_VALUE = object()  # AWS::NoValue: the property is removed
_PSEUDO = {"AWS::Partition": "aws", "AWS::URLSuffix": "amazonaws.com", "AWS::NoValue": NO_VALUE}
_DEPLOY_ONLY = ("Fn::GetAtt", "Fn::ImportValue", "Fn::GetAZs", "Fn::Base64", "Fn::Cidr", "Fn::Transform",
                "Fn::ToJsonString", "Fn::Length")


@dataclass(frozen=True)
class Context:
    """What intrinsics may read: parameter values, the region, resources' Ref values, conditions."""

    parameters: dict[str, Any]
    region: str
    refs: dict[str, Any] = field(default_factory=dict)  # logical id -> what Ref gives
    conditions: dict[str, Any] = field(default_factory=dict)  # name -> raw condition
    mappings: dict[str, Any] = field(default_factory=dict)

    def ref(self, name: str) -> Any:
        if name in self.parameters:
            return self.parameters[name]
        if name == "AWS::Region":
            return self.region
        if name in _PSEUDO:
            return _PSEUDO[name]
        if name.startswith("AWS::"):
            return Unresolved(f"{name} is known only to a deployed stack", name.removeprefix("AWS::"))
        if name in self.refs:
            return self.refs[name]
        return Unresolved(f"Ref {name}: no parameter or resource of that name in the template", name)


def parameter_values(declared: dict[str, Any], given: dict[str, str]) -> dict[str, Any]:
    """`--parameter` values, else defaults, else `Unresolved` naming the fix."""
    out: dict[str, Any] = {}
    for name, spec in declared.items():
        spec = spec if isinstance(spec, dict) else {}
        if name in given:
            value: Any = given[name]
        elif "Default" in spec:
            value = spec["Default"]
        else:
            out[name] = Unresolved(f"parameter {name} has no Default: pass --parameter {name}=VALUE", name)
            continue
        kind = str(spec.get("Type", "String"))
        if kind == "CommaDelimitedList" or kind.startswith("List<"):
            value = [v.strip() for v in str(value).split(",")] if isinstance(value, str) else value
        out[name] = value
    return out


def _first_unresolved(values: list[Any]) -> Unresolved | None:
    return next((v for v in values if isinstance(v, Unresolved)), None)


def mentions(value: Any, name: str) -> bool:
    """Whether `value` refers to `name`: a `Ref` to it, or `${name}` in a `Fn::Sub` text."""
    if isinstance(value, dict):
        return value.get("Ref") == name or any(mentions(v, name) for v in value.values())
    if isinstance(value, list):
        return any(mentions(v, name) for v in value)
    return isinstance(value, str) and "${" + name + "}" in value


def _sub(template: str, variables: dict[str, Any], ctx: Context) -> Any:
    parts: list[Any] = []

    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        if name.startswith("!"):
            return "${" + name[1:] + "}"
        if name in variables and is_intrinsic(variables[name]) and mentions(variables[name], name):
            value = Unresolved(f"the Fn::Sub variable {name} refers to itself; give it a value that does not "
                               f"use ${{{name}}}", name)
        elif name in variables:
            value = resolve(variables[name], ctx)
        elif "." in name and not name.startswith("AWS::"):
            value = Unresolved(f"${{{name}}} (an attribute) is known only to a deployed stack", name)
        else:
            value = ctx.ref(name)
        parts.append(value)
        return "" if isinstance(value, Unresolved) else str(value)

    text = re.sub(r"\$\{([^}]+)\}", replace, template)
    return _first_unresolved(parts) or text


def condition(name: str, ctx: Context) -> Any:
    """A named condition's truth, or `Unresolved`."""
    if name not in ctx.conditions:
        return Unresolved(f"condition {name} is not in the template's Conditions", name)
    return resolve(ctx.conditions[name], ctx)


# Functions evaluated on their resolved arguments (the others decide what to resolve).
_EVALUATED: dict[str, Callable[[Any, Context], Any]] = {
    "Fn::Join": lambda args, _: str(args[0]).join(str(x) for x in args[1]),
    "Fn::Select": lambda args, _: args[1][int(args[0])],
    "Fn::Split": lambda args, _: str(args[1]).split(str(args[0])),
    "Fn::FindInMap": lambda args, ctx: ctx.mappings.get(args[0], {}).get(args[1], {}).get(
        args[2], Unresolved(f"Fn::FindInMap {args}")),
    "Fn::Equals": lambda args, _: str(args[0]) == str(args[1]),
    "Fn::Not": lambda args, _: not args[0],
    "Fn::And": lambda args, _: all(args),
    "Fn::Or": lambda args, _: any(args),
}


def _function(name: str, arg: Any, ctx: Context) -> Any:
    if name == "Ref":
        return ctx.ref(arg) if isinstance(arg, str) else Unresolved(f"Ref of {arg!r}")
    if name == "Condition":
        return condition(arg, ctx)
    if name in _DEPLOY_ONLY:
        return Unresolved(f"{name} {arg!r} is known only to a deployed stack", str(arg))
    if name == "Fn::Sub":
        template, variables = (arg, {}) if isinstance(arg, str) else (arg[0], arg[1] if len(arg) > 1 else {})
        return _sub(template, variables, ctx)
    if name == "Fn::If":
        return _if(arg, ctx)
    evaluate = _EVALUATED.get(name)
    if evaluate is None:
        return Unresolved(f"{name} is not evaluated by the importer", name)
    args = resolve(arg, ctx)
    flat = args if isinstance(args, list) else [args]
    if (missing := _first_unresolved(flat + [x for a in flat if isinstance(a, list) for x in a])) is not None:
        return missing
    return evaluate(args, ctx)


def _if(arg: Any, ctx: Context) -> Any:
    """Only the branch the condition picks is resolved: the other may name what is absent."""
    truth = condition(arg[0], ctx)
    if isinstance(truth, Unresolved):
        return truth
    return resolve(arg[1] if truth else arg[2], ctx)


def is_intrinsic(value: Any) -> bool:
    """A one-key mapping `{Ref: ...}`, `{Condition: ...}` or `{Fn::...: ...}`."""
    if not (isinstance(value, dict) and len(value) == 1):
        return False
    key = str(next(iter(value)))
    return key in ("Ref", "Condition") or key.startswith("Fn::")


def resolve(value: Any, ctx: Context) -> Any:
    """`value` with every intrinsic evaluated; AWS::NoValue entries are dropped."""
    if is_intrinsic(value):
        name, arg = next(iter(value.items()))
        try:
            return _function(name, arg, ctx)
        except (IndexError, KeyError, TypeError, ValueError, AttributeError) as error:
            return Unresolved(f"{name} {arg!r} cannot be evaluated: {error}")
    if isinstance(value, dict):
        out = {k: resolve(v, ctx) for k, v in value.items()}
        return {k: v for k, v in out.items() if v is not NO_VALUE}
    if isinstance(value, list):
        return [v for v in (resolve(item, ctx) for item in value) if v is not NO_VALUE]
    return value
