"""ConditionExpressions and FilterExpressions parsed once per text, their values bound per request.

moto's parser writes the request's values into the tree it returns, so a parse could not be
kept for the next request, and it took about 40 us of a conditional write's time (lexer,
parser, tree). An application sends few distinct texts with ever new values (`version =
:expected`), so each worker keeps, for up to CONDITIONS texts (least recently used dropped
first), the tree parsed with a marker in place of each value: the string MARK followed by the
placeholder's name. Each request gets the kept tree with its own values put where the
markers are (`_bound`: the nodes above a marker copied, the rest shared; a tree without
values is shared whole, nothing reads it to change it). moto's parser reads a value's
kind, never its content (a value is one token wherever it stands), so the tree is the one
it would have built with the values; DynamoDB's checks that read values
(validation.check_tree) run on every request's bound tree, and a text that fails to parse
with markers is parsed again with the request's values, so its error is the one it was.
tests/serve/expressions/test_parsed_conditions.py compares bound trees with moto's own.
"""

from __future__ import annotations

import copy
import re
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from moto.dynamodb import comparisons as moto

CONDITIONS = 1024  # texts kept per worker
MARK = "\x00ddb2bigtable value "  # a kept tree's values are all markers: the parse is given nothing else
_VALUE = re.compile(r":[A-Za-z0-9_]+")
Parse = Callable[[str, str, dict[str, str], dict[str, Any]], Any]  # (field, text, names, values) -> tree
_trees: OrderedDict[tuple[Any, ...], tuple[Any, bool]] = OrderedDict()


def parsed(field: str, text: str, names: dict[str, str], values: dict[str, Any], parse: Parse) -> Any:
    """`parse(field, text, names, values)`'s tree, from the text's kept parse when there is one."""
    used = tuple(sorted({p for p in _VALUE.findall(text) if p in values}))
    key = (field, text, tuple(sorted(names.items())), used)
    kept = _trees.get(key)
    if kept is None:
        try:
            tree = parse(field, text, names, {p: {"S": MARK + p} for p in used})
        except Exception:  # noqa: BLE001 - the request's own parse says what is wrong, in its words
            return parse(field, text, names, values)
        kept = _trees[key] = (tree, bool(used))
        if len(_trees) > CONDITIONS:
            _trees.popitem(last=False)
    else:
        _trees.move_to_end(key)
    tree, marked = kept
    return _bound(tree, values) if marked else tree


def _bound(node: Any, values: dict[str, Any]) -> Any:
    """The tree with the request's values where the markers are; nodes without one shared."""
    if isinstance(node, moto.AttributeValue):
        if node.type == "S" and isinstance(node.value, str) and node.value.startswith(MARK):
            return moto.AttributeValue(values[node.value[len(MARK):]])
        return node
    if isinstance(node, list | tuple):
        return type(node)(_bound(n, values) for n in node)
    if not isinstance(node, moto.Op | moto.Func):
        return node
    bound = copy.copy(node)
    for name, value in vars(node).items():
        if isinstance(value, moto.Op | moto.Func | moto.AttributeValue | list | tuple):
            setattr(bound, name, _bound(value, values))
    return bound
