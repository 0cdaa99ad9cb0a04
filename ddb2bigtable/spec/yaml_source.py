"""YAML that remembers where every value came from.

PyYAML's `safe_load` throws positions away and silently keeps the last of two duplicate
keys. Specs are reviewed by people who need `file:line:column` for every complaint, and
a duplicated key is nearly always a merge accident, so we compose the node graph (which
keeps marks) and build plain Python data ourselves, noting each value's position.
"""

from __future__ import annotations

import datetime
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .errors import Problem

JsonPath = tuple[str | int, ...]
MERGE_TAG = "tag:yaml.org,2002:merge"
# libyaml's composer when PyYAML was built with it (the wheels are): ~4x faster on a
# 1,000-table spec, same nodes and marks (benchmarks/plan_scaling.py).
COMPOSER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

# Limits for files that arrive in pull requests (hostile input must fail fast, exit 2):
# a 1,000-table spec is ~1 MiB; the deepest spec value (a mapping rule's GC) is 6 levels.
MAX_BYTES = 16 * 1024 * 1024
MAX_DEPTH = 64
# Aliases may repeat what is written (`<<: *defaults`), not multiply it: the values built
# may exceed the values written by this factor (plus a little), which stops the "billion
# laughs" pattern (aliases of aliases, each level multiplying the last) at once.
ALIAS_EXPANSION = 10
ALIAS_SLACK = 10_000


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
    written = _written_nodes(node)
    builder = _Builder(YamlDocument(file, None), budget=written * ALIAS_EXPANSION + ALIAS_SLACK)
    try:
        builder.doc.data = builder.build(node, ())
    except _TooLarge as too_large:
        line, column = _mark(too_large.node)
        return None, [Problem(file, line, column, format_path(too_large.path), _too_far(written, builder.budget))]
    return builder.doc, builder.problems


def depth_problem(text: str, file: str) -> Problem | None:
    """A problem where `text` (YAML or JSON) nests deeper than MAX_DEPTH, else None.

    Read from the parser's events, which libyaml emits without recursing: its composer
    (and any recursive walk after it) would crash or raise RecursionError on a file
    that is mostly `[`. Raises `yaml.MarkedYAMLError` where the text is not YAML."""
    depth = 0
    for event in yaml.parse(text, Loader=COMPOSER):
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                line, column = (event.start_mark.line + 1, event.start_mark.column + 1) if event.start_mark \
                    else (None, None)
                return Problem(file, line, column, "",
                               f"nested deeper than {MAX_DEPTH} levels; no spec, template or table description "
                               f"nests that deep: fix the file")
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
    return None


def node_problems(root: yaml.Node, file: str) -> list[Problem]:
    """The spec reader's rules for a composed file that is built by another constructor
    (cfn-flip's for CloudFormation): aliases within the expansion budget, no duplicate keys.

    Run before the file is built, walked, or located: a "billion laughs" alias graph is
    small as nodes and exponential as data. Iterative, like `_written_nodes`."""
    written = _written_nodes(root)
    budget = written * ALIAS_EXPANSION + ALIAS_SLACK
    stack, built = [root], 0
    while stack:
        node = stack.pop()
        built += 1
        if built > budget:
            line, column = _mark(node)
            return [Problem(file, line, column, "", _too_far(written, budget))]
        if isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
        elif isinstance(node, yaml.MappingNode):
            stack.extend(value for _, value in node.value)
    return _duplicate_keys(root, file)


def _duplicate_keys(root: yaml.Node, file: str) -> list[Problem]:
    problems: list[Problem] = []
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen or not isinstance(node, (yaml.SequenceNode, yaml.MappingNode)):
            continue
        seen.add(id(node))
        if isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
            continue
        first: dict[str, tuple[int, int]] = {}
        for key, value in node.value:
            stack.append(value)
            if isinstance(key, yaml.ScalarNode) and key.tag != MERGE_TAG:
                if key.value in first:
                    line, column = _mark(key)
                    problems.append(Problem(file, line, column, "", duplicate_key(key.value, first[key.value][0])))
                first.setdefault(key.value, _mark(key))
    return problems


def duplicate_key(key: str, first_line: int) -> str:
    """The one wording of a duplicate key, for specs and for imported files alike."""
    return f"duplicate key {key!r} (first at line {first_line}); keep one of them"


def _too_far(written: int, budget: int) -> str:
    return (f"aliases expand too far: {written:,} values are written, but their aliases would build more than "
            f"{budget:,}; a file may repeat an anchor, not nest aliases of aliases (the 'billion laughs' "
            f"pattern): write the values out")


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


def read_text(path: Path, file: str, what: str = "a spec or stack file",
              fix: str = "split the tables over several specs") -> tuple[str, Problem | None]:
    """The file's text, read only if it is a regular file of at most MAX_BYTES: a device,
    a FIFO or a huge file would otherwise hang the job that validates a pull request.
    `what` and `fix` word the size problem for the kind of file (`import` reads templates)."""
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            return "", Problem.about(file, "", "not a regular file (a device, FIFO or folder); "
                                     f"give the path of {what}")
        if info.st_size > MAX_BYTES:
            return "", Problem.about(file, "", f"the file is {info.st_size:,} bytes; {what} may "
                                     f"be at most {MAX_BYTES:,} ({fix})")
        with open(path, "rb") as stream:
            data = stream.read(MAX_BYTES + 1)
        if len(data) > MAX_BYTES:  # it grew while we read it
            return "", Problem.about(file, "", f"the file is larger than {MAX_BYTES:,} bytes")
        return data.decode("utf-8"), None
    except (OSError, UnicodeDecodeError) as exc:
        return "", Problem.about(file, "", f"cannot read the file: {exc}")


def _written_nodes(root: yaml.Node) -> int:
    """Nodes as written (an alias counts once, however often it is used); iterative, so a
    deep document cannot exhaust the stack here."""
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
        elif isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                stack.extend((key, value))
    return len(seen)


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
        self.doc.positions.setdefault(path, _mark(node))
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
            self.problems.append(self.doc.problem(path, f"cannot read this value: {what}", at=_mark(node)))
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
                    path, f"keys must be text, got {shown!r}: put the key in quotes", at=_mark(key_node)))
                continue
            if key in out:
                first = self.doc.key_positions[(*path, key)]
                self.problems.append(self.doc.problem((*path, key), duplicate_key(key, first[0]), at=_mark(key_node)))
                continue
            self.doc.key_positions.setdefault((*path, key), _mark(key_node))
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


def _mark(node: yaml.Node) -> tuple[int, int]:
    return (node.start_mark.line + 1, node.start_mark.column + 1)
