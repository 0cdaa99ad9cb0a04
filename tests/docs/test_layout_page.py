"""docs/layout.md and the engine's docstrings are a newcomer's map: every arrow they draw
must be one tests/test_layout.py allows, and every module file they name must exist, or
the map sends a reader to code that is not there (docstrings once named a `machines.py`,
and the page drew room arrows the layout test forbids)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from ..test_layout import ALLOWED, ROOMS

ROOT = Path(__file__).resolve().parents[2]
PAGE = (ROOT / "docs" / "layout.md").read_text(encoding="utf-8")
SOURCE_FOLDERS = ("ddb2bigtable", "components", "tests", "benchmarks", "scripts")
ARROW = re.compile(r"`(\w+) -> (?:\(([^)`]*)\)|(\w+))`")
KERNEL_ONLY = re.compile(r"((?:`\w+`(?:,\s+|\s+and\s+)?)+)\s+imports? (?:the kernel only|no other package)")


def _section(start: str, end: str) -> str:
    text = PAGE[PAGE.index(start):]
    return " ".join(text[:text.index(end)].split())


def _arrows(text: str) -> dict[str, set[str]]:
    drawn: dict[str, set[str]] = {}
    for source, several, one in ARROW.findall(text):
        drawn[source] = {t.strip() for t in (several or one).split(",") if t.strip()}
    for names in KERNEL_ONLY.findall(text):
        drawn |= {name: set() for name in re.findall(r"`(\w+)`", names)}
    return drawn


def test_the_package_arrows_on_the_page_are_the_layout_tests():
    drawn = _arrows(_section("## Arrows between packages", "No import circles"))
    allowed = {package: goals for package, goals in ALLOWED.items() if package not in ("program", "__main__")}
    assert drawn == allowed


def test_the_room_arrows_on_the_page_are_the_layout_tests():
    drawn = _arrows(_section("Between rooms, imports follow", "Every room may import"))
    rooms = {room.split(".")[1]: {goal.split(".")[1] for goal in goals} for room, goals in ROOMS.items()}
    assert drawn == rooms


def _ours() -> set[str]:
    return {p.name for folder in SOURCE_FOLDERS for p in (ROOT / folder).rglob("*.py")} | {
        p.name for p in ROOT.glob("*.py")}


def test_module_files_the_page_and_the_docstrings_name_exist():
    """A `name.py` on the page or in a module's docstring is one of ours (a link into another
    project carries its host); the page's 'it was `old.py`' notes name what a module was."""
    ours = _ours()
    named = [("docs/layout.md", m.group(1)) for m in re.finditer(r"\b([a-z_0-9]+\.py)\b", PAGE)
             if not re.search(r"it was\s+`$", PAGE[max(0, m.start() - 12):m.start()])]
    for module in sorted((ROOT / "ddb2bigtable").rglob("*.py")):
        doc = ast.get_docstring(ast.parse(module.read_text(encoding="utf-8"))) or ""
        named += [(str(module.relative_to(ROOT)), m) for m in re.findall(r"(?<![/\w.])([a-z_0-9]+\.py)\b", doc)]
    assert [(where, name) for where, name in named if name not in ours] == []
