"""The common UpdateExpressions applied directly, without moto's validator and executor.

Most UpdateItems an application sends change top-level attributes: `SET a = :v`, `SET n =
n + :d`, `SET c = if_not_exists(c, :z) + :one`, `REMOVE a`, `ADD n :d`, `ADD s :set`,
`DELETE s :set`. moto's update validator and executor (parsing.update) take about 0.3 ms
for one such action on a small item (a deep copy of the tree, ten traversals of it, the
item wrapped in its own types and sized on every attribute set), more than the rest of
serve's own time on a GetItem. Here such an expression is compiled once per text into a
few tuples (`plan`) and applied to the item as a dict (`apply`), each step doing what
moto's does on the path where nothing is refused: its sums are moto's own (`DynamoType`
addition, so numbers are written alike), ADD of a set appends the new members in moto's
order, DELETE of a set's last member removes the attribute.

Anything else answers None and parsing.update runs moto as before, so every refusal keeps
moto's and DynamoDB's words: an expression with a nested path, a list index, list_append,
several clauses of one kind, a plain name that is a reserved word (moto refuses it); and at
apply time an undefined `#name` or `:value`, an operand path the item lacks outside
if_not_exists, `+` or `-` of anything but two numbers, ADD of a value that is neither a
number nor a non-empty set or onto an attribute of another type, DELETE of a non-set or
from another type, and an item large enough that moto's 405,000-byte check could answer.
tests/serve/expressions/test_direct_updates.py checks `apply` against moto on generated
items and expressions.
"""

from __future__ import annotations

import decimal
import functools
import pickle
from dataclasses import dataclass
from typing import Any

import orjson
from moto.dynamodb.models.dynamo_type import DynamoType
from moto.dynamodb.parsing import ast_nodes
from moto.dynamodb.parsing.reserved_keywords import ReservedKeywords

ast: Any = ast_nodes  # moto marks this module `# type: ignore`, so mypy knows none of its classes

# The decimal context numbers are added and subtracted in, here and in moto's executor
# (parsing.update): exact for any two DynamoDB numbers (1E-130 to 9.99...E+125: at most 257
# digits), so a result past 38 significant digits is refused by the item's check
# (wire.py) as DynamoDB refuses it, never rounded first. Python's default context keeps 28
# digits: a 38-digit decimal plus 1 was stored rounded, and 38 nines plus 0.1 as 1E+38.
EXACT = decimal.Context(prec=300)

# moto's LimitedSizeDict refuses an item past 405,000 of its bytes; an item whose JSON (never
# fewer bytes than moto counts) stays below this after every step cannot reach it
SIZE_BOUND = 400_000
_RESERVED = frozenset(word.upper() for word in ReservedKeywords.get_reserved_keywords())
_CLAUSES = {ast.UpdateExpressionSetClause: "SET", ast.UpdateExpressionRemoveClause: "REMOVE",
            ast.UpdateExpressionAddClause: "ADD", ast.UpdateExpressionDeleteClause: "DELETE"}
_SETS = ("SS", "NS", "BS")

Name = tuple[str, str]  # ("attr", name) or ("name", "#placeholder")
Operand = tuple[Any, ...]  # ("value", ":v"), ("path", Name), ("ine", Name, Operand), ("+" | "-", Operand, Operand)
Action = tuple[Any, ...]  # ("SET", Name, Operand), ("REMOVE", Name), ("ADD" | "DELETE", Name, ":v")


class _Unsupported(Exception):
    """A construct the direct path leaves to moto."""


def _children(node: Any) -> list[Any]:
    return list(getattr(node, "children", None) or [])


def _actions(node: Any, seen: dict[str, int]) -> list[Any]:
    """The tree's actions in the expression's order, each clause kind counted in `seen`."""
    found: list[Any] = []
    for child in _children(node):
        kind = next((k for cls, k in _CLAUSES.items() if isinstance(child, cls)), None)
        if kind is not None:
            seen[kind] = seen.get(kind, 0) + 1
        if isinstance(child, ast.UpdateExpressionSetAction | ast.UpdateExpressionRemoveAction
                      | ast.UpdateExpressionAddAction | ast.UpdateExpressionDeleteAction):
            found.append(child)
        elif isinstance(child, ast.Node):
            found += _actions(child, seen)
    return found


def _name(path: Any) -> Name:
    """A one-step path's attribute; anything longer is moto's."""
    steps = _children(path)
    if not isinstance(path, ast.UpdateExpressionPath) or len(steps) != 1:
        raise _Unsupported
    step = steps[0]
    if isinstance(step, ast.ExpressionAttributeName):
        return "name", step.get_attribute_name_placeholder()
    if isinstance(step, ast.ExpressionAttribute) and step.get_attribute_name().upper() not in _RESERVED:
        return "attr", step.get_attribute_name()
    raise _Unsupported


def _simple(node: Any) -> Operand:
    if isinstance(node, ast.ExpressionAttributeValue):
        return "value", node.get_value_name()
    if isinstance(node, ast.UpdateExpressionPath):
        return "path", _name(node)
    if isinstance(node, ast.UpdateExpressionFunction) and node.get_function_name() == "if_not_exists":
        arguments = _children(node)[1:]
        if len(arguments) == 2 and isinstance(arguments[0], ast.UpdateExpressionPath):
            second = _simple(arguments[1])
            if second[0] in ("value", "path"):
                return "ine", _name(arguments[0]), second
    raise _Unsupported


def _operand(node: Any) -> Operand:
    parts = _children(node)
    if not isinstance(node, ast.UpdateExpressionValue):
        return _simple(node)
    if len(parts) == 1:
        return _simple(parts[0])
    if len(parts) == 3 and isinstance(parts[1], ast.ExpressionValueOperator) \
            and parts[1].get_operator() in ("+", "-"):
        return parts[1].get_operator(), _simple(parts[0]), _simple(parts[2])
    raise _Unsupported


def _action(node: Any) -> Action:
    parts = _children(node)
    target = _name(parts[0])
    if isinstance(node, ast.UpdateExpressionSetAction):
        return "SET", target, _operand(parts[1])
    if isinstance(node, ast.UpdateExpressionRemoveAction):
        return "REMOVE", target
    if isinstance(parts[1], ast.ExpressionAttributeValue):
        return ("ADD" if isinstance(node, ast.UpdateExpressionAddAction) else "DELETE"), target, \
            parts[1].get_value_name()
    raise _Unsupported


@dataclass(frozen=True)
class Plan:
    """An UpdateExpression's actions, and every `#name` and `:value` it names: moto refuses an
    undefined one even where no action reads it (`if_not_exists(a, :v)` on an item with `a`)."""

    actions: tuple[Action, ...]
    names: frozenset[str]
    values: frozenset[str]


def _placeholders(node: Any, kind: Any) -> frozenset[str]:
    found = {node.children[0]} if isinstance(node, kind) else set()
    for child in _children(node):
        if isinstance(child, ast.Node):
            found |= _placeholders(child, kind)
    return frozenset(found)


def plan(tree: Any) -> Plan | None:
    """moto's parsed UpdateExpression as the direct path's actions, None where moto must run it."""
    seen: dict[str, int] = {}
    try:
        actions = tuple(_action(node) for node in _actions(tree, seen))
    except _Unsupported:
        return None
    if not actions or any(count != 1 for count in seen.values()):
        return None
    return Plan(actions, _placeholders(tree, ast.ExpressionAttributeName),
                _placeholders(tree, ast.ExpressionAttributeValue))


@functools.lru_cache(maxsize=1024)
def cached_plan(pickled: bytes) -> Plan | None:
    """`plan` once per parsed text (parsing.py hands moto's pickled tree, cached per text)."""
    return plan(pickle.loads(pickled))  # noqa: S301 - serve's own pickle of moto's tree, never a request's


def _operand_value(operand: Operand, item: dict[str, Any], names: dict[str, str],
                   values: dict[str, Any]) -> dict[str, Any]:
    kind = operand[0]
    if kind == "value":
        value = values.get(operand[1])
    elif kind == "path":
        value = item.get(_attribute(operand[1], names))
    elif kind == "ine":
        value = item.get(_attribute(operand[1], names))
        if value is None:
            value = _operand_value(operand[2], item, names, values)
    else:
        left, right = (_operand_value(side, item, names, values) for side in operand[1:])
        if "N" not in left or "N" not in right:
            raise _Unsupported  # moto names the operand's type
        value = {"N": _arithmetic(left, right, kind)}
    if value is None:
        raise _Unsupported  # undefined or missing: moto's words
    return value


def _arithmetic(left: dict[str, Any], right: dict[str, Any], kind: str) -> str:
    """moto's sum or difference. A number its arithmetic cannot read (`1E+3`: it calls int())
    is left to moto's path, which refuses the request in moto's order (a missing attribute
    elsewhere in the expression is named first)."""
    try:
        with decimal.localcontext(EXACT):
            total = DynamoType(left) + DynamoType(right) if kind == "+" else DynamoType(left) - DynamoType(right)
    except (ValueError, ArithmeticError):
        raise _Unsupported from None
    return total.value


def _attribute(name: Name, names: dict[str, str]) -> str:
    if name[0] == "attr":
        return name[1]
    resolved = names.get(name[1])
    if resolved is None:
        raise _Unsupported
    return resolved


def _added(current: dict[str, Any] | None, value: dict[str, Any]) -> dict[str, Any]:
    """ADD's result as moto's AddExecutor makes it."""
    (tag, inner), = value.items()
    if tag == "N":
        existing = current if current is not None else {"N": "0"}
        if "N" not in existing:
            raise _Unsupported
        return {"N": _arithmetic(existing, value, "+")}
    if tag not in _SETS or not inner or (current is not None and tag not in current):
        raise _Unsupported
    members = list(current[tag]) if current is not None else []
    for member in inner:
        if member not in members:
            members.append(member)
    return {tag: members}


def _deleted(current: dict[str, Any], value: dict[str, Any]) -> dict[str, Any] | None:
    """DELETE's result as moto's DeleteExecutor makes it (None: the attribute goes)."""
    (tag, inner), = value.items()
    if tag not in _SETS or tag not in current:
        raise _Unsupported
    members = list(current[tag])
    for member in inner:
        if member in members:
            members.remove(member)
    return {tag: members} if members else None


def apply(planned: Plan, item: dict[str, Any], names: dict[str, str],
          values: dict[str, Any]) -> dict[str, Any] | None:
    """The item (wire form, not changed) after the actions, as moto's executor leaves it; None
    where moto must run (it refuses, or the item is near moto's size check). Operands read the
    item as it was, as moto's validator resolves them before any action runs; the actions'
    paths are distinct (validation_updates.check_tree), so their order does not matter."""
    actions = planned.actions
    if not (planned.names <= names.keys() and planned.values <= values.keys()):
        return None
    copies = sum(1 for a in actions if a[0] == "SET" and a[2][0] != "value")
    if (len(orjson.dumps(item)) * (1 + copies) + len(orjson.dumps(values)) * (1 + len(actions))
            + 64 * len(actions)) > SIZE_BOUND:
        return None
    new = dict(item)
    try:
        for action in actions:
            target = _attribute(action[1], names)
            if action[0] == "SET":
                value = _operand_value(action[2], item, names, values)
                new[target] = value if action[2][0] in ("value", "+", "-") else orjson.loads(orjson.dumps(value))
            elif action[0] == "REMOVE":
                new.pop(target, None)
            else:
                given = values.get(action[2])
                if given is None:
                    raise _Unsupported
                if action[0] == "ADD":
                    new[target] = _added(item.get(target), given)
                elif target in item:
                    kept = _deleted(item[target], given)
                    if kept is None:
                        del new[target]
                    else:
                        new[target] = kept
                elif next(iter(given)) not in _SETS:
                    raise _Unsupported  # moto refuses a DELETE of a non-set even on a missing attribute
    except _Unsupported:
        return None
    return new
