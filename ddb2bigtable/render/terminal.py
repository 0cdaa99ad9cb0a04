"""The plan for a person at a terminal: rich tables, warnings in yellow."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..plan.model import StagePlan
from .sections import Section, instance_sections, stage_totals


def _print(section: Section, console: Console) -> None:
    table = Table(title=section.title, title_justify="left")
    for header in section.headers:
        table.add_column(header, overflow="fold")
    for row in section.rows:
        table.add_row(*(Text(cell) for cell in row))  # plan text is data, never markup
    console.print(table)
    for note in section.notes:
        console.print(Text("  " + note, style="dim"))


def print_plan(plan: StagePlan, console: Console) -> None:
    _print(stage_totals(plan), console)
    for instance in plan.instances:
        console.rule(f"[bold]{instance.id}[/] ({instance.spec_file})")
        for section in instance_sections(instance):
            _print(section, console)
    for w in plan.warnings:
        where = w.instance + (f"/{w.table}" if w.table else "")
        console.print(Text.assemble(("warning ", "yellow"), f"{w.code} {where}: {w.message}"))
