"""The files a Terraform configuration is made of, each read within the spec reader's limits.

Every `.tf`, `.tfvars` and `modules.json` the evaluator opens, in the root directory, in a
module reached through a call (`../`, `.terraform/modules/...`) or through a link, goes
through `Files.text`: a regular file (after links) of at most the spec reader's MAX_BYTES,
UTF-8, else exit 2 naming the file. The whole configuration is bounded too (MAX_FILES,
MAX_TOTAL_BYTES), so a module tree that calls itself or a folder of thousands of files
ends in seconds. Registry and git modules are where `terraform init` put them:
`.terraform/modules/modules.json` maps each call's key (`db`, `db.inner`) to its folder.
"""

from __future__ import annotations

import json
from pathlib import Path

from lark import Tree

from ...spec.errors import InputError, Problem
from ...spec.file_limits import read_text
from ...spec.model import Location
from .syntax import Attr, Body, parse

MAX_FILES = 2000
MAX_TOTAL_BYTES = 64 * 1024 * 1024
MANIFEST = Path(".terraform") / "modules" / "modules.json"


def _as_hcl(file: str, value: object) -> Tree:
    """A JSON value as the HCL expression it reads as (objects may use `:`), its strings literal as
    in Terraform's JSON variable files (`${` and `%{` escaped)."""
    text = json.dumps(value).replace("${", "$${").replace("%{", "%%{")
    return parse(file, f"v = {text}\n").attrs["v"].expr


class Files:
    """One import's reads of Terraform files: parsed once each, counted against the bounds."""

    def __init__(self) -> None:
        self.read = 0
        self.total = 0
        self._parsed: dict[Path, Body] = {}
        self.unread: list[Path] = []  # `*.tf.json` files met in module folders (named in a warning)

    def text(self, path: Path) -> str:
        self.read += 1
        if self.read > MAX_FILES:
            raise InputError([Problem.about(str(path), "", f"the configuration reaches more than {MAX_FILES:,} "
                                            "files (a module that calls itself?): import a smaller folder")])
        text, problem = read_text(path, str(path), "a Terraform file", "split the configuration")
        if problem is not None:
            raise InputError([problem])
        self.total += len(text)
        if self.total > MAX_TOTAL_BYTES:
            raise InputError([Problem.about(str(path), "", f"the configuration's files hold more than "
                                            f"{MAX_TOTAL_BYTES:,} bytes together: import a smaller folder")])
        return text

    def body(self, path: Path) -> Body:
        key = path.resolve()
        if key not in self._parsed:
            self._parsed[key] = parse(str(path), self.text(path))
        return self._parsed[key]

    def module(self, directory: Path) -> list[Body]:
        """The `.tf` files of one module folder, in name order, as Terraform merges them."""
        found = sorted(p for p in directory.glob("*.tf") if not p.name.startswith("."))
        self.unread += sorted(p for p in directory.glob("*.tf.json") if p not in self.unread)
        problems: list[Problem] = []
        bodies = []
        for path in found:
            try:
                bodies.append(self.body(path))
            except InputError as error:
                problems += error.problems
        if problems:
            raise InputError(problems)
        return bodies

    def tfvars(self, directory: Path, var_files: tuple[str, ...]) -> list[tuple[str, Body]]:
        """As Terraform orders them: terraform.tfvars(.json), then *.auto.tfvars(.json) in name order,
        then each --var-file."""
        paths = [p for p in (directory / "terraform.tfvars", directory / "terraform.tfvars.json") if p.exists()]
        paths += sorted([*directory.glob("*.auto.tfvars"), *directory.glob("*.auto.tfvars.json")])
        paths += [Path(v) for v in var_files]
        return [(str(p), self._tfvars(p)) for p in paths]

    def _tfvars(self, path: Path) -> Body:
        if path.suffix != ".json":
            return self.body(path)
        try:
            values = json.loads(self.text(path))
        except (json.JSONDecodeError, RecursionError) as error:
            raise InputError([Problem.about(str(path), "", f"not valid JSON ({str(error)[:80]}): fix the variable "
                                            "file")]) from None
        if not isinstance(values, dict):
            raise InputError([Problem.about(str(path), "", "a JSON variable file holds one object of NAME: VALUE")])
        return Body({name: Attr(name, _as_hcl(str(path), value), Location(str(path), 1, 1))
                     for name, value in values.items()}, ())

    def installed(self, root: Path) -> dict[str, Path]:
        """Module call key -> folder, from what `terraform init` wrote; empty before it ran."""
        manifest = root / MANIFEST
        if not manifest.exists():
            return {}
        try:
            data = json.loads(self.text(manifest))
        except (json.JSONDecodeError, RecursionError) as error:
            raise InputError([Problem.about(str(manifest), "", f"not the modules.json `terraform init` writes "
                                            f"({str(error)[:80]}): run `terraform init` again")]) from None
        entries = data.get("Modules") if isinstance(data, dict) else None
        return {str(e["Key"]): root / str(e["Dir"]) for e in entries or []
                if isinstance(e, dict) and isinstance(e.get("Key"), str) and isinstance(e.get("Dir"), str)}
