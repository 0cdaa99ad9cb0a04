"""Document paths applied to an item: what a ProjectionExpression (parsing.projection) or
ReturnValues UPDATED_* (parsing.written_paths) keeps of it, in DynamoDB's shape."""

from __future__ import annotations

from typing import Any

from ..wire import WireItem

Path = list[str | int]  # a document path: attribute names and list indexes, `a.b[2]` -> ['a', 'b', 2]


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
