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
from cfn_tools import load_yaml

from ..spec.errors import InputError, Problem

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
        return Problem(self.file, line, column, dotted(path), message)

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


def dotted(path: Path) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else (f".{p}" if i else p) for i, p in enumerate(path))


def _marks(node: yaml.Node, path: Path, out: dict[Path, tuple[int, int]]) -> None:
    out[path] = (node.start_mark.line + 1, node.start_mark.column + 1)
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode):
                _marks(value, (*path, key.value), out)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _marks(item, (*path, i), out)


def _locate(text: str) -> dict[Path, tuple[int, int]]:
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:  # JSON PyYAML cannot read (tabs): values still parse, lines fall back to 1
        return {}
    out: dict[Path, tuple[int, int]] = {}
    if root is not None:
        _marks(root, (), out)
    return out


def parse(file: str, text: str) -> Located:
    """`text` as JSON (when it starts with `{` or `[`) or CloudFormation-flavoured YAML."""
    if text.lstrip().startswith(("{", "[")):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as error:
            raise InputError([Problem(file, error.lineno, error.colno, "",
                                      f"not valid JSON: {error.msg}; fix the file or export it again")]) from None
    else:
        try:
            data = load_yaml(text)
        except yaml.MarkedYAMLError as error:
            mark = error.problem_mark or error.context_mark
            line, column = (mark.line + 1, mark.column + 1) if mark else (1, 1)
            raise InputError([Problem(file, line, column, "", f"not valid YAML: {error.problem or error}; "
                                      "fix the file (a CloudFormation template must load in `cfn-flip`)")]) from None
        except Exception as error:  # cfn-flip raises plain exceptions for malformed `!` tags
            raise InputError([Problem.about(file, "", f"not a readable template: {error}")]) from None
    return Located(file, data, _locate(text))
