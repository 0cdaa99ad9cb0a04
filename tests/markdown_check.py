"""Markdown that a real renderer (markdown-it, CommonMark + GFM tables) reads as whole tables."""

from __future__ import annotations

from markdown_it import MarkdownIt


def table_row_widths(text: str) -> list[list[int]]:
    """For each table in `text`, the cell count of every row (header included)."""
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    tables, widths, cells = [], [], 0
    for tok in tokens:
        if tok.type == "table_open":
            widths = []
        elif tok.type == "tr_open":
            cells = 0
        elif tok.type in ("th_open", "td_open"):
            cells += 1
        elif tok.type == "tr_close":
            widths.append(cells)
        elif tok.type == "table_close":
            tables.append(widths)
    return tables
