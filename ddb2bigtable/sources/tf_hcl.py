"""Terraform `.tf` files: parsed by python-hcl2, expressions evaluated as far as a file allows.

python-hcl2 turns HCL into dicts but evaluates nothing: a literal string keeps its quotes
(`'"Orders"'`), an expression is `"${var.name}"`, a template `'"${var.name}-prod"'`. The
importer needs values, so this module resolves what a plan would know from the files
alone: variables (`--parameter KEY=VALUE`, else their `default`), `local.NAME` whose value
is itself resolvable, and the attributes of resources in the same file that are plain
arguments (`aws_dynamodb_table.orders.name`, `aws_appautoscaling_target.reads.resource_id`).
Anything else (another resource's computed `arn`, a data source, a function call) becomes
`Unresolved` naming the expression, so the reader turns it into an estimate with a warning.
Lines come from the `resource "TYPE" "NAME"` headers: python-hcl2 keeps no positions in
its dicts, and a message pointing at the resource is what a user needs to find it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

import hcl2
from lark.exceptions import LarkError, UnexpectedInput

from ..spec.errors import InputError, Problem
from .intrinsics import Unresolved
from .located import Located, Path

HCL_KEY = "terraform_hcl"  # the parsed configuration sits under this key of `Located.data`
_INTERPOLATION = re.compile(r"\$\{([^{}]*)\}")
_HEADER = re.compile(r'^\s*resource\s+"([^"]+)"\s+"([^"]+)"')
_OPTIONS = hcl2.SerializationOptions(with_comments=False, explicit_blocks=False)


def resource_path(kind: str, name: str) -> Path:
    """The path a resource's values are read under; its mark is the header's line."""
    return ("resource", f"{kind}.{name}")


def parse_hcl(file: str, text: str) -> Located:
    """A `.tf` file parsed, or exit-2 input at the line python-hcl2 stopped at."""
    try:
        data = hcl2.loads(text, serialization_options=_OPTIONS)
    except UnexpectedInput as error:
        found = getattr(error, "token", None) or getattr(error, "char", None)
        what = f"unexpected {str(found).strip()[:30]!r}" if found is not None and str(found).strip() else \
            "unexpected end of file or line"
        raise InputError([Problem(file, error.line if error.line > 0 else 1, max(error.column, 1), "",
                                  f"not valid HCL ({what}): python-hcl2 cannot parse here; fix the file "
                                  "(`terraform validate` points at the same place)")]) from None
    except (LarkError, ValueError, TypeError) as error:  # parse errors without a position
        raise InputError([Problem.about(file, "", f"not valid HCL ({error}); run `terraform validate` on it "
                                        "to find the line, then fix it")]) from None
    marks: dict[Path, tuple[int, int]] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if (found := _HEADER.match(line)) is not None:
            marks[resource_path(found.group(1), found.group(2))] = (number, 1)
    return Located(file, {HCL_KEY: data}, marks)


@dataclass(frozen=True)
class HclLocated(Located):
    """Several `.tf` files read as one configuration: a problem names the file of its resource."""

    files: dict[Path, str] = field(default_factory=dict)  # resource path -> the file defining it

    def problem(self, path: Path, message: str) -> Problem:
        at = path
        while at not in self.files and at:
            at = at[:-1]
        found = super().problem(path, message)
        return replace(found, file=self.files.get(at, self.file))


def parse_configuration(directory: str, texts: dict[str, str]) -> HclLocated:
    """The `.tf` files of one directory (a Terraform module) merged, as Terraform reads them:
    variables, providers and resources may each sit in a different file."""
    merged: dict[str, list[Any]] = {}
    marks: dict[Path, tuple[int, int]] = {}
    files: dict[Path, str] = {}
    problems: list[Problem] = []
    for file, text in sorted(texts.items()):
        try:
            one = parse_hcl(file, text)
        except InputError as error:
            problems += error.problems
            continue
        for key, entries in one.data[HCL_KEY].items():
            merged.setdefault(key, []).extend(entries if isinstance(entries, list) else [entries])
        marks.update(one.marks)
        files.update({at: file for at in one.marks})
    if problems:
        raise InputError(problems)
    return HclLocated(directory, {HCL_KEY: merged}, marks, files)


def unquote(name: str) -> str:
    """A block label as python-hcl2 gives it (`'"aws"'`) without its quotes."""
    return name[1:-1] if len(name) >= 2 and name[0] == name[-1] == '"' else name


@dataclass
class Scope:
    """What expressions may refer to: variables, locals, and attributes found so far."""

    variables: dict[str, Any]
    locals: dict[str, Any] = field(default_factory=dict)
    refs: dict[str, Any] = field(default_factory=dict)

    def lookup(self, expression: str) -> Any:
        expression = expression.strip()
        head, _, rest = expression.partition(".")
        if head == "var" and rest in self.variables:
            return self.variables[rest]
        if head == "var":
            return Unresolved(f"`{expression}` is not a declared variable: declare it or fix the reference",
                              expression)
        if head == "local" and rest in self.locals:
            return self.locals[rest]
        if expression in self.refs:
            return self.refs[expression]
        return Unresolved(f"`{expression}` is not known from the files alone (another resource's computed "
                          "attribute, a data source or a function): fill in the deployed value", expression)

    def evaluate(self, value: Any) -> Any:
        """`value` with its literals unquoted and its expressions resolved where possible."""
        if isinstance(value, dict):
            return {unquote(k): self.evaluate(v) for k, v in value.items() if not k.startswith("__")}
        if isinstance(value, list):
            return [self.evaluate(v) for v in value]
        if not isinstance(value, str):
            return value
        if len(value) >= 2 and value[0] == value[-1] == '"':
            return self._template(value[1:-1])
        if (whole := _INTERPOLATION.fullmatch(value)) is not None:
            return self.lookup(whole.group(1))
        return value

    def _template(self, text: str) -> Any:
        """A quoted string with `${...}` parts; a lone `"${x}"` keeps x's type."""
        if (whole := _INTERPOLATION.fullmatch(text)) is not None:
            return self.lookup(whole.group(1))
        parts = {m.group(1): self.lookup(m.group(1)) for m in _INTERPOLATION.finditer(text)}
        missing = [v for v in parts.values() if isinstance(v, Unresolved)]
        if missing:
            return Unresolved(missing[0].reason, _INTERPOLATION.sub(lambda m: m.group(1), text))
        return _INTERPOLATION.sub(lambda m: _text(parts[m.group(1)]), text).replace('\\"', '"')


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def blocks(data: dict[str, Any], kind: str) -> list[tuple[str, Any]]:
    """The labelled blocks of one kind (`variable`, `provider`): (label, body) in file order."""
    out = []
    for entry in data.get(kind) or []:
        if isinstance(entry, dict):
            out += [(unquote(label), body) for label, body in entry.items() if not label.startswith("__")]
    return out


def scope_of(data: dict[str, Any], parameters: dict[str, str]) -> Scope:
    """Variables from --parameter, else their default, else unresolved; then the locals."""
    variables: dict[str, Any] = {}
    for name, body in blocks(data, "variable"):
        if name in parameters:
            variables[name] = parameters[name]
        elif isinstance(body, dict) and "default" in body:
            variables[name] = Scope({}).evaluate(body["default"])
        else:
            variables[name] = Unresolved(f"variable {name} has no default: pass --parameter {name}=VALUE",
                                         f"var.{name}")
    scope = Scope(variables)
    for entry in data.get("locals") or []:  # in order, so a local may use the ones above it
        for name, value in (entry.items() if isinstance(entry, dict) else ()):
            if not name.startswith("__"):
                scope.locals[name] = scope.evaluate(value)
    return scope
