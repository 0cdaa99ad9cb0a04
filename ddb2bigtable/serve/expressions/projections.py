"""Document paths: a ProjectionExpression read into them (`projection`), and applied to an
item: what a ProjectionExpression or ReturnValues UPDATED_* (parsing.written_paths) keeps of
it, in DynamoDB's shape."""

from __future__ import annotations

import re
from typing import Any

from ..errors import validation as invalid
from ..wire import WireItem
from . import validation

Path = list[str | int]  # a document path: attribute names and list indexes, `a.b[2]` -> ['a', 'b', 2]
_PART = re.compile(r"([^\[\]]+)((?:\[\d+\])*)")


def projection(expression: str | None, names: validation.Names | None) -> list[Path] | None:
    """A ProjectionExpression as document paths (`a.b[2]` -> ['a', 'b', 2]); None: all."""
    if expression is None:
        return None
    names, _ = validation.checked_placeholders(names, None)
    if not isinstance(expression, str) or not expression.strip():
        raise invalid("Invalid ProjectionExpression: The expression can not be empty;")
    validation.check_list_indexes("ProjectionExpression", expression)
    paths: list[Path] = []
    for text in expression.split(","):
        path: Path = []
        for part in text.strip().split("."):
            found = _PART.fullmatch(part.strip())
            if not found:
                raise invalid(f"Invalid ProjectionExpression: Syntax error; token: {part!r}")
            name = found.group(1)
            if name.startswith("#"):
                if name not in names:
                    raise invalid(f"Value provided in ExpressionAttributeNames unused in expressions: "
                                  f"An expression attribute name used in the document path is not defined; "
                                  f"attribute name: {name}")
                name = names[name]
            path.append(name)
            path += [int(i) for i in re.findall(r"\d+", found.group(2))]
        paths.append(path)
    validation.check_paths("ProjectionExpression", paths)
    return paths


def project(item: WireItem, paths: list[Path] | None) -> WireItem:
    """The parts of the item the paths name (DynamoDB keeps the document's shape; list
    elements picked by index come back as a shorter list, in path order)."""
    if paths is None:
        return item
    out: WireItem = {}
    for path in paths:
        value = follow({"M": item}, path)
        if value is not None:
            _place(out, path, value)
    return out


def follow(value: Any, path: Path) -> Any:
    """The value at `path` in a wire value (None: not there)."""
    for step in path:
        (tag, inner), = value.items()
        if isinstance(step, int):
            if tag != "L" or step >= len(inner):
                return None
            value = inner[step]
        else:
            if tag != "M" or step not in inner:
                return None
            value = inner[step]
    return value


def _place(out: WireItem, path: Path, value: Any) -> None:
    node: Any = out  # the inner dict of a map, or the inner list of a list
    for step, following in zip(path, path[1:], strict=False):
        fresh: dict[str, Any] = {"L": []} if isinstance(following, int) else {"M": {}}
        if isinstance(node, dict):
            child = node.setdefault(step, fresh)
        else:  # elements picked from a list are appended in path order
            node.append(fresh)
            child = fresh
        node = next(iter(child.values()))
    if isinstance(node, dict):
        node[path[-1]] = value
    else:
        node.append(value)
