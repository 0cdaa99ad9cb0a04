"""A Terraform module instance evaluated as `terraform plan` would: the resources the reader needs.

Each module instance (the root, and each instance of each `module` call with a local source
or one `terraform init` installed) knows its variables (`tf_variables`), its locals, its
resources and module calls. Everything is computed when first referred to and kept, so
an expression costs only what it uses, and a cycle (`local.a` using `local.a`) is named
instead of recursing. `count` and `for_each` expand a resource or a module call into
instances keyed as Terraform keys them (`aws_dynamodb_table.t["orders"]`); `dynamic`
blocks expand into the blocks they stand for. What cannot be known becomes `Unresolved`
with the reason; what cannot be evaluated without the whole graph is named in a
`[not-evaluated]` notice. `collect` returns the DynamoDB tables, replicas and auto
scaling resources of this instance and of every module under it.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lark import Token, Tree

from ...spec.errors import InputError, Problem
from ...spec.model import Location
from ..cloudformation.intrinsics import Unresolved
from ..located import Path as DataPath
from ..model import Notice
from .expressions import evaluate
from .files import Files
from .functions import EvalError, to_number, to_text
from .syntax import Attr, Block, Body
from .values import Budget, Lazy, Scope, TooMuchWork, is_unknown, plain

TABLE, REPLICA = "aws_dynamodb_table", "aws_dynamodb_table_replica"
TARGET, POLICY = "aws_appautoscaling_target", "aws_appautoscaling_policy"
RESOURCE_POLICY = "aws_dynamodb_resource_policy"
READ = (TABLE, TARGET, POLICY, REPLICA, RESOURCE_POLICY)
MAX_INSTANCES = 10_000  # of one resource or module call
MAX_MODULE_DEPTH = 32
MAX_ACTIVE = 300  # references being evaluated inside one another
META_ARGUMENTS = ("count", "for_each", "provider", "providers", "depends_on", "source", "version")
_SKIPPED_BLOCKS = ("lifecycle", "provisioner", "connection")
Key = int | str | None


@dataclass(frozen=True)
class Resource:
    kind: str
    address: str  # `module.db["a"].aws_dynamodb_table.t[0]`
    values: dict[str, Any]
    base: DataPath
    provider: str | None = None  # the alias of `provider = aws.ALIAS`
    region: Any = None  # the region of the provider configuration the resource uses


@dataclass
class Run:
    """What all module instances of one import share."""

    files: Files
    root: Path
    installed: dict[str, Path]
    notices: list[Notice] = field(default_factory=list)
    marks: dict[DataPath, tuple[int, int]] = field(default_factory=dict)
    sources: dict[DataPath, str] = field(default_factory=dict)
    active: list[str] = field(default_factory=list)
    budget: Budget = field(default_factory=Budget)


def fallback_name(address: str) -> str:
    """A table id from a resource address, for a table whose name the files cannot give."""
    text = address.replace("module.", "").replace(f"{TABLE}.", "")
    name = re.sub(r"-+", "-", re.sub(r"[^A-Za-z0-9_.-]", "-", text)).strip("-.")
    return (name if len(name) >= 3 else f"table-{name}".strip("-"))[:255]  # DynamoDB: 3-255 characters


def comes_from(block: Block, argument: str) -> str:
    """` (it comes from var.X: pass ...)` for the variables an argument's expression uses, else ``."""
    attr = block.body.attrs.get(argument)
    names = sorted(set(re.findall(r"\bvar\.(\w+)", reference_text(attr.expr)))) if attr else []
    given = " or ".join(f"--parameter {n}=VALUE" for n in names)
    return (f" (it comes from {', '.join(f'var.{n}' for n in names)}: pass {given}, set it in a --var-file, or in "
            "the module call that sets it)") if names else ""


def _null(block: Block, argument: str) -> str:
    """Why a required argument is null, naming the variables its expression uses."""
    return f"{argument} is null{comes_from(block, argument)}"


def _required(block: Block, values: dict[str, Any], address: str) -> None:
    """A table's arguments AWS requires, as placeholders where the files leave them unknown or null:
    the name (then the id comes from the address), hash_key, and the view of an enabled stream."""
    name = values.get("name")
    if not isinstance(name, str):
        why = name.reason if isinstance(name, Unresolved) else _null(block, "name")
        values["name"] = Unresolved(f"{why}; the table id is taken from the resource address", fallback_name(address))
    if values.get("hash_key") is None and "hash_key" in block.body.attrs:
        values["hash_key"] = Unresolved(_null(block, "hash_key"), "unresolved-hash_key")
    if values.get("stream_enabled") is True and values.get("stream_view_type") is None:
        values["stream_view_type"] = Unresolved(f"stream_enabled is true but {_null(block, 'stream_view_type')}",
                                                "unresolved-stream_view_type")


def instance_key(key: Key) -> str:
    return "" if key is None else f"[{key}]" if isinstance(key, int) else f'["{key}"]'


def reference_text(node: Tree) -> str:
    """A traversal as written (`aws.west`, `"aws.west"`): provider references are names, not values."""
    return "".join(str(t) for t in node.scan_values(lambda v: isinstance(v, Token))).strip().strip('"')


def _data_source() -> Lazy:
    """`data.TYPE.NAME.ATTRIBUTE`: unknown, named in full."""
    def unknown(*parts: str) -> Unresolved:
        return Unresolved(f"`data.{'.'.join(parts)}` is a data source, read by `terraform plan`, not from the "
                          "files: fill in the value it stands for, or import `terraform show -json`",
                          f"unresolved-{'-'.join(parts[1:])}")

    def level(*names: str) -> Lazy:
        return Lazy(list, lambda _: None, lambda n: level(*names, n) if len(names) < 2 else unknown(*names, n))
    return level()


class Module(ABC):
    """One module instance: its own blocks evaluated on demand (module calls: `tf_calls.Instance`)."""

    def __init__(self, run: Run, directory: Path, bodies: list[Body], prefix: str, key_path: str,
                 inputs: Callable[[list[Block]], dict[str, Any]], providers: dict[str | None, Any], depth: int):
        """`inputs` gives the variables' values from their blocks (`tf_variables`)."""
        self.run, self.directory, self.prefix, self.key_path, self.depth = run, directory, prefix, key_path, depth
        blocks = [b for body in bodies for b in body.blocks]
        self.variable_blocks = [b for b in blocks if b.kind == "variable" and b.labels]
        self.locals: dict[str, Attr] = {n: a for b in blocks if b.kind == "locals" for n, a in b.body.attrs.items()}
        self.resources = {(b.labels[0], b.labels[1]): b for b in blocks if b.kind == "resource" and len(b.labels) == 2}
        self.calls = {b.labels[0]: b for b in blocks if b.kind == "module" and b.labels}
        self.outputs = {b.labels[0]: b for b in blocks if b.kind == "output" and b.labels}
        self.values = inputs(self.variable_blocks)
        self.providers = dict(providers)
        self._memo: dict[Any, Any] = {}
        for block in (b for b in blocks if b.kind == "provider" and b.labels == ("aws",)):
            alias = block.body.attrs.get("alias")
            name = self._eval(alias.expr, Scope({}, self._root, run.budget), alias.where) if alias else None
            region = block.body.attrs.get("region")
            self.providers[name if isinstance(name, str) else None] = \
                self._eval(region.expr, self.scope(), region.where) if region else None

    # --- names an expression may use -------------------------------------------------
    def scope(self, extra: dict[str, Any] | None = None) -> Scope:
        roots = {
            "var": Lazy(lambda: list(self.values), self.values.__getitem__, self._undeclared("var")),
            "local": Lazy(lambda: list(self.locals), self._local, self._undeclared("local")),
            "module": Lazy(lambda: list(self.calls), self._call_value, self._undeclared("module")),
            "data": _data_source(),
            "path": {"module": str(self.directory), "root": str(self.run.root), "cwd": str(self.run.root)},
            "terraform": {"workspace": "default"},
        }
        return Scope({**roots, **(extra or {})}, self._root, self.run.budget, self._read_file)

    def _read_file(self, function: str, name: str) -> Any:
        """`file(PATH)` / `fileexists(PATH)` inside the root folder or this module's folder, within the
        read limits (`tf_files`); a path outside them is not read (an import reads the configuration)."""
        path = Path(name) if Path(name).is_absolute() else self.run.root / name
        resolved = path.resolve()
        inside = any(resolved.is_relative_to(d.resolve()) for d in (self.run.root, self.directory))
        if not inside:
            return Unresolved(f"{function}(\"{name[:200]}\") points outside the configuration's folders and is not "
                              "read: give the value it stands for", f"unresolved-{function}")
        if function == "fileexists":
            return resolved.is_file()
        return self.run.files.text(path)

    def _undeclared(self, kind: str) -> Callable[[str], Unresolved]:
        where = f" of module {self.key_path}" if self.key_path else ""
        return lambda name: Unresolved(f"`{kind}.{name}` is not a declared {'variable' if kind == 'var' else kind}"
                                       f"{where}: declare it or fix the reference", f"unresolved-{name}")

    def _root(self, name: str) -> Any:
        names = [n for (kind, n) in self.resources if kind == name]
        if names:
            return Lazy(lambda: names, lambda n: self._resource_value(name, n),
                        lambda n: Unresolved(f"no resource {name}.{n} in this module", f"unresolved-{n}"))
        return Unresolved(f"`{name}` is not declared in this module: fix the reference", f"unresolved-{name}")

    def _once(self, key: str, compute: Callable[[], Any]) -> Any:
        if key in self._memo:
            return self._memo[key]
        if key in self.run.active:
            chain = " -> ".join(self.run.active[self.run.active.index(key):] + [key])
            return Unresolved(f"{key} refers to itself ({chain}); Terraform refuses such a cycle: break it",
                              "unresolved-cycle")
        if len(self.run.active) > MAX_ACTIVE:
            raise InputError([Problem.about(str(self.directory), "", f"references nest more than {MAX_ACTIVE} deep "
                                            f"(at {key}): simplify the configuration")])
        self.run.active.append(key)
        try:
            value = compute()
        finally:
            self.run.active.pop()
        self._memo[key] = value
        return value

    def _eval(self, node: Tree, scope: Scope, where: Location) -> Any:
        try:
            return evaluate(node, scope)
        except EvalError as error:
            return Unresolved(f"{where.file}:{where.line}: {error} (`terraform plan` stops here too)",
                              "unresolved-error")
        except RecursionError:
            raise InputError([Problem.at(where, where.file, "", "expressions nest too deeply to evaluate: "
                                                        "simplify them")]) from None
        except TooMuchWork as error:
            raise InputError([Problem.at(where, where.file, "", f"{error}; no real configuration needs that much: "
                                                        "simplify it")]) from None

    @abstractmethod
    def _call_value(self, name: str) -> Any:
        """What `module.NAME` gives: `tf_calls.Instance` evaluates module calls (they read
        other folders, so they live in their own module)."""

    def _local(self, name: str) -> Any:
        attr = self.locals[name]
        return self._once(f"{self.prefix}local.{name}", lambda: self._eval(attr.expr, self.scope(), attr.where))

    # --- count, for_each, instances ----------------------------------------------------
    def _expand(self, block: Block, address: str) -> dict[Key, Any] | Unresolved:
        """Instance key -> each.value (None for count and single blocks), or why it is unknown."""
        def compute() -> Any:
            attrs = block.body.attrs
            if "count" in attrs:
                value = self._eval(attrs["count"].expr, self.scope(), attrs["count"].where)
                if is_unknown(value):
                    return value
                count = int(to_number(value, "count"))
                self._bound(count, address, attrs["count"])
                return {i: None for i in range(count)}
            if "for_each" in attrs:
                value = plain(self._eval(attrs["for_each"].expr, self.scope(), attrs["for_each"].where))
                if is_unknown(value):
                    return value
                self._bound(len(value) if isinstance(value, (dict, list)) else 0, address, attrs["for_each"])
                if isinstance(value, dict):
                    return dict(sorted(value.items()))
                if isinstance(value, list):
                    return {to_text(v, "a for_each set element"): v for v in value}
                return Unresolved(f"for_each of {address} is not a map or set", "unresolved-for_each")
            return {None: None}
        try:
            return self._once(f"{address} (its count or for_each)", compute)
        except EvalError as error:
            return Unresolved(f"{address}: {error}", "unresolved-for_each")

    @staticmethod
    def _bound(count: int, address: str, attr: Attr) -> None:
        if count > MAX_INSTANCES:
            raise InputError([Problem.at(attr.where, attr.where.file, "", f"{address} has {count:,} instances; this "
                                         f"importer reads at most {MAX_INSTANCES:,} of one resource or module call")])

    def _meta(self, block: Block, key: Any, each: Any) -> dict[str, Any]:
        if "count" in block.body.attrs:
            return {"count": {"index": key}}
        if "for_each" in block.body.attrs:
            return {"each": {"key": key, "value": each}}
        return {}

    def _resource_value(self, kind: str, name: str) -> Any:
        """What `kind.name` gives an expression: one object, a list (count) or a map (for_each)."""
        block = self.resources[(kind, name)]
        keys = self._expand(block, f"{self.prefix}{kind}.{name}")
        if is_unknown(keys):
            return keys
        assert isinstance(keys, dict)
        objects = {k: self._object(kind, name, k) for k in keys}
        if "count" in block.body.attrs:
            return list(objects.values())
        return objects if "for_each" in block.body.attrs else objects[None]

    def _object(self, kind: str, name: str, key: Key) -> Lazy | Unresolved:
        address = f"{self.prefix}{kind}.{name}{instance_key(key)}"
        values = self.arguments(kind, name, key)
        if isinstance(values, Unresolved):  # it refers to itself
            return values
        if kind == TABLE:
            shown = values.get("name")
            table = shown.placeholder if isinstance(shown, Unresolved) else shown
            values = {**values, "id": table, "name": table, "arn": f"arn:aws:dynamodb:::table/{table}"}

        def computed(attribute: str) -> Unresolved:
            return Unresolved(f"`{address}.{attribute}` is computed when the resource is created (at apply): give the "
                              "deployed value, or import `terraform show -json`", f"unresolved-{name}-{attribute}")
        return Lazy(lambda: list(values), values.__getitem__, computed)

    def arguments(self, kind: str, name: str, key: Key) -> dict[str, Any]:
        """One instance's arguments, evaluated, `dynamic` blocks expanded."""
        block = self.resources[(kind, name)]
        address = f"{self.prefix}{kind}.{name}{instance_key(key)}"

        def compute() -> dict[str, Any]:
            keys = self._expand(block, f"{self.prefix}{kind}.{name}")
            each = keys.get(key) if isinstance(keys, dict) else keys
            extra = self._meta(block, key if not is_unknown(keys) else keys, each)
            values = self._body(block.body, self.scope(extra), address, top=True)
            if kind == TABLE:
                _required(block, values, address)
            return values
        return self._once(address, compute)

    def _body(self, body: Body, scope: Scope, address: str, top: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, attr in body.attrs.items():
            if not (top and name in META_ARGUMENTS):
                out[name] = plain(self._eval(attr.expr, scope, attr.where))
        for block in body.blocks:
            if top and block.kind in _SKIPPED_BLOCKS:
                continue
            if block.kind == "dynamic" and block.labels:
                self._dynamic(block, scope, address, out)
            elif not isinstance(out.get(block.kind, []), list):
                continue
            else:
                out.setdefault(block.kind, []).append(self._body(block.body, scope, address))
        return out

    def _dynamic(self, block: Block, scope: Scope, address: str, out: dict[str, Any]) -> None:
        name = block.labels[0]
        iterator = block.body.attrs.get("iterator")
        label = reference_text(iterator.expr) if iterator else name
        content = next((b for b in block.body.blocks if b.kind == "content"), None)
        if "for_each" not in block.body.attrs or content is None:
            return
        items = plain(self._eval(block.body.attrs["for_each"].expr, scope, block.body.attrs["for_each"].where))
        if is_unknown(items):
            self.run.notices.append(Notice("not-evaluated", address, f"the blocks of dynamic \"{name}\" are left "
                                           f"out: its for_each is not known ({items.reason})"))
            out.setdefault(name, items)
            return
        if not isinstance(items, (dict, list)):
            if items is not None:
                self.run.notices.append(Notice("not-evaluated", address, f"the blocks of dynamic \"{name}\" are left "
                                               "out: its for_each is not a list or a map"))
            return
        pairs = list(items.items()) if isinstance(items, dict) else list(enumerate(items))
        for k, v in pairs:
            inner = scope.child({label: {"key": k, "value": v}})
            out.setdefault(name, []).append(self._body(content.body, inner, address))
