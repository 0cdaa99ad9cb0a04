"""Checks DynamoDB makes on an UpdateExpression that moto's update validator does not make,
or makes in other words, run on the tree moto's parser returns before its validator.

- an empty expression is refused ("The expression can not be empty;");
- the paths the actions write may not overlap (`SET a.b = :v, a.b.c = :w`) or conflict
  (`SET a.b = :v, a[1] = :w`), as in a projection (validation.check_paths);
- a key attribute may be read (`SET n = p`) but not written: moto refused any path that
  names a key, read or written, so serve asks moto for no key check and makes its own;
- a nested path written must lead into a map (`a.b`) or a list (`a[1]`) the item holds:
  `SET a.c = :v` on a string `a`, or with no `a`, is refused (moto set or failed on it);
- list_append's result may not be another function's argument (moto's grammar nests it);
- `+` and `-` take two numbers: a value of another type written in the request is
  refused before any item is read, and so is `a + b + c` (a syntax error in DynamoDB).

Messages are DynamoDB Local 1.25.1's (checked 2026-11-25).
"""

from __future__ import annotations

import functools
from typing import Any

from moto.dynamodb.parsing import ast_nodes

from ..errors import validation
from .conditions import follow
from .validation import check_list_indexes, check_paths, refused

ast: Any = ast_nodes  # moto marks this module `# type: ignore`, so mypy knows none of its classes

FIELD = "UpdateExpression"
ACTIONS = (ast.UpdateExpressionSetAction, ast.UpdateExpressionRemoveAction, ast.UpdateExpressionAddAction,
           ast.UpdateExpressionDeleteAction)


def check_text(expression: Any) -> None:
    if not isinstance(expression, str) or not expression.strip():
        raise refused(FIELD, "The expression can not be empty;")
    check_list_indexes(FIELD, expression)


@functools.lru_cache(maxsize=4096)
def _nodes(node: Any, kinds: tuple[type, ...]) -> tuple[Any, ...]:
    """The nodes of those kinds under `node`, found once per tree: parsing.py hands the one
    tree it keeps per text, which nothing changes (moto's isinstance checks on its abstract
    node classes made these walks a tenth of an UpdateItem's time)."""
    found: tuple[Any, ...] = (node,) if isinstance(node, kinds) else ()
    for child in getattr(node, "children", None) or []:
        if isinstance(child, ast.Node):
            found += _nodes(child, kinds)
    return found


def _path(node: Any, names: dict[str, str]) -> list[str | int]:
    path: list[str | int] = []
    for step in node.children:
        if isinstance(step, ast.ExpressionAttribute):
            path.append(step.get_attribute_name())
        elif isinstance(step, ast.ExpressionAttributeName):
            placeholder = step.get_attribute_name_placeholder()
            path.append(names.get(placeholder, placeholder))
        elif isinstance(step, ast.ExpressionSelector):
            path.append(step.get_index())
    return path


def _arithmetic(node: Any) -> bool:
    return (isinstance(node, ast.UpdateExpressionValue) and len(node.children) == 3
            and isinstance(node.children[1], ast.ExpressionValueOperator))


def targets(tree: Any, names: dict[str, str]) -> list[list[str | int]]:
    """The document paths the actions of a parsed UpdateExpression write."""
    return [_path(action.children[0], names) for action in _nodes(tree, ACTIONS)]


def check_tree(tree: Any, names: dict[str, str], values: dict[str, Any], keys: tuple[str, ...]) -> None:
    """The parsed expression's written paths and arithmetic, checked as DynamoDB checks them."""
    written = targets(tree, names)
    for target in written:
        if target and target[0] in keys:
            raise validation(f"One or more parameter values were invalid: Cannot update attribute {target[0]}. "
                             f"This attribute is part of the key")
    check_paths(FIELD, written)
    for function in _nodes(tree, (ast.UpdateExpressionFunction,)):
        for argument in function.children[1:]:
            if isinstance(argument, ast.UpdateExpressionFunction) and argument.children[0] == "list_append":
                raise refused(FIELD, "The function is not allowed to be used this way in an expression; function: "
                                     "list_append")
    for value in _nodes(tree, (ast.UpdateExpressionValue,)):
        if not _arithmetic(value):
            continue
        for side in (value.children[0], value.children[2]):
            if _arithmetic(side):
                raise refused(FIELD, f'Syntax error; token: "{value.children[1].children[0]}", near: one operator '
                                     f'after another (an operand of + and - is a value, a path or a function)')
            given = values.get(side.children[0]) if isinstance(side, ast.ExpressionAttributeValue) else None
            kind = next(iter(given), None) if isinstance(given, dict) else None
            if kind is not None and kind != "N":
                raise refused(FIELD, f"Incorrect operand type for operator or function; operator or function: "
                                     f"{value.children[1].children[0]}, operand type: {kind}")


def check_targets(tree: Any, names: dict[str, str], item: dict[str, Any]) -> None:
    """Each nested path the actions write leads into a map or a list the item holds."""
    for action in _nodes(tree, ACTIONS):
        target = _path(action.children[0], names)
        if len(target) < 2:
            continue
        parent = follow(item, target[:-1])
        if parent is None or parent[0] != ("L" if isinstance(target[-1], int) else "M"):
            raise validation("The document path provided in the update expression is invalid for update")
