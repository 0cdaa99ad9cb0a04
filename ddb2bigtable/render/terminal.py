"""The plan for a person at a terminal: rich tables, warnings in yellow."""

from __future__ import annotations

from rich import box
from rich.console import Console
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from ..plan.model import StagePlan
from .sections import Section, instance_sections, serve_section, stage_totals

WORD_MAX = 34  # an id (30 characters at most) with punctuation: never split, never cut


def column_widths(section: Section, console_width: int) -> list[int]:
    """Each column's width: its longest cell, narrowed (widest first) to fit the console,
    but never below its longest word, so ids stay whole and cells wrap between words.

    Rich's own collapsing crops the last column rather than wrap a middle one when
    minimum widths are set, hence the explicit widths. A SIMPLE_HEAD table without edge
    padding takes 3 characters per column, less one, besides its cells."""
    cells = [(header, *(row[n] for row in section.rows)) for n, header in enumerate(section.headers)]
    widths = [max(len(c) for c in column) for column in cells]
    floors = [min(WORD_MAX, max(len(w) for c in column for w in c.split() or [""])) for column in cells]
    budget = console_width - (3 * len(widths) - 1)
    while sum(widths) > budget:
        room = [w - f for w, f in zip(widths, floors, strict=True)]
        widest = max(range(len(widths)), key=lambda n: (room[n] > 0, widths[n]))
        if room[widest] <= 0:
            break
        widths[widest] -= 1
    return widths


def print_section(section: Section, console: Console) -> None:
    table = Table(title=section.title or None, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    for header, width in zip(section.headers, column_widths(section, console.width), strict=True):
        table.add_column(header, width=max(1, width))
    for row in section.rows:
        table.add_row(*(Text(cell) for cell in row))  # plan text is data, never markup
    console.print(table)
    for note in section.notes:  # wrapped between words, under a hanging indent
        console.print(Padding(Text(note, style="dim"), (0, 0, 0, 2)))


def print_plan(plan: StagePlan, console: Console) -> None:
    print_section(stage_totals(plan), console)
    if plan.serve:
        print_section(serve_section(plan.serve), console)
    for instance in plan.instances:
        console.rule(f"[bold]{instance.id}[/] ({instance.spec_file})")
        for section in instance_sections(instance):
            print_section(section, console)
    for w in plan.warnings:
        where = w.instance + (f"/{w.table}" if w.table else "")
        console.print(Text.assemble(("warning ", "yellow"), f"{w.code} {where}: {w.message}"))
