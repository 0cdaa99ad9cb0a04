"""A module's input variables: their values as Terraform assigns them, shaped by their declared type.

The root module's values come, lowest first, from each `default`, `terraform.tfvars`,
`*.auto.tfvars` (in name order), each `--var-file` (in order), then `--parameter` (Terraform's
`-var`). A variable none of them sets is unknown, and the estimate it ends in names the
`--parameter` or `--var-file` entry to give. `type` matters beyond checking: an
`optional(T, DEFAULT)` attribute left out of an object takes DEFAULT (null without one),
which `for_each` and `dynamic` blocks over team-written variables rely on.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from lark import Tree

from ..cloudformation.intrinsics import Unresolved
from .expressions import evaluate
from .functions import EvalError
from .syntax import Block, Body, function_call, trees, unwrapped
from .values import Lazy, Scope, is_unknown

ReadBody = Callable[[str], Body]  # a .tfvars file read within the limits, parsed


def missing(name: str) -> Unresolved:
    return Unresolved(f"variable {name} has no value: pass --parameter {name}=VALUE, or set it in a --var-file "
                      "(or terraform.tfvars beside the configuration)", f"unresolved-{name}")


def _default_scope(declared: list[str], owner: str) -> Scope:
    """A default is a literal: a reference in it is named, itself included."""
    def referred(name: str) -> Unresolved:
        what = "itself" if name == owner else f"var.{name}"
        return Unresolved(f"the default of variable {owner} refers to {what}; a default must be a literal value "
                          f"(Terraform refuses this too): pass --parameter {owner}=VALUE", f"unresolved-{owner}")
    var = Lazy(lambda: declared, referred, missing=referred)
    return Scope({"var": var}, lambda root: Unresolved(
        f"the default of variable {owner} refers to {root}; a default must be a literal value: pass --parameter "
        f"{owner}=VALUE", f"unresolved-{owner}"))


def _default(node: Tree, scope: Scope, owner: str) -> Any:
    try:
        return evaluate(node, scope)
    except EvalError as error:
        return Unresolved(f"the default of variable {owner}: {error}; pass --parameter {owner}=VALUE",
                          f"unresolved-{owner}")


def literal(node: Tree, what: str) -> Any:
    """A value written in a .tfvars file (or a --parameter holding HCL): no references allowed."""
    scope = Scope({}, lambda root: Unresolved(f"{what} refers to {root}; a .tfvars value must be a literal",
                                              "unresolved-tfvars"))
    try:
        return evaluate(node, scope)
    except EvalError as error:
        return Unresolved(f"{what}: {error}", "unresolved-tfvars")


def conform(type_node: Tree | None, value: Any) -> Any:
    """`value` shaped by a `type` constraint: optional object attributes filled in."""
    if type_node is None or value is None or is_unknown(value):
        return value
    called = function_call(type_node)
    if called is None:
        return value
    name, args = called
    if name in ("list", "set") and args and isinstance(value, list):
        return [conform(args[0], v) for v in value]
    if name == "map" and args and isinstance(value, Mapping):
        return {k: conform(args[0], v) for k, v in value.items()}
    if name == "optional" and args:
        return conform(args[0], value)
    if name == "object" and args and isinstance(value, Mapping):
        return _object(args[0], value)
    return value


def _object(fields: Tree, value: Mapping[str, Any]) -> Any:
    node = unwrapped(fields)
    if node.data != "object":
        return value
    out = dict(value)
    for elem in trees(node):
        key_node, type_node = trees(elem)
        key = "".join(str(t) for t in key_node.scan_values(lambda v: True)).strip().strip('"')
        if key not in out:
            called = function_call(type_node)
            args = called[1] if called is not None and called[0] == "optional" else []
            out[key] = literal(args[1], f"the optional default of {key}") if len(args) > 1 else None
        out[key] = conform(type_node, out[key])
    return out


def root_values(blocks: list[Block], tfvars: list[tuple[str, Body]], parameters: Mapping[str, str],
                parse_value: Callable[[str], Tree | None]) -> dict[str, Any]:
    """The root module's variables: defaults, then each tfvars body in order, then --parameter."""
    declared = [b.labels[0] for b in blocks if b.labels]
    values: dict[str, Any] = {}
    for block in blocks:
        name = block.labels[0] if block.labels else ""
        default = block.body.attrs.get("default")
        values[name] = _default(default.expr, _default_scope(declared, name), name) if default else missing(name)
    for file, body in tfvars:
        for name, attr in body.attrs.items():
            if name in values:
                values[name] = literal(attr.expr, f"{file}: {name}")
    for name, text in parameters.items():
        if name in values:
            node = parse_value(text) if text.lstrip()[:1] in ("[", "{") else None
            values[name] = literal(node, f"--parameter {name}") if node is not None else text
    types = {b.labels[0]: b.body.attrs["type"].expr for b in blocks if b.labels and "type" in b.body.attrs}
    return {k: conform(types.get(k), v) for k, v in values.items()}


def module_values(blocks: list[Block], given: Mapping[str, Any]) -> dict[str, Any]:
    """A child module's variables: what the module call passes, else each default."""
    declared = [b.labels[0] for b in blocks if b.labels]
    values: dict[str, Any] = {}
    for block in blocks:
        name = block.labels[0] if block.labels else ""
        default = block.body.attrs.get("default")
        nullable = "nullable" not in block.body.attrs or literal(block.body.attrs["nullable"].expr, "nullable") \
            is not False
        if name in given and (given[name] is not None or nullable):  # a null passed stays null (Terraform)
            value = given[name]
        elif default is not None:
            value = _default(default.expr, _default_scope(declared, name), name)
        else:
            value = given.get(name, Unresolved(f"the module call does not pass variable {name}, which has no "
                                               "default: add it to the module block", f"unresolved-{name}"))
        type_attr = block.body.attrs.get("type")
        values[name] = conform(type_attr.expr if type_attr else None, value)
    return values
