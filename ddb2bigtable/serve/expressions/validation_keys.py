"""A Query's KeyConditionExpression: read from moto's condition tree, refused where DynamoDB
refuses it.

moto's key-condition parser took the attribute first only (`:v < c` was refused), let
one key carry two conditions (`c >= :a AND c >= :b`) and answered most mistakes with
"Query condition missed key schema element". Here the expression goes through the same
parse and checks as a ConditionExpression (expressions.parsed_condition: syntax, function
names, operand types, BETWEEN's bounds), then its tree must be what DynamoDB allows: one
or two conditions joined by AND, each comparing one top-level key attribute with values
(either side), `=` on the partition key, `=`, `<`, `<=`, `>`, `>=`, BETWEEN or
begins_with on the sort key. The messages are DynamoDB Local 1.25.1's (checked
2026-11-25).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from moto.dynamodb import comparisons as moto

from ..errors import ServeError, validation

FIELD = "KeyConditionExpression"
_FLIPPED = {"=": "=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
_OPERATORS = {"=": "EQ", "<": "LT", "<=": "LE", ">": "GT", ">=": "GE"}
_NAMED = {moto.FuncIn: "IN", moto.FuncAttrExists: "attribute_exists", moto.FuncContains: "contains",
          moto.FuncAttrType: "attribute_type", moto.OpOr: "OR", moto.OpNot: "NOT"}


@dataclass(frozen=True)
class KeyCondition:
    partition: tuple[str, Any]  # (attribute, wire value)
    sort: tuple[str, str, list[Any]] | None  # (attribute, EQ|LT|LE|GT|GE|BETWEEN|BEGINS_WITH, wire values)


def _operator(name: str) -> ServeError:
    return validation(f"Invalid operator used in {FIELD}: {name}")


def _conditions(node: Any) -> list[Any]:
    if isinstance(node, moto.OpAnd):
        return _conditions(node.lhs) + _conditions(node.rhs)
    return [node]


def _one(node: Any) -> tuple[str, str, list[Any]]:
    """(attribute, operator, wire values) of one condition of the key condition."""
    if type(node) in _NAMED:
        raise _operator(_NAMED[type(node)])
    path: Any
    values: list[Any]
    if isinstance(node, moto.FuncBetween):
        path, op, values = node.attr, "BETWEEN", [node.start, node.end]
    elif isinstance(node, moto.FuncBeginsWith):
        path, op, values = node.attr, "BEGINS_WITH", [node.substr]
    elif isinstance(node, moto.Op) and node.OP in _FLIPPED:
        path, op, values = node.lhs, _OPERATORS[node.OP], [node.rhs]
        if not isinstance(path, moto.AttributePath):
            path, op, values = node.rhs, _OPERATORS[_FLIPPED[node.OP]], [node.lhs]
    elif isinstance(node, moto.Op):
        raise _operator(node.OP)
    else:
        raise _operator(type(node).__name__)
    operands = [path, *values]
    if any(isinstance(o, moto.FuncSize) for o in operands):
        raise validation(f"{FIELD}s cannot contain nested operations")
    paths = [o for o in operands if isinstance(o, moto.AttributePath)]
    if len(paths) > 1:
        raise validation(f"Invalid condition in {FIELD}: Multiple attribute names used in one condition")
    if not paths:
        raise validation(f"Invalid condition in {FIELD}: No key attribute specified")
    if len(path.path) > 1:
        raise validation(f"{FIELD}s cannot have conditions on nested attributes")
    return str(path.path[0]), op, [{v.type: v.value} for v in values]


def key_condition(tree: Any, keys: tuple[str, ...]) -> KeyCondition:
    """The partition key's value and the sort key's comparison the parsed key condition holds."""
    parts = [_one(p) for p in _conditions(tree)]
    found = {name: (op, values) for name, op, values in parts}
    if len(found) < len(parts):
        raise validation(f"{FIELD}s must only contain one condition per key")
    if len(parts) > 2:
        raise validation("Conditions can be of length 1 or 2 only")
    if keys[0] not in found or any(n not in keys for n in found):
        raise validation(f"Query condition missed key schema element: {keys[0] if keys[0] not in found else keys[-1]}")
    op, values = found[keys[0]]
    if op != "EQ":
        raise validation("Query key condition not supported")
    sort = (keys[1], *found[keys[1]]) if len(keys) > 1 and keys[1] in found else None
    return KeyCondition((keys[0], values[0]), sort)


def no_empty_values(found: KeyCondition, index: str | None = None) -> KeyCondition:
    """The key condition, refused where a value is an empty string or binary as DynamoDB
    refuses it (no key holds one, so `c > :empty` is a mistake, not every item): checked
    on every request, since a cached parse (parsed_keys) puts each request's own values in."""
    sort = [(found.sort[0], v) for v in found.sort[2]] if found.sort else []
    for name, value in [found.partition, *sort]:
        tag, inner = next(iter(value.items()), (None, None)) if isinstance(value, dict) else (None, None)
        if tag in ("S", "B") and inner in ("", b""):
            kind = "string" if tag == "S" else "binary"
            where = (f"A value specified for a secondary index key is not supported. The AttributeValue for a key "
                     f"attribute cannot contain an empty {kind} value. IndexName: {index}, IndexKey: {name}"
                     if index else f"The AttributeValue for a key attribute cannot contain an empty {kind} value. "
                     f"Key: {name}")
            raise validation(f"One or more parameter values are not valid. {where}")
    return found
