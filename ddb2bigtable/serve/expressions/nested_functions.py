"""`if_not_exists` inside another function of an UpdateExpression, which DynamoDB takes and
moto's update grammar does not (`SET a = list_append(if_not_exists(a, :empty), :new)`, the
usual way to append to a list that may not exist yet, was a syntax error).

Such an inner call reads only the item as it is, so it is folded into a value before moto
parses the expression: `if_not_exists(path, operand)` becomes a placeholder of its own
holding the path's value in the item, or else the operand's (a value, or another path of
the item), innermost first. Calls at the top of an action (`SET a = if_not_exists(a, :v)`)
are moto's to evaluate, as before.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ..errors import validation

_CALL = re.compile(r"if_not_exists\s*\(\s*([^(),]+?)\s*,\s*([^(),]+?)\s*\)")
Resolve = Callable[[str], Any]  # an operand's text (`:v`, `a.b`, `#n`) -> its wire value, None if missing


def _depth(text: str, end: int) -> int:
    return text.count("(", 0, end) - text.count(")", 0, end)


def folded(expression: str, resolve: Resolve) -> tuple[str, dict[str, Any]]:
    """The expression with every nested `if_not_exists` replaced by a value placeholder, and
    those placeholders' values."""
    values: dict[str, Any] = {}
    while True:
        inner = next((m for m in _CALL.finditer(expression) if _depth(expression, m.start()) > 0), None)
        if inner is None:
            return expression, values
        found = resolve(inner.group(1))
        value = found if found is not None else resolve(inner.group(2))
        if value is None:
            raise validation("The provided expression refers to an attribute that does not exist in the item")
        placeholder = f":nested_{len(values)}"
        values[placeholder] = value
        expression = expression[:inner.start()] + placeholder + expression[inner.end():]
