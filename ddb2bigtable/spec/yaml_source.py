"""YAML that remembers where every value came from.

PyYAML's `safe_load` throws positions away and silently keeps the last of two duplicate
keys. Specs are reviewed by people who need `file:line:column` for every complaint, and
a duplicated key is nearly always a merge accident, so we compose the node graph (which
keeps marks) and build plain Python data ourselves, noting each value's position. What a
file may be before it is built (size, depth, alias expansion, duplicate keys) is
file_limits.py's.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .errors import Problem
from .file_limits import (
    COMPOSER,
    MAX_DEPTH,
    MERGE_TAG,
    alias_budget,
    depth_problem,
    duplicate_key,
    node_start,
    read_text,
    too_far,
    written_nodes,
)

JsonPath = tuple[str | int, ...]


@dataclass
class YamlDocument:
    """Plain data (dicts, lists, scalars) plus 1-based positions keyed by JSON path.

    `positions` holds where each value starts; `key_positions` where each mapping key
    sits, because "unknown key" should point at the key, not at its value.
    """

    file: str
    data: Any
    positions: dict[JsonPath, tuple[int, int]] = field(default_factory=dict)
    key_positions: dict[JsonPath, tuple[int, int]] = field(default_factory=dict)

    def locate(self, path: JsonPath, *, key: bool = False) -> tuple[int, int]:
        """Where `path` was written, or its nearest written ancestor.

        With `key`, keys are preferred: a missing `peak` is reported at `source:`, the
        line a user will edit, rather than at the first key inside `source`.
        """
        for end in range(len(path), -1, -1):
            if key and path[:end] in self.key_positions:
                return self.key_positions[path[:end]]
            if path[:end] in self.positions:
                return self.positions[path[:end]]
        return (1, 1)

    def value_at(self, path: JsonPath) -> Any:
        """The data at `path`, or None where the path does not exist."""
        value = self.data
        for part in path:
            try:
                value = value[part]
            except (KeyError, IndexError, TypeError):
                return None
        return value

    def problem(self, path: JsonPath, message: str, *, key: bool = False,
                at: tuple[int, int] | None = None) -> Problem:
        """A problem at `at`, or where `path` (its key when `key`) was written."""
        line, column = at or self.locate(path, key=key)
        return Problem(self.file, line, column, format_path(path), message)


def format_path(path: JsonPath) -> str:
    """`tables[0].source.replicas[1].region`, the form users see in messages."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def parse_yaml(path: Path, file: str | None = None) -> tuple[YamlDocument | None, list[Problem]]:
    """Read and compose one YAML file; problems instead of exceptions.

    `file` is the name used in messages (defaults to `str(path)`). An empty file, a
    syntax error, more than one document or a duplicate key yields problems; the document
    is None only when nothing usable could be built.
    """
    file = file or str(path)
    text, problem = read_text(path, file)
    if problem:
        return None, [problem]
    return compose_text(text, file)


def compose_text(text: str, file: str) -> tuple[YamlDocument | None, list[Problem]]:
    """`parse_yaml` on text already read (a JSON file read once for its exact values and
    composed here for their lines and columns)."""
    try:
        if too_deep := depth_problem(text, file):
            return None, [too_deep]
        node = yaml.compose(text, Loader=COMPOSER)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        what = "; ".join(p for p in (exc.context, exc.problem) if p)
        return None, [Problem(file, line, column, "", f"YAML syntax error: {what}{_syntax_hint(exc, text)}")]
    except yaml.YAMLError as exc:
        return None, [Problem.about(file, "", f"YAML error: {exc}")]
    if node is None:
        return None, [Problem(file, 1, 1, "", "the file is empty (nothing but comments or blank lines); "
                              "expected a YAML mapping")]
    written = written_nodes(node)
    builder = _Builder(YamlDocument(file, None), budget=alias_budget(written))
    try:
        builder.doc.data = builder.build(node, ())
    except _TooLarge as too_large:
        line, column = node_start(too_large.node)
        return None, [Problem(file, line, column, format_path(too_large.path), too_far(written, builder.budget))]
    return builder.doc, builder.problems


def _syntax_hint(exc: yaml.MarkedYAMLError, text: str) -> str:
    """What the parser's words usually mean for a hand-edited spec."""
    problem = exc.problem or ""
    mark = exc.problem_mark
    lines = text.splitlines()
    at = lines[mark.line][mark.column:mark.column + 1] if mark and mark.line < len(lines) else ""
    if at == "\t" or "'\\t'" in problem:
        return " (a tab: YAML indents with spaces only; replace the tab with spaces)"
    if any(words in problem for words in ("did not find expected key", "expected <block end>",
                                          "mapping values are not allowed here", "did not find expected '-'")):
        return (" (usually indentation: the keys of one mapping start in the same column, and a nested "
                "value is indented further than its key)")
    return ""


class _TooLarge(Exception):
    def __init__(self, path: JsonPath, node: yaml.Node):
        self.path, self.node = path, node


class _Builder:
    """Turns composed nodes into data, recording positions and duplicate-key problems."""

    def __init__(self, doc: YamlDocument, budget: int):
        self.doc = doc
        self.budget = budget
        self.built = 0
        self.problems: list[Problem] = []
        self._scalars = yaml.SafeLoader("")  # only its scalar constructors are used
        self._active: set[int] = set()  # node ids on the current path, to stop alias cycles

    def build(self, node: yaml.Node, path: JsonPath) -> Any:
        self.built += 1
        if self.built > self.budget:
            raise _TooLarge(path, node)
        self.doc.positions.setdefault(path, node_start(node))
        if isinstance(node, yaml.ScalarNode):
            return self._scalar(node, path)
        if len(path) >= MAX_DEPTH:
            self.problems.append(self.doc.problem(path, f"nested deeper than {MAX_DEPTH} levels; a spec's values "
                                                        f"nest a few levels at most"))
            return None
        if id(node) in self._active:
            self.problems.append(self.doc.problem(path, "an alias refers to its own anchor; "
                                                        "YAML data here must not be recursive"))
            return None
        self._active.add(id(node))
        try:
            if isinstance(node, yaml.SequenceNode):
                return [self.build(item, (*path, i)) for i, item in enumerate(node.value)]
            assert isinstance(node, yaml.MappingNode)  # the composer makes scalars, sequences, mappings
            return self._mapping(node, path)
        finally:
            self._active.discard(id(node))

    def _scalar(self, node: yaml.ScalarNode, path: JsonPath) -> Any:
        try:
            value = self._scalars.construct_object(node)
        except (yaml.YAMLError, ValueError) as exc:  # unknown `!tag`, `!!int abc`, ...
            what = getattr(exc, "problem", None) or str(exc)
            self.problems.append(self.doc.problem(path, f"cannot read this value: {what}", at=node_start(node)))
            return node.value
        # Dates are text in a spec (and in JSON Schema); YAML 1.1 would make them objects.
        return node.value if isinstance(value, (datetime.date, datetime.datetime)) else value

    def _mapping(self, node: yaml.MappingNode, path: JsonPath) -> dict[str, Any]:
        out: dict[str, Any] = {}
        merged: list[yaml.Node] = []
        for key_node, value_node in node.value:
            if key_node.tag == MERGE_TAG:
                merged.extend(value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node])
                continue
            key = self._scalar(key_node, path) if isinstance(key_node, yaml.ScalarNode) else None
            if not isinstance(key, str):
                shown = key_node.value if isinstance(key_node, yaml.ScalarNode) else "a collection"
                self.problems.append(self.doc.problem(
                    path, f"keys must be text, got {shown!r}: put the key in quotes", at=node_start(key_node)))
                continue
            if key in out:
                first = self.doc.key_positions[(*path, key)]
                self.problems.append(self.doc.problem((*path, key), duplicate_key(key, first[0]),
                                                      at=node_start(key_node)))
                continue
            self.doc.key_positions.setdefault((*path, key), node_start(key_node))
            out[key] = self.build(value_node, (*path, key))
        for source in merged:  # `<<: *anchor` fills keys the mapping does not set itself
            if not isinstance(source, yaml.MappingNode):
                self.problems.append(self.doc.problem(path, "`<<` merges only mappings"))
                continue
            for key, value in self._mapping(source, path).items():
                out.setdefault(key, value)
        return out


def unquoted(text: str) -> Any:
    """What YAML would read `text` as, written without quotes (`'1'` -> 1, `'true'` -> True).

    A schema error on a text value uses it to tell a quoted number (`item_size_kb: "1"`,
    fixed by removing the quotes) from a word, with the same resolver the spec is read with.
    """
    loader = yaml.SafeLoader("")
    try:
        return loader.construct_object(yaml.ScalarNode(loader.resolve(yaml.ScalarNode, text, (True, False)), text))
    except (yaml.YAMLError, ValueError):
        return text
