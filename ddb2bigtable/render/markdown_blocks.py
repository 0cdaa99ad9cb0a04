"""Pieces of a pull-request comment shared by `plan` and `diff` markdown.

Infracost's comment is the convention reviewers know: the totals first, a compact table,
the long text folded away. So a table cell holds at most `CELL_LIMIT` characters, cut at a
clause boundary; whatever was cut is printed in full in a folded section below, and a
cluster's sizing arithmetic is folded verbatim, one clause a line. A chart is drawn in
Mermaid (GitHub renders it); its `%%` comment lines carry the same numbers as text, so
where Mermaid is not rendered (mail notifications, other forges) the code block still reads.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..plan.model import ClusterPlan

CELL_LIMIT = 120  # characters in one table cell, escapes included
_BOUNDARIES = ("; ", ": ", ", ", " (", " ")


def escape(text: str) -> str:
    """Text as it reads, never as markup: pipes would end a table cell, `<` would start HTML, `_` and `*`
    would emphasise. Code spans the text already has (`mapping.salt`) stay code; only their pipes are escaped."""
    parts = re.split(r"(`[^`]*`)", text.replace("\n", " "))
    return "".join(part.replace("|", "\\|") if part.startswith("`") and part.endswith("`") and len(part) > 1
                   else re.sub(r"([\\*_~\[\]|])", r"\\\1", part).replace("<", "&lt;").replace(">", "&gt;")
                   for part in parts)


def clip(text: str, limit: int = CELL_LIMIT) -> tuple[str, bool]:
    """`text` escaped for a cell; when longer than `limit`, cut at the last clause boundary that fits
    and marked with `…` (the caller prints the full text elsewhere). Returns (cell, cut)."""
    cell = escape(text)
    if len(cell) <= limit:
        return cell, False
    for boundary in _BOUNDARIES:
        end = cell.rfind(boundary, 0, limit - 1)
        if end > limit // 3 and not cell[:end].endswith("\\"):
            return cell[:end].rstrip(",;:") + "…", True
    return cell[:limit - 1] + "…", True


def contrast(before: str, after: str, context: int = 3) -> tuple[str, str]:
    """The words where two long texts differ, with `context` words around them: a changed warning
    reads `…copied to all 3 clusters (more…` → `…copied to all 2 clusters (more…`, where
    clipping both at the same clause would show two identical cells."""
    a, b = before.split(" "), after.split(" ")
    prefix = 0
    while prefix < min(len(a), len(b)) and a[prefix] == b[prefix]:
        prefix += 1
    suffix = 0
    while suffix < min(len(a), len(b)) - prefix and a[-1 - suffix] == b[-1 - suffix]:
        suffix += 1

    def part(words: list[str]) -> str:
        start, end = max(0, prefix - context), min(len(words), len(words) - suffix + context)
        return ("…" if start else "") + " ".join(words[start:end]) + ("…" if end < len(words) else "")

    return part(a), part(b)


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> tuple[list[str], list[tuple[int, str, str]]]:
    """A GFM table whose cells are clipped; returns (lines, (row index, header, full text) of each cut cell)."""
    cut: list[tuple[int, str, str]] = []
    lines = ["| " + " | ".join(escape(h) for h in headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    for index, row in enumerate(rows):
        cells = []
        for header, text in zip(headers, row, strict=True):
            cell, was_cut = clip(text)
            cells.append(cell)
            if was_cut:
                cut.append((index, header, text))
        lines.append("| " + " | ".join(cells) + " |")
    return lines, cut


def folded(summary: str, body: Sequence[str], open_: bool = False) -> list[str]:
    """A `<details>` section; the blank lines let GitHub render the markdown inside it."""
    body = list(body)
    while body and not body[-1]:
        body.pop()
    return [f"<details{' open' if open_ else ''}><summary>{summary}</summary>", "", *body, "", "</details>", ""]


def clauses(why: str) -> list[str]:
    """A plan's why, verbatim, one clause a line: its sentences, and the first sentence's `;` parts
    (one per table of the load)."""
    sentences = re.split(r"(?<=\.) (?=[A-Z])", why.strip())
    parts = [part for part in sentences[0].split("; ")] + sentences[1:]
    return [p for p in parts if p]


def arithmetic(c: ClusterPlan) -> list[str]:
    """A cluster's whole sizing arithmetic as the plan gives it, as a markdown list."""
    lines = [f"- {escape(part)}" for part in clauses(c.why)]
    if c.autoscaling:
        lines += [f"- Autoscaling: {escape(part)}" for part in c.autoscaling.why.split("; ")]
    return lines


def nodes(c: ClusterPlan) -> str:
    """`1 node`, `16 nodes (autoscaling 10-28)`: the expected count, and the range bought around it."""
    return f"{c.nodes} node{'s' if c.nodes != 1 else ''}" + (f" (autoscaling {c.nodes_text})" if c.autoscaling else "")


def nodes_chart(title: str, bars: Sequence[tuple[str, int]], notes: Sequence[str]) -> list[str]:
    """A Mermaid bar chart of node counts, with `notes` (the same numbers in words) as comment lines
    first, so the unrendered code block reads as a list."""
    top = max((n for _, n in bars), default=1)
    labels = ", ".join('"' + label.replace('"', "'") + '"' for label, _ in bars)
    return ["```mermaid", "xychart-beta", *(f"    %% {note}" for note in notes),
            f'    title "{title}"', f"    x-axis [{labels}]", f'    y-axis "nodes" 0 --> {top + 1}',
            f"    bar [{', '.join(str(n) for _, n in bars)}]", "```", ""]
