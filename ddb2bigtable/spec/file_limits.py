"""The bounds on a file that arrives in a pull request: hostile input fails fast, exit 2.

Read before anything is built from the file, and shared by every reader of such files:
the spec reader (yaml_source.py), `import`'s templates and table descriptions
(sources/located.py, which builds with another constructor), Terraform files, price locks,
checkpoints and an export's summary. A file is read only if it is a regular file of at
most MAX_BYTES; its text nests at most MAX_DEPTH levels; its aliases may repeat what is
written, not multiply it; a mapping names each key once.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import yaml

from .errors import Problem

MERGE_TAG = "tag:yaml.org,2002:merge"
# libyaml's composer when PyYAML was built with it (the wheels are): ~4x faster on a
# 1,000-table spec, same nodes and marks (benchmarks/plan_scaling.py).
COMPOSER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

# a 1,000-table spec is ~1 MiB; the deepest spec value (a mapping rule's GC) is 6 levels.
MAX_BYTES = 16 * 1024 * 1024
MAX_DEPTH = 64
# Aliases may repeat what is written (`<<: *defaults`), not multiply it: the values built
# may exceed the values written by this factor (plus a little), which stops the "billion
# laughs" pattern (aliases of aliases, each level multiplying the last) at once.
ALIAS_EXPANSION = 10
ALIAS_SLACK = 10_000


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
    small as nodes and exponential as data. Iterative, like `written_nodes`."""
    written = written_nodes(root)
    budget = alias_budget(written)
    stack, built = [root], 0
    while stack:
        node = stack.pop()
        built += 1
        if built > budget:
            line, column = node_start(node)
            return [Problem(file, line, column, "", too_far(written, budget))]
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
                    line, column = node_start(key)
                    problems.append(Problem(file, line, column, "", duplicate_key(key.value, first[key.value][0])))
                first.setdefault(key.value, node_start(key))
    return problems


def duplicate_key(key: str, first_line: int) -> str:
    """The one wording of a duplicate key, for specs and for imported files alike."""
    return f"duplicate key {key!r} (first at line {first_line}); keep one of them"


def alias_budget(written: int) -> int:
    """How many values a file of `written` nodes may build, its aliases expanded."""
    return written * ALIAS_EXPANSION + ALIAS_SLACK


def too_far(written: int, budget: int) -> str:
    """The one wording of aliases that expand past `alias_budget`."""
    return (f"aliases expand too far: {written:,} values are written, but their aliases would build more than "
            f"{budget:,}; a file may repeat an anchor, not nest aliases of aliases (the 'billion laughs' "
            f"pattern): write the values out")


def written_nodes(root: yaml.Node) -> int:
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




def node_start(node: yaml.Node) -> tuple[int, int]:
    """Where a node starts, 1-based (line, column)."""
    return (node.start_mark.line + 1, node.start_mark.column + 1)
