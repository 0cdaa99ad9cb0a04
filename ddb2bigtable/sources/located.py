"""A source file parsed, plus the line of every value in it, for messages a user can jump to.

Values come from the parsers made for the formats (`json`, and cfn-flip's YAML loader,
which turns CloudFormation's short forms `!Ref`, `!Sub`, `!GetAtt`, ... into their long
forms); lines come from PyYAML's composer, which reads both YAML and JSON and keeps a mark
on every node without needing to understand the `!` tags.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import yaml
from cfn_tools import CfnYamlLoader

from ..spec.errors import InputError, Problem, clip
from ..spec.file_limits import COMPOSER, MAX_DEPTH, depth_problem, node_problems, node_start
from ..spec.yaml_source import format_path

Path = tuple[str | int, ...]


@dataclass(frozen=True)
class Located:
    """Parsed data of one file and `(line, column)` (1-based) of each value by its path."""

    file: str
    data: Any
    marks: dict[Path, tuple[int, int]]

    def at(self, path: Path) -> tuple[int, int]:
        """The mark of `path`, or of its nearest ancestor that has one."""
        while path not in self.marks and path:
            path = path[:-1]
        return self.marks.get(path, (1, 1))

    def problem(self, path: Path, message: str) -> Problem:
        line, column = self.at(path)
        return Problem(self.file, line, column, format_path(path), message)

    def fail(self, path: Path, message: str) -> InputError:
        return InputError([self.problem(path, message)])

    def check(self, path: Path, value: Any, kinds: tuple[type, ...], what: str) -> Any:
        """`value` when it has one of `kinds` (a bool is not a number), else exit-2 input."""
        if isinstance(value, kinds) and (bool in kinds or not isinstance(value, bool)):
            return value
        names = " or ".join(_KIND_NAMES[k] for k in kinds)
        raise self.fail(path, f"{what} must be {names}, got {value!r}; fix the value in the file")

    def integer(self, path: Path, value: Any, what: str) -> int:
        """A whole number, also as text ("5"): CloudFormation parameters are text."""
        if isinstance(value, str) and value.strip().isdigit():
            return int(value)
        if isinstance(value, float) and value.is_integer():
            return int(value)
        return self.check(path, value, (int,), what)

    def number(self, path: Path, value: Any, what: str) -> float:
        if isinstance(value, str):
            try:
                return float(value)
            except ValueError:
                pass
        return float(self.check(path, value, (int, float), what))


_KIND_NAMES = {str: "text", int: "a whole number", float: "a number", bool: "true or false", dict: "a mapping",
               list: "a list"}


def walk(value: Any, path: Path) -> Any:
    """The value at `path` inside nested mappings and lists, or None when it is not there."""
    for part in path:
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and isinstance(part, int) and part < len(value):
            value = value[part]
        else:
            return None
    return value


def _marks(node: yaml.Node, path: Path, out: dict[Path, tuple[int, int]]) -> None:
    out[path] = node_start(node)
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode):
                _marks(value, (*path, key.value), out)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _marks(item, (*path, i), out)


def _compose(file: str, text: str) -> yaml.Node | None:
    """The node graph of `text`, under the spec reader's limits (depth first, on the
    parser's events; then aliases and duplicate keys): `InputError` past them, before
    anything is built or walked. Raises `yaml.MarkedYAMLError` where it is not YAML."""
    if too_deep := depth_problem(text, file):
        raise InputError([too_deep])
    root = yaml.compose(text, Loader=COMPOSER)
    if root is not None and (problems := node_problems(root, file)):
        raise InputError(problems)
    return root


def _marks_of(root: yaml.Node | None) -> dict[Path, tuple[int, int]]:
    out: dict[Path, tuple[int, int]] = {}
    if root is not None:
        _marks(root, (), out)
    return out


class _Duplicate(Exception):
    pass


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _Duplicate(key)
        out[key] = value
    return out


def _depth(data: Any) -> int:
    """How deep `data` nests (iterative: the value may be deeper than the stack)."""
    deepest, stack = 0, [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, (dict, list)):
            deepest = max(deepest, depth)
            stack.extend((v, depth + 1) for v in (value.values() if isinstance(value, dict) else value))
    return deepest


def _json(file: str, text: str) -> Located:
    """JSON, located through the YAML composer (which reads JSON and keeps marks); JSON
    that YAML cannot read (tab indents) is still parsed, checked by the same rules, unlocated."""
    try:
        root = _compose(file, text)
    except yaml.YAMLError:
        root = None
    try:
        data = json.loads(text, object_pairs_hook=_unique)
    except json.JSONDecodeError as error:
        raise InputError([Problem(file, error.lineno, error.colno, "",
                                  f"not valid JSON: {error.msg}; fix the file or export it again")]) from None
    except _Duplicate as duplicate:
        raise InputError([Problem.about(file, "", f"duplicate key {clip(str(duplicate))!r}; keep one of them")]) \
            from None
    except RecursionError:  # deeper than the parser's stack
        data = deep = None
    else:
        deep = _depth(data)
    if deep is None or deep > MAX_DEPTH:
        raise InputError([Problem.about(file, "", f"nested deeper than {MAX_DEPTH} levels; no template or table "
                                        "description nests that deep: fix the file")])
    return Located(file, data, _marks_of(root))


def parse(file: str, text: str) -> Located:
    """`text` as JSON (when it starts with `{` or `[`) or CloudFormation-flavoured YAML,
    under the spec reader's limits: nesting, aliases, duplicate keys (`InputError`)."""
    if text.lstrip().startswith(("{", "[")):
        return _json(file, text)
    try:
        root = _compose(file, text)
        data = CfnYamlLoader("").construct_document(root) if root is not None else None
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        raise InputError([Problem(file, line, column, "", f"not valid YAML: {error.problem or error}; "
                                  "fix the file (a CloudFormation template must load in `cfn-flip`)")]) from None
    except InputError:
        raise
    except Exception as error:  # cfn-flip raises plain exceptions for malformed `!` tags
        raise InputError([Problem.about(file, "", f"not a readable template: {error}")]) from None
    return Located(file, data, _marks_of(root))
