"""Condition and filter expressions evaluated with DynamoDB's semantics on the tree moto parses.

moto's parser (parsing.py) builds the tree; its own `expr` methods compare Python
values with the DynamoDB types dropped, which answers differently from DynamoDB: a
number compared with a string raised a TypeError (DynamoDB: the comparison is false),
`BOOL true = N 1` held (Python's True == 1), `a <> b` with both missing was false,
begins_with and contains never matched binary, size() of a number failed the request.
This module walks the same tree and evaluates it on typed values instead: two values are
equal only with the same type, `<`, `<=`, `>`, `>=` and BETWEEN order numbers, strings
and binary of one type and are false otherwise, size() is undefined (every comparison
with it false) on numbers, booleans and nulls (AWS, "Condition expressions: comparison
operators and functions",
https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.OperatorsAndFunctions.html,
read 2026-11-25).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from moto.dynamodb import comparisons as moto

from ...codec.scalars import binary_from_text
from ..errors import UnsupportedExpression

Typed = tuple[str, Any]  # (DynamoDB type, a comparable Python value)
ORDERED = ("N", "S", "B")


def typed(value: Any) -> Typed:
    """A wire value (binary as base64 text) as (type, comparable value): N as Decimal, B as
    bytes, sets as frozensets, lists as tuples, maps as dicts of typed values."""
    (tag, inner), = value.items()
    if tag == "N":
        return tag, Decimal(inner)
    if tag == "B":
        return tag, _bytes(inner)
    if tag in ("SS", "NS", "BS"):
        return tag, frozenset(typed({tag[0]: x})[1] for x in inner)
    if tag == "L":
        return tag, tuple(typed(v) for v in inner)
    if tag == "M":
        return tag, {k: typed(v) for k, v in inner.items()}
    return tag, inner


def _bytes(inner: Any) -> bytes:
    return bytes(inner) if isinstance(inner, bytes | bytearray) else binary_from_text(inner)


def follow(item: dict[str, Any] | None, path: list[str | int]) -> Typed | None:
    """The value at a document path (`a.b[2]`), None when the item or any step is missing."""
    if item is None or path[0] not in item:
        return None
    value = item[path[0]]
    for step in path[1:]:
        (tag, inner), = value.items()
        if isinstance(step, int) and tag == "L" and step < len(inner):
            value = inner[step]
        elif isinstance(step, str) and tag == "M" and step in inner:
            value = inner[step]
        else:
            return None
    return typed(value)


def operand(node: Any, item: dict[str, Any] | None) -> Typed | None:
    if isinstance(node, moto.AttributePath):
        return follow(item, node.path)
    if isinstance(node, moto.AttributeValue):
        return typed({node.type: node.value})
    if isinstance(node, moto.FuncSize):
        return size(operand(node.attr, item))
    raise UnsupportedExpression(f"operand {node!r}")


def size(value: Typed | None) -> Typed | None:
    """size(): characters of a string, bytes of a binary, members of a set, list or map;
    undefined (None) for other types and missing attributes."""
    if value is None or value[0] in ("N", "BOOL", "NULL"):
        return None
    return "N", Decimal(len(value[1]))


def _ordered(a: Typed | None, b: Typed | None) -> bool:
    return a is not None and b is not None and a[0] == b[0] and a[0] in ORDERED


_COMPARE = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}


def holds(node: Any, item: dict[str, Any] | None) -> bool:  # noqa: C901, PLR0911 - one branch per node kind
    """Whether the condition `node` (moto's parsed tree) holds on the item (None: no item)."""
    if isinstance(node, moto.OpDefault):
        return True
    if isinstance(node, moto.OpNot):
        return not holds(node.lhs, item)
    if isinstance(node, moto.OpAnd):
        return holds(node.lhs, item) and holds(node.rhs, item)
    if isinstance(node, moto.OpOr):
        return holds(node.lhs, item) or holds(node.rhs, item)
    if isinstance(node, moto.Op):
        a, b = operand(node.lhs, item), operand(node.rhs, item)
        if node.OP == "=":
            return a is not None and a == b
        if node.OP == "<>":
            return not (a is not None and a == b)
        return _ordered(a, b) and _COMPARE[node.OP](a[1], b[1])  # type: ignore[index]
    if isinstance(node, moto.FuncAttrExists):
        return operand(node.attr, item) is not None
    if isinstance(node, moto.FuncAttrType):
        found, wanted = operand(node.attr, item), operand(node.type, item)
        return found is not None and wanted is not None and found[0] == wanted[1]
    if isinstance(node, moto.FuncBetween):
        value, low, high = (operand(n, item) for n in (node.attr, node.start, node.end))
        return _ordered(value, low) and _ordered(value, high) and low[1] <= value[1] <= high[1]  # type: ignore[index]
    if isinstance(node, moto.FuncIn):
        value = operand(node.attr, item)
        return value is not None and any(value == operand(v, item) for v in node.possible_values)
    if isinstance(node, moto.FuncBeginsWith):
        value, prefix = operand(node.attr, item), operand(node.substr, item)
        return (value is not None and prefix is not None and value[0] == prefix[0] and value[0] in ("S", "B")
                and value[1].startswith(prefix[1]))
    if isinstance(node, moto.FuncContains):
        return contains(operand(node.attr, item), operand(node.operand, item))
    raise UnsupportedExpression(f"condition {node!r}")


def contains(container: Typed | None, member: Typed | None) -> bool:
    """contains(): a substring of a string, a byte string of a binary, a member of a set of
    its type, an element of a list."""
    if container is None or member is None:
        return False
    tag, inner = container
    if tag in ("S", "B"):
        return member[0] == tag and member[1] in inner
    if tag in ("SS", "NS", "BS"):
        return member[0] == tag[0] and member[1] in inner
    if tag == "L":
        return member in inner
    return False
