"""List element updates applied as DynamoDB applies them: every action against the list as
the item holds it.

moto's executor runs an UpdateExpression's actions one after the other, so in `REMOVE
a[1] SET a[3] = :v` the SET lands on the list the REMOVE already shifted
(`[2,3,4,5,6,7]` became `[2,4,5,17,7]`; DynamoDB gives `[2,4,17,6,7]`), and `SET a[84] =
:x, a[17] = :y` past the end appended in the expression's order where DynamoDB appends in
index order (AWS, "Update expressions", REMOVE and SET on list elements,
https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.UpdateExpressions.html,
read 2026-11-25). Here such an expression is run in two passes of moto's executor: first
every action but REMOVE, with the SETs of list elements in index order, then the REMOVEs
of list elements from the highest index down, so each index still names the element it
named in the original list. Expressions without list-index REMOVEs or several list-index
SETs run as written.
"""

from __future__ import annotations

import re

_CLAUSE = re.compile(r"(?<![#:\w])(SET|REMOVE|ADD|DELETE)\b", re.IGNORECASE)
_INDEXED = re.compile(r"^\s*(.*?)\[(\d+)\]\s*(=|$)", re.DOTALL)


def _top_level(text: str, separator: str = ",") -> list[str]:
    """`text` split at `separator` outside parentheses and brackets."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        if char in "([":
            depth += 1
        elif char in ")]":
            depth -= 1
        elif char == separator and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    return [*parts, text[start:].strip()]


def _clauses(expression: str) -> list[tuple[str, list[str]]]:
    """(SET|REMOVE|ADD|DELETE, its actions) in the expression's order."""
    marks = list(_CLAUSE.finditer(expression))
    return [(m.group(1).upper(), _top_level(expression[m.end():marks[i + 1].start() if i + 1 < len(marks) else None]))
            for i, m in enumerate(marks)]


def _index(action: str) -> int | None:
    found = _INDEXED.match(action)
    return int(found.group(2)) if found else None


def _order(action: str) -> int:
    """An action's list index, -1 for an action on anything else."""
    index = _index(action)
    return -1 if index is None else index


def passes(expression: str) -> list[str]:
    """The expression as the texts moto should execute one after the other."""
    clauses = _clauses(expression)
    removes = [a for kind, actions in clauses if kind == "REMOVE" for a in actions]
    sets = [a for kind, actions in clauses if kind == "SET" for a in actions]
    if not any(_index(a) is not None for a in removes) and sum(_index(a) is not None for a in sets) < 2:
        return [expression]
    first = [f"{kind} {', '.join(sorted(actions, key=_order) if kind == 'SET' else actions)}"
             for kind, actions in clauses if kind != "REMOVE"]
    ordered = sorted(removes, key=_order, reverse=True)
    return [text for text in (" ".join(first), f"REMOVE {', '.join(ordered)}" if removes else "") if text]
