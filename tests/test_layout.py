"""The folder tree is the architecture: imports follow the data flow, never against it.

Every import in the engine and in `components/` is read with `ast` (module level, inside
functions and under TYPE_CHECKING alike: a lazy import is still a dependency), resolved
to a module of this repository and checked against the arrows below. A new arrow is a
design decision: add it here, with its reason, in the same change.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ENGINE = "ddb2bigtable"

# Which engine packages each package may import (besides its own modules). `spec` is the
# bottom: everything may read the models. Top-level modules (`program`) count as packages.
ALLOWED: dict[str, set[str]] = {
    "spec": set(),
    "plan": {"spec"},
    "codec": {"spec"},
    "exports": {"codec", "spec"},  # records carry the codec's typed `Item`
    "review": {"plan", "spec"},
    "sources": {"codec", "exports", "spec"},  # importers: definitions -> spec documents; --export types by the load's reader and TypeScan
    "bigtable": {"codec", "plan", "spec"},  # table admin, call deadlines, the emulator: below both load and serve, which create tables; the record of types applies the codec's declared-vs-held rule
    "load": {"bigtable", "codec", "exports", "plan", "spec"},
    "render": {"load", "plan", "review", "spec"},  # reports of loads, plans and diffs
    "replicate": {"bigtable", "codec", "exports", "load", "spec"},  # the stream applied with the load's codec and writer
    "advise": {"codec", "exports", "plan", "render", "spec"},  # the sample encoded by the load's codec; findings as sections
    "prices": {"plan", "spec"},  # price APIs -> the lock (plan.price_lock's model); regions from spec; I/O kept out of plan
    "serve": {"bigtable", "codec", "plan", "spec"},  # the DynamoDB endpoint: items through the codec, tables and app profiles from the plan; CreateTable through bigtable's admin
    "cli": {"advise", "bigtable", "exports", "load", "plan", "prices", "render", "replicate", "review", "serve", "sources", "spec"},  # exports: ExportError means exit 2
    "program": {"load", "plan", "spec"},
    "__main__": {"cli"},
}
# Inside `serve` and `sources`, the rooms (subpackages) and the rooms each may import. Every room
# may import its package's top-level modules, the kernel all rooms share (serve: errors, the
# wire form, the catalog, the store, the session, capacity; sources: the model, located
# values, emitting, estimates); the kernel imports no room, but for the dispatchers named below.
ROOMS: dict[str, set[str]] = {
    "serve.protocol": {"serve.expressions", "serve.items", "serve.queries", "serve.streams", "serve.tables",
                       "serve.transactions"},  # HTTP in, an operation, HTTP out
    "serve.expressions": set(),
    "serve.tables": {"serve.streams"},  # a table's streams: DescribeTable names them, Create/UpdateTable turn them on
    "serve.items": {"serve.expressions", "serve.streams", "serve.tables", "serve.transactions"},  # a write records its new attribute types in the table's record and its change in the stream's; reads and writes meet transactions' locks, TransactWriteItems runs the protocol
    "serve.queries": {"serve.expressions", "serve.items"},  # a Query starts with the checks every single-table request makes
    "serve.streams": set(),  # DynamoDB Streams (docs/streams.md): records in the items' rows, read over the kernel's store
    "serve.transactions": set(),  # the protocol (docs/transactions.md) over the kernel's store: every room that reads or writes items uses it
    "sources.cloudformation": set(),
    "sources.terraform": {"sources.cloudformation"},  # aws_dynamodb_table read through CloudFormation's field readers
    "sources.aws": set(),
}
DISPATCHERS = {f"{ENGINE}.sources.detect": {"sources.aws", "sources.cloudformation", "sources.terraform"}}
# The libraries that speak HTTP: only serve's protocol room imports them.
HTTP_LIBRARIES = {"uvicorn", "h11", "httptools", "starlette", "websockets"}
# `components/` turns a plan into resources and decides nothing: it reads these modules only.
COMPONENTS_MAY_IMPORT = {
    f"{ENGINE}.plan.model",
    f"{ENGINE}.spec.model",
    f"{ENGINE}.load.jobs",  # the load jobs the post-deploy hook registers
    f"{ENGINE}.load.beam.dataflow",  # the hook's provider launches the planned job
    f"{ENGINE}.review.drift",  # the live-table check of `source: {live: true}` stages
}


def _modules(folder: Path) -> Iterator[tuple[str, Path]]:
    for path in sorted(folder.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        yield ".".join(parts[:-1] if parts[-1] == "__init__" else parts), path


def _imports(module: str, path: Path) -> Iterator[tuple[int, str]]:
    """(line, absolute module name) of every import in one file."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            yield node.lineno, target
            for alias in node.names:  # `from . import sizing` imports a module
                yield node.lineno, f"{target}.{alias.name}"


def _known(name: str, modules: set[str]) -> str | None:
    """The repository module an imported name refers to (longest match), if any."""
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


def _package(module: str) -> str:
    return module.split(".")[1] if module.count(".") >= 1 else module


def _graph(folders: list[str]) -> dict[str, dict[str, int]]:
    files = {m: p for folder in folders for m, p in _modules(ROOT / folder)}
    engine = {m for m, _ in _modules(ROOT / ENGINE)}
    graph: dict[str, dict[str, int]] = {}
    for module, path in files.items():
        edges = graph.setdefault(module, {})
        for line, name in _imports(module, path):
            target = _known(name, engine)
            if target and target != module and not module.startswith(target + ".") and target != ENGINE:
                edges.setdefault(target, line)
    return graph


def wrong_arrows(graph: dict[str, dict[str, int]]) -> list[str]:
    found = []
    for module, edges in sorted(graph.items()):
        if module == ENGINE:
            continue
        source = _package(module)
        for target, line in sorted(edges.items()):
            if module.startswith("components"):
                if target not in COMPONENTS_MAY_IMPORT:
                    found.append(f"{module}:{line}: components -> {target}")
                continue
            goal = _package(target)
            if goal != source and goal not in ALLOWED.get(source, set()):
                found.append(f"{module}:{line}: {source} -> {goal} ({target})")
    return found


def _room(module: str) -> str | None:
    """`serve.items` for ddb2bigtable.serve.items.item_ops; the package (`serve`) for its kernel."""
    parts = module.split(".")
    if len(parts) < 3 or parts[1] not in {room.split(".")[0] for room in ROOMS}:
        return None
    return f"{parts[1]}.{parts[2]}" if f"{parts[1]}.{parts[2]}" in ROOMS or len(parts) > 3 else parts[1]


def wrong_room_arrows(graph: dict[str, dict[str, int]]) -> list[str]:
    """Imports between the rooms of `serve` and `sources` against ROOMS."""
    found = []
    for module, edges in sorted(graph.items()):
        source = _room(module)
        for target, line in sorted(edges.items()):
            goal = _room(target)
            if source is None or goal is None or goal == source or goal.split(".")[0] != source.split(".")[0]:
                continue
            if "." not in goal:
                continue  # the kernel, shared by every room
            allowed = DISPATCHERS.get(module, set()) if "." not in source else ROOMS.get(source, set())
            if goal not in allowed:
                found.append(f"{module}:{line}: {source} -> {goal} ({target})")
    return found


def cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in graph.get(node, {}):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


@pytest.fixture(scope="module")
def graph() -> dict[str, dict[str, int]]:
    return _graph([ENGINE, "components"])


def test_every_package_is_in_the_arrows(graph):
    packages = {_package(m) for m in graph if m.startswith(ENGINE + ".")}
    assert packages <= set(ALLOWED), f"new packages need their arrows here: {sorted(packages - set(ALLOWED))}"


def test_imports_follow_the_data_flow(graph):
    assert wrong_arrows(graph) == []


def test_no_import_circles(graph):
    assert cycles(graph) == []


def test_the_engine_never_imports_pulumi():
    found = [f"{m}:{line}: {name}" for m, p in _modules(ROOT / ENGINE) for line, name in _imports(m, p)
             if name.split(".")[0] == "pulumi" or name.startswith("pulumi_")]
    assert found == []


def test_every_room_is_in_the_arrows(graph):
    rooms = {r for m in graph if (r := _room(m)) and "." in r}
    assert rooms <= set(ROOMS), f"new rooms need their arrows here: {sorted(rooms - set(ROOMS))}"


def test_rooms_import_as_the_arrows_say(graph):
    assert wrong_room_arrows(graph) == []


def test_only_serve_protocol_speaks_http():
    found = [f"{m}:{line}: {name}" for m, p in _modules(ROOT / ENGINE) for line, name in _imports(m, p)
             if name.split(".")[0] in HTTP_LIBRARIES and m.startswith(f"{ENGINE}.serve.")
             and not m.startswith(f"{ENGINE}.serve.protocol")]
    assert found == []


def test_a_forbidden_room_arrow_is_caught():
    """The room checks themselves: an operation that reaches back into HTTP, the kernel
    importing a room, and Terraform's reader importing AWS's live tables."""
    graph = {
        f"{ENGINE}.serve.items.item_ops": {f"{ENGINE}.serve.protocol.app": 12, f"{ENGINE}.serve.store": 3},
        f"{ENGINE}.serve.queries.query_ops": {f"{ENGINE}.serve.items.item_ops": 24, f"{ENGINE}.serve.tables.admin_ops": 9},
        f"{ENGINE}.serve.store": {f"{ENGINE}.serve.items.counters": 7},
        f"{ENGINE}.sources.terraform.reader": {f"{ENGINE}.sources.aws.live": 5, f"{ENGINE}.sources.cloudformation.fields": 6},
        f"{ENGINE}.sources.detect": {f"{ENGINE}.sources.aws.live": 20},
    }
    assert wrong_room_arrows(graph) == [
        f"{ENGINE}.serve.items.item_ops:12: serve.items -> serve.protocol ({ENGINE}.serve.protocol.app)",
        f"{ENGINE}.serve.queries.query_ops:9: serve.queries -> serve.tables ({ENGINE}.serve.tables.admin_ops)",
        f"{ENGINE}.serve.store:7: serve -> serve.items ({ENGINE}.serve.items.counters)",
        f"{ENGINE}.sources.terraform.reader:5: sources.terraform -> sources.aws ({ENGINE}.sources.aws.live)",
    ]


def test_rooms_stay_small():
    """At most 12 modules a folder in serve and sources: a room that grows past it holds two."""
    crowded = {}
    for package in ("serve", "sources"):
        for folder in [ROOT / ENGINE / package, *(p.parent for p in (ROOT / ENGINE / package).glob("*/__init__.py"))]:
            count = len([p for p in folder.glob("*.py") if p.name != "__init__.py"])
            if count > 12:
                crowded[str(folder.relative_to(ROOT))] = count
    assert crowded == {}


def test_a_forbidden_arrow_is_caught():
    """The checks themselves: a codec module importing the planner, and a circle."""
    graph = {f"{ENGINE}.codec.codec": {f"{ENGINE}.plan.gc": 36}, f"{ENGINE}.plan.gc": {f"{ENGINE}.spec.model": 3}}
    assert wrong_arrows(graph) == [f"{ENGINE}.codec.codec:36: codec -> plan ({ENGINE}.plan.gc)"]
    circle = {"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1}, "d": {"a": 1}}
    assert cycles(circle) == [["a", "b", "c"]]


def test_modules_stay_small():
    """About 350 lines at most: a module that grows past it has two concerns."""
    big = {str(p.relative_to(ROOT)): n for folder in (ENGINE, "components") for _, p in _modules(ROOT / folder)
           if (n := len(p.read_text(encoding="utf-8").splitlines())) > 360}
    assert big == {}


def test_package_docstrings_name_real_entry_points():
    """Each package's `__init__.py` lists its entry points as `module.name`; they must exist."""
    import importlib
    import re

    missing = []
    for init in sorted((ROOT / ENGINE).rglob("__init__.py")):
        package = ".".join(init.relative_to(ROOT).parent.parts)
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
        for module, name in re.findall(r"`([a-z_.]+)\.([A-Za-z_]+)`", doc):
            try:
                target = importlib.import_module(f"{package}.{module}")
            except ModuleNotFoundError:
                missing.append(f"{package}: no module {module}")
                continue
            if not hasattr(target, name) and not (ROOT / init.parent / module / f"{name}.py").exists():
                missing.append(f"{package}: {module}.{name}")
    assert missing == []
