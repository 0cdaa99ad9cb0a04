"""Which reader a source file needs, decided from its content (or `--from`), and the reading.

A describe-table output is a JSON object with a `Table` holding a `KeySchema`; a
CloudFormation/SAM template is a mapping with `Resources`; `terraform show -json` output has
`format_version` and `values` (state) or `planned_values` (plan). HCL is neither JSON nor
YAML, so a `.tf` file, or text with a `resource "aws_...` block, goes to python-hcl2 first.
Other file names say nothing reliable (`template.yaml`, `out.json`), so the content
decides; `--from KIND` overrides. A source `aws://REGION/TABLE` (or `aws://REGION/*`) is a
live table, read through boto3 by `aws_live`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..spec.errors import InputError, Problem
from ..spec.file_limits import read_text
from .aws import describe_table
from .aws import live as aws_live
from .aws.clients import LiveOptions
from .cloudformation import template as cloudformation
from .located import Located, parse
from .model import Imported, Options, TableDefinition
from .terraform import reader as terraform

Reader = Callable[[Located, Options], Imported]
Probe = Callable[[Any], bool]
READERS: dict[str, tuple[Probe, Reader]] = {
    describe_table.KIND: (describe_table.is_describe_table, describe_table.read),
    cloudformation.KIND: (cloudformation.is_template, cloudformation.read),
    terraform.KIND: (terraform.is_terraform, terraform.read),
}
KINDS = tuple(READERS)
_HCL_RESOURCE = re.compile(r'^\s*resource\s+"aws_', re.MULTILINE)


def kind_of(loc: Located, forced: str | None) -> str:
    """The source kind of a parsed file; `InputError` when it is none of them."""
    if forced is not None:
        if not READERS[forced][0](loc.data):
            raise loc.fail((), f"this is not {forced} input; drop --from {forced} or pick another file")
        return forced
    for kind, (probe, _) in READERS.items():
        if probe(loc.data):
            return kind
    raise loc.fail((), "not a source ddb2bigtable can import: expected describe-table JSON (a top-level "
                   "\"Table\" with \"KeySchema\"), a CloudFormation/SAM template (with \"Resources\"), a Terraform "
                   ".tf file or `terraform show -json` output (with \"format_version\" and \"values\")")


def _is_hcl(path: str, text: str, forced: str | None) -> bool:
    """A `.tf` file, HCL-looking text, or Terraform forced on text that is not JSON (`show -json` is)."""
    if text.lstrip().startswith(("{", "[")):
        return False
    return path.endswith(".tf") or forced == terraform.KIND or _HCL_RESOURCE.search(text) is not None


def read_source(path: str, text: str, options: Options, forced: str | None = None) -> Imported:
    if _is_hcl(path, text, forced):
        return terraform.read_configuration(path, options)
    loc = parse(path, text)
    return READERS[kind_of(loc, forced)][1](loc, options)


def _read(path: str) -> str:
    """A source file's text under the spec reader's limits: a regular file (also through a
    link) of at most MAX_BYTES, so a device, a FIFO or a huge file is refused unread."""
    text, problem = read_text(Path(path), path, "a source file",
                              "CloudFormation itself takes templates of at most 1 MB: is this the right file?")
    if problem:
        raise InputError([problem])
    return text


def _read_directory(path: str, options: Options, forced: str | None) -> Imported:
    """A directory is a Terraform configuration: its root module evaluated (`terraform.read_configuration`)."""
    if forced not in (None, terraform.KIND):
        raise InputError([Problem.about(path, "", f"a directory is read as Terraform, not {forced}: name its files")])
    return terraform.read_configuration(path, options)


def read_sources(paths: Sequence[str], options: Options, forced: str | None = None,
                 live: LiveOptions | None = None) -> list[Imported]:
    """Every source file (or live table), read; all sources' problems together in one `InputError`.
    A live source's service failure (`ServiceError`) stops the reading at once."""
    problems: list[Problem] = []
    found = []
    for path in paths:
        if aws_live.is_live(path):
            try:
                found.append(aws_live.read(path, live or LiveOptions()))
            except InputError as error:
                problems += error.problems
            continue
        if Path(path).is_dir():
            try:
                found.append(_read_directory(path, options, forced))
            except InputError as error:
                problems += error.problems
            continue
        try:
            found.append(read_source(path, _read(path), options, forced))
        except InputError as error:
            problems += error.problems
    if problems:
        raise InputError(problems)
    return found


def all_tables(found: Sequence[Imported]) -> list[TableDefinition]:
    """The tables of every source, in order; one table in two sources is bad input."""
    seen: dict[tuple[str, str], str] = {}
    problems = []
    tables = []
    for imported in found:
        for table in imported.tables:
            key = (table.name.value, table.region.value)
            if key in seen:
                problems.append(Problem.about(imported.path, "", f"table {key[0]} in {key[1]} is also in {seen[key]}: "
                                              "import each table from one source"))
            seen.setdefault(key, imported.path)
            tables.append(table)
    if problems:
        raise InputError(problems)
    return tables
