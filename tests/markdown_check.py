"""Markdown that a real renderer (markdown-it, CommonMark + GFM tables) reads as whole tables."""

from __future__ import annotations

import re

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


def table_cells(text: str) -> list[str]:
    """The source text of every table cell in `text` (header cells included), as the renderer reads it."""
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    return [tok.content for prev, tok in zip(tokens, tokens[1:], strict=False)
            if prev.type in ("th_open", "td_open") and tok.type == "inline"]


def figures(text: str) -> set[str]:
    """The numbers in a text as written (`24,000`, `0.58`, `35`), to check that a shorter form kept them."""
    return set(re.findall(r"\d[\d,]*(?:\.\d+)?", text))
