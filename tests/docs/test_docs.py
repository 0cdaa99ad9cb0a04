"""The documentation in docs/ says what the code does: a field, option or figure the code
has is documented, and nothing documented is gone from the code.

Everything a user needs lives in this repository (the README and the docs/ pages it ends
with), so these checks compare the pages with their sources of truth: the spec and stage
schemas, the click commands, the region table, the sizing figures, the price table and the
codec's row keys. Plain text parsing, no subprocesses: the whole file runs in about a second.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import pytest

from ddb2bigtable.cli.app import main
from ddb2bigtable.codec.codec import Codec
from ddb2bigtable.plan import capacity, sizing
from ddb2bigtable.spec.reading import read_spec
from ddb2bigtable.spec.regions import AWS_REGIONS, gcp_for
from ddb2bigtable.spec.schema_check import load_schema

from ..markdown_check import table_row_widths

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
ROW_NAME = re.compile(r"^\| `([^`]+)`")
FIELDS_HEADING = re.compile(r"^#+ Fields (?:of `([^`]+)`|at the top level)\s*$")


def _text(name: str) -> str:
    return (DOCS / name).read_text(encoding="utf-8")


# --- docs/spec.md and docs/stage.md against their schemas ----------------------------------

# (page, schema, the path its "Fields of" headings start from)
REFERENCES = [("spec.md", "spec-v1.schema.json", ""), ("stage.md", "stage-v1.schema.json", "ddb2bigtable:stage")]


def _schema_fields(schema: dict[str, Any], root: str) -> dict[str, tuple[dict[str, Any], bool]]:
    """Every property path (`tables[].source.billing`) -> (its schema, required?)."""
    def resolve(node: dict[str, Any]) -> dict[str, Any]:
        while "$ref" in node:
            node = {**schema["$defs"][node["$ref"].rsplit("/", 1)[1]],
                    **{k: v for k, v in node.items() if k != "$ref"}}
        return node

    found: dict[str, tuple[dict[str, Any], bool]] = {}

    def walk(node: dict[str, Any], path: str) -> None:
        node = resolve(node)
        for branch in node.get("anyOf", []):
            walk(branch, path)
        if isinstance(node.get("items"), dict):
            walk(node["items"], f"{path}[]")
        for name, child in node.get("properties", {}).items():
            child_path = f"{path}.{name}" if path else name
            found[child_path] = (resolve(child), name in node.get("required", []))
            walk(child, child_path)

    walk(schema, root)
    return found


def _documented_fields(text: str) -> dict[str, str]:
    """Field path -> its table row, from the "Fields of `path`" sections of a page."""
    rows: dict[str, str] = {}
    prefix: str | None = None
    for line in text.splitlines():
        if line.startswith("#"):
            heading = FIELDS_HEADING.match(line)
            prefix = (heading.group(1) or "") if heading else None
        elif prefix is not None and (row := ROW_NAME.match(line)):
            name = row.group(1)
            rows[f"{prefix}.{name}" if prefix else name] = line
    return rows


def _enum_values(node: dict[str, Any]) -> list[Any]:
    return [*node.get("enum", []), *(v for branch in node.get("anyOf", []) for v in branch.get("enum", []))]


@pytest.mark.parametrize(("page", "schema", "root"), REFERENCES, ids=[r[0] for r in REFERENCES])
def test_every_field_is_documented_and_nothing_else(page: str, schema: str, root: str):
    schema_fields = _schema_fields(load_schema(schema), root)
    documented = _documented_fields(_text(page))
    assert sorted(set(schema_fields) - set(documented)) == [], f"fields of {schema} missing from docs/{page}"
    assert sorted(set(documented) - set(schema_fields)) == [], f"docs/{page} documents fields {schema} lacks"


@pytest.mark.parametrize(("page", "schema", "root"), REFERENCES, ids=[r[0] for r in REFERENCES])
def test_rows_name_every_choice_and_say_required(page: str, schema: str, root: str):
    documented = _documented_fields(_text(page))
    for path, (node, required) in _schema_fields(load_schema(schema), root).items():
        row = documented[path]
        missing = [v for v in _enum_values(node) if f"`{v}`" not in row]
        assert missing == [], f"{path}: docs/{page} does not name {missing}"
        assert not required or "required" in row, f"{path} is required; its row must say so"


# --- docs/cli.md against click ------------------------------------------------------------

def _param_names(command: click.Command) -> set[str]:
    """What a reader types: an option's spellings, an argument's metavar (`SPECS...`)."""
    names: set[str] = set()
    for param in command.params:
        if isinstance(param, click.Argument):
            names.add(param.human_readable_name + ("..." if param.nargs == -1 else ""))
        elif "--help" not in param.opts:
            names.update(param.opts)
    return names


def _cli_sections(text: str) -> Iterator[tuple[str | None, str]]:
    """(command or None before the first command section, the first cell of each table row)."""
    command = None
    for line in text.splitlines():
        if line.startswith("## "):
            heading = re.fullmatch(r"## `([a-z-]+(?: [a-z-]+)?)`", line)  # a group's command: `cutover check`
            command = heading.group(1) if heading else "(other)"
        elif row := ROW_NAME.match(line):
            yield command, row.group(1)


def _commands() -> Iterator[tuple[str, click.Command]]:
    """Every command as typed: a group's commands as `group command` (`cutover check`)."""
    for name, command in main.commands.items():
        if isinstance(command, click.Group):
            yield from ((f"{name} {sub}", c) for sub, c in command.commands.items())
        else:
            yield name, command


def test_every_command_and_option_is_documented_and_nothing_else():
    rows = list(_cli_sections(_text("cli.md")))
    assert {name for command, name in rows if command is None} == set(main.commands)
    for name, command in _commands():
        documented = {cell for section, cell in rows if section == name}
        undocumented, gone = _param_names(command) - documented, documented - _param_names(command)
        assert (undocumented, gone) == (set(), set()), (
            f"docs/cli.md, section `{name}`: add {sorted(undocumented)}; remove {sorted(gone)}")


def test_the_group_options_are_documented():
    text = _text("cli.md")
    for param in main.params:
        for spelling in param.opts:
            assert f"`{spelling}`" in text, spelling


# --- docs/regions.md against spec/regions.py ----------------------------------------------

def test_region_table_matches_the_code():
    documented = {}
    for line in _text("regions.md").splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) >= 3 and re.fullmatch(r"`[a-z0-9-]+`", cells[0]):
            documented[cells[0].strip("`")] = (cells[1].strip("`"), tuple(re.findall(r"`([^`]+)`", cells[2])))
    assert documented == {r: (gcp_for(r).gcp_region, gcp_for(r).zones) for r in AWS_REGIONS}


# --- docs/sizing.md against plan/sizing.py and plan/data/prices.json ----------------------

def test_sizing_figures_are_the_code_figures():
    text = _text("sizing.md")
    for storage, figures in sizing.NODE_FIGURES.items():
        for value in (figures.reads_per_second, figures.writes_per_second, figures.storage_limit_gib,
                      figures.storage_target_gib):
            assert f"{value:,}" in text, f"{storage}: {value:,} is not in docs/sizing.md"
    assert f"{sizing.BASE_CPU_TARGET} %" in text
    assert f"{sizing.CPU_TARGET_MIN}-{sizing.CPU_TARGET_MAX} %" in text
    assert f"{sizing.AUTOSCALING_MAX_RATIO} x min" in text
    assert f"{capacity.ATTRIBUTE_ESTIMATE_KB:g} KB per key attribute" in text
    assert f"{capacity.INDEX_OVERHEAD_KB:g} KB index overhead" in text
    for factors in (sizing.READ_FACTOR, sizing.WRITE_FACTOR):
        for name, factor in factors.items():
            assert f"{factor:g} for `{name}`" in text, name


def _price_values(node: Any) -> Iterator[float]:
    if isinstance(node, dict):
        if isinstance(node.get("value"), int | float):
            yield float(node["value"])
        for child in node.values():
            yield from _price_values(child)
    elif isinstance(node, list):
        for child in node:
            yield from _price_values(child)


def test_quoted_prices_are_in_the_price_table():
    """A price docs/sizing.md quotes still exists in prices.json (a refresh that changes it
    must change the page), and the reference regions are the ones pricing.py falls back to."""
    table = json.loads((ROOT / "ddb2bigtable" / "plan" / "data" / "prices.json").read_text(encoding="utf-8"))
    known = set(_price_values(table))
    quoted = {float(v) for line in _text("sizing.md").splitlines() if line.startswith("|")
              for v in re.findall(r"\$(\d+(?:\.\d+)?)", line)}
    assert quoted, "docs/sizing.md quotes reference prices"
    assert sorted(quoted - known) == []
    text = _text("sizing.md")
    for service in ("bigtable", "dynamodb"):
        assert table[service]["reference_region"] in text


# --- the README and the pages stand alone -------------------------------------------------

PAGES = [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_links_stay_inside_the_repository(page: Path):
    text = page.read_text(encoding="utf-8")
    assert "../shared" not in text, f"{page.name} points outside the repository"
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
        if "://" not in target:
            assert (page.parent / target).resolve().is_relative_to(ROOT), target
            assert (page.parent / target).exists(), f"{page.name} links {target}, which does not exist"


def test_readme_links_the_reference_pages():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for page in ("spec.md", "stage.md", "sizing.md", "cli.md", "regions.md"):
        assert f"](docs/{page})" in readme, page


def test_the_readme_ends_with_every_docs_page():
    """The README is the way in: its closing "Where to read next" table links every page of docs/."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    heading = "## Where to read next"
    assert heading in readme and "\n## " not in readme.split(heading, 1)[1], "the README ends with it"
    last = readme.split(heading, 1)[1]
    missing = [p.name for p in sorted(DOCS.glob("*.md")) if f"](docs/{p.name})" not in last]
    assert missing == [], f"add {missing} to the README's Where to read next table"



@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_tables_render_whole(page: Path):
    """A `|` inside a cell would split it: every row of a table has the header's cells."""
    for widths in table_row_widths(page.read_text(encoding="utf-8")):
        assert len(set(widths)) == 1, f"{page.name}: a table with rows of {sorted(set(widths))} cells"


def test_the_movies_comment_shows_the_row_the_codec_writes():
    """specs/movies.yaml explains its row keys with an example; the codec decides them."""
    spec = ROOT / "specs" / "movies.yaml"
    shown = re.search(r"# Rows look like (\S+): ", spec.read_text(encoding="utf-8"))
    assert shown, "specs/movies.yaml shows an example row"
    codec = Codec(read_spec(spec).tables[0], {})
    assert codec.row_key({"year": {"N": "2013"}, "title": {"S": "Rush"}}).decode() == shown.group(1)
    three, twenty = ({"year": {"N": year}, "title": {"S": "x"}} for year in ("3", "20"))
    assert codec.row_key(three) < codec.row_key(twenty)


def _plan_warning_codes() -> set[str]:
    """Every code the planner gives a warning: the first argument (or `code=`) of each
    `...Warning(...)` call in ddb2bigtable/plan/."""
    import ast

    codes = set()
    for path in (ROOT / "ddb2bigtable" / "plan").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and ast.unparse(node.func).endswith("Warning"):
                given = [*node.args[:1], *(k.value for k in node.keywords if k.arg == "code")]
                codes |= {g.value for g in given if isinstance(g, ast.Constant) and isinstance(g.value, str)}
    return codes


def test_the_json_page_lists_every_plan_warning_code_as_stable():
    page = _text("json-formats.md")
    stable = page.split("Warning `code`s are stable:", 1)[1].split("\n- ", 1)[0]
    listed = set(re.findall(r"`([a-z]+(?:-[a-z]+)*)`", stable))
    codes = _plan_warning_codes()
    assert len(codes) >= 15, codes
    assert codes - listed == set(), "plan warning codes missing from docs/json-formats.md's stable list"
    assert listed - codes == set(), "docs/json-formats.md lists codes the planner never gives"


def test_the_layout_page_names_every_module_in_its_package():
    """docs/layout.md is where a newcomer looks a rule's home up: a module it does not name
    (or names under another package) cannot be found from it."""
    text = (DOCS / "layout.md").read_text()
    tree = text[text.index("```\nddb2bigtable/"):]
    tree = tree[:tree.index("\n```", 4)]
    starts = sorted((m.start(), m.group(1)) for m in re.finditer(r"^  ([a-z_]+)/", tree, re.M))
    blocks = {name: tree[start:end] for (start, name), (end, _) in zip(starts, [*starts[1:], (len(tree), "")], strict=True)}
    missing = []
    for module in sorted((ROOT / "ddb2bigtable").glob("*/**/*.py")):
        package = module.relative_to(ROOT / "ddb2bigtable").parts[0]
        if module.stem != "__init__" and module.stem not in re.findall(r"\w+", blocks.get(package, "")):
            missing.append(str(module.relative_to(ROOT)))
    assert missing == [], "name these in docs/layout.md, in their package's paragraph"
