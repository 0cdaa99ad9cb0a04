"""Module calls and the whole configuration: the root module instance and every module under it.

A `module` block with a local source (`./db`, `../../`) is read from that folder; a registry
or git source from the folder `terraform init` recorded for the call's key in
`.terraform/modules/modules.json`; without it, a `[not-evaluated]` notice names the call and
says to run `terraform init` or import `terraform show -json`. Each instance of a call
(`count`, `for_each`) is its own module instance with the inputs the block passes, the
AWS provider configurations it is given (`providers = { aws = aws.west }`; the default one
is inherited) and its outputs for `module.NAME.OUTPUT`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...spec.errors import InputError, Problem
from ..cloudformation.intrinsics import Unresolved
from ..model import Notice, Options
from .files import Files
from .modules import (
    MAX_MODULE_DEPTH,
    META_ARGUMENTS,
    READ,
    TABLE,
    Key,
    Module,
    Resource,
    Run,
    comes_from,
    instance_key,
    reference_text,
)
from .syntax import Block, Body, parse, trees, unwrapped
from .values import Lazy, Scope, TooMuchWork, plain
from .variables import module_values, root_values


class Instance(Module):
    def _call_value(self, name: str) -> Any:
        block = self.calls[name]
        keys = self._expand(block, f"{self.prefix}module.{name}")
        if isinstance(keys, Unresolved):
            return keys
        outputs = {}
        for key in keys:
            child = self._child(name, key)
            outputs[key] = child.output_map() if isinstance(child, Instance) else child if isinstance(
                child, Unresolved) else Unresolved(f"module.{name} is not read (see the [not-evaluated] warning)",
                                                   f"unresolved-{name}")
        if "count" in block.body.attrs:
            return list(outputs.values())
        return outputs if "for_each" in block.body.attrs else outputs[None]

    def output_map(self) -> Lazy:
        def value(name: str) -> Any:
            attr = self.outputs[name].body.attrs.get("value")
            return self._once(f"{self.prefix}output.{name}", lambda: plain(
                self._eval(attr.expr, self.scope(), attr.where)) if attr else None)
        return Lazy(lambda: list(self.outputs), value)

    def _child(self, name: str, key: Key) -> Instance | Unresolved | None:
        """The module instance, None when its source is not read, Unresolved when its inputs use it."""
        return self._once(f"{self.prefix}module.{name}{instance_key(key)}", lambda: self._make(name, key))

    def _make(self, name: str, key: Key) -> Instance | None:
        block = self.calls[name]
        call = f"{self.prefix}module.{name}"
        attr = block.body.attrs.get("source")
        source = self._eval(attr.expr, Scope({}, self._root, self.run.budget), attr.where) if attr else None
        call_key = f"{self.key_path}.{name}" if self.key_path else name
        if isinstance(source, str) and source.startswith(("./", "../")):
            directory = self.directory / source
        elif call_key in self.run.installed:
            directory = self.run.installed[call_key]
        else:
            notice = Notice("not-evaluated", call, f"the module source {str(source)[:200]!r} is not read: run "
                            "`terraform init` (it installs the module under .terraform/modules) and import again, "
                            "or import `terraform show -json` output")
            if notice not in self.run.notices:
                self.run.notices.append(notice)
            return None
        if self.depth + 1 > MAX_MODULE_DEPTH:
            raise InputError([Problem.at(block.where, block.where.file, "", f"module calls nest more than "
                                         f"{MAX_MODULE_DEPTH} deep (does a module call itself?): fix the source")])
        if not directory.is_dir():
            raise InputError([Problem.at(block.where, block.where.file, "", f"the module source {source!r} is not a "
                                         f"folder ({directory}): fix the source, or run `terraform init`")])
        keys = self._expand(block, call)
        each = keys.get(key) if isinstance(keys, dict) else keys
        scope = self.scope(self._meta(block, key, each))
        given = {n: plain(self._eval(a.expr, scope, a.where)) for n, a in block.body.attrs.items()
                 if n not in META_ARGUMENTS}
        return Instance(self.run, directory, self.run.files.module(directory), f"{call}{instance_key(key)}.",
                        call_key, lambda blocks: module_values(blocks, given), self._providers_for(block),
                        self.depth + 1)

    def _providers_for(self, block: Block) -> dict[str | None, Any]:
        """The child's AWS provider configurations: the default one, and what `providers` maps."""
        out: dict[str | None, Any] = {None: self.providers.get(None)}
        attr = block.body.attrs.get("providers")
        node = unwrapped(attr.expr) if attr else None
        for elem in trees(node) if node is not None and node.data == "object" else []:
            child, parent = (reference_text(n) for n in trees(elem))
            if child.split(".")[0] == "aws":
                out[child.partition(".")[2] or None] = self.providers.get(parent.partition(".")[2] or None)
        return out

    def collect(self) -> list[Resource]:
        """The resources the reader needs, of this instance and of every module under it."""
        found = []
        for (kind, name), block in self.resources.items():
            if kind not in READ:
                continue
            base = f"{self.prefix}{kind}.{name}"
            keys = self._expand(block, base)
            if isinstance(keys, Unresolved):
                meta = "count" if "count" in block.body.attrs else "for_each"
                self.run.notices.append(Notice("not-evaluated", base, f"{meta} is not known ({keys.reason}): one "
                                               "instance is imported with placeholders; give the value to import "
                                               "every instance"))
                keys = {None: None}
            if not keys and kind == TABLE:
                meta = "count" if "count" in block.body.attrs else "for_each"
                self.run.notices.append(Notice("no-instances", base, f"its {meta} gives no instances"
                                               f"{comes_from(block, meta)}: no table is imported from it"))
            for key in keys:
                address = base + instance_key(key)
                values = self.arguments(kind, name, key)
                provider = block.body.attrs.get("provider")
                alias = reference_text(provider.expr).partition(".")[2] or None if provider else None
                region = values.get("region") if isinstance(values.get("region"), str) else self.providers.get(alias)
                path = ("resource", address)
                self.run.marks[path] = (block.where.line, block.where.column)
                self.run.sources[path] = block.where.file
                found.append(Resource(kind, address, values, path, alias, region))
        for name, block in self.calls.items():
            keys = self._expand(block, f"{self.prefix}module.{name}")
            if isinstance(keys, Unresolved):
                self.run.notices.append(Notice("not-evaluated", f"{self.prefix}module.{name}", "the module's "
                                               f"count/for_each is not known ({keys.reason}): its tables are not read"))
                continue
            for key in keys:
                child = self._child(name, key)
                if isinstance(child, Instance):
                    found += child.collect()
        return found


def _parameter_value(text: str) -> Any:
    """A --parameter holding a list or map, written as HCL (`["a", "b"]`), as Terraform's -var reads it."""
    try:
        return parse("--parameter", f"v = {text}\n").attrs["v"].expr
    except InputError:
        return None


def configuration(root: Path, bodies: list[Body], files: Files, options: Options) -> tuple[list[Resource], Run]:
    """The root module in `root` (its `bodies`) with its variables, and every module under it, evaluated."""
    run = Run(files, root, files.installed(root))
    variables = [b for body in bodies for b in body.blocks if b.kind == "variable" and b.labels]
    parameters = dict(options.parameters)
    try:
        tfvars = files.tfvars(root, options.var_files)
        values = root_values(variables, tfvars, parameters, _parameter_value)
        run.notices += [Notice("unknown-parameter", str(root), f"--parameter {k} is not a variable of this "
                               "configuration") for k in parameters if k not in values]
        run.notices += [Notice("unknown-parameter", file, f"{k} is not a variable of this configuration (Terraform "
                               "warns too): check its spelling") for file, body in tfvars for k in body.attrs
                        if k not in values]
        top = Instance(run, root, bodies, "", "", lambda _: values, {}, 0)
        found = top.collect()
        run.notices += [Notice("not-evaluated", str(p), "JSON configuration files (.tf.json) are not read: write "
                               "its resources as .tf, or import `terraform show -json` output") for p in files.unread]
        return found, run
    except (TooMuchWork, RecursionError) as error:  # where no expression's own place could be named
        raise InputError([Problem.about(str(root), "", f"{error or 'expressions nest too deeply'}; no real "
                                        "configuration needs that much: simplify it")]) from None
