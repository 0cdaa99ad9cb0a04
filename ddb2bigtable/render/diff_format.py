"""`diff` output: stable JSON, markdown for a PR comment (updatable by its marker), terminal."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..review.diff import StageDiff, summary

MARKER = "<!-- ddb2bigtable-diff -->"  # a CI job finds and updates its own comment by this
FORMAT_VERSION = 1


def _money(before: float, after: float) -> str:
    delta = after - before
    if abs(delta) < 0.005:
        return f"${after:,.0f}"
    percent = f", {100 * delta / before:+.0f} %" if before else ""
    return f"${before:,.0f} → ${after:,.0f} ({'+' if delta > 0 else '-'}${abs(delta):,.0f}{percent})"


def _nodes(d: StageDiff) -> str:
    return str(d.nodes_after) if d.nodes_before == d.nodes_after else f"{d.nodes_before} → {d.nodes_after}"


def _flags(d: StageDiff) -> str:
    parts = ([f"{d.destructive} DESTRUCTIVE"] if d.destructive else []) + ([f"{d.risks} RISK"] if d.risks else [])
    return ", ".join(parts) or "-"


def to_json(diffs: list[StageDiff], base: str, head: str | None) -> dict[str, Any]:
    def cost(before: float, after: float) -> dict[str, Any]:
        return {"before": before, "after": after, "delta": round(after - before, 2),
                "percent": round(100 * (after - before) / before, 1) if before else None}

    return {
        "version": FORMAT_VERSION, "base": base, "head": head or "working tree", "summary": summary(diffs),
        "destructive": sum(d.destructive for d in diffs), "risks": sum(d.risks for d in diffs),
        "stages": [{
            "stage": d.stage, "status": d.status,
            "nodes": {"before": d.nodes_before, "after": d.nodes_after},
            "cost": {"bigtable": cost(d.bigtable_before, d.bigtable_after),
                     "dynamodb": cost(d.dynamodb_before, d.dynamodb_after)},
            "destructive": d.destructive, "risks": d.risks,
            "changes": [{"scope": c.scope, "what": c.what, "before": c.before, "after": c.after, "flag": c.flag,
                         "why": c.why} for c in d.changes],
        } for d in diffs],
    }


def _cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def to_markdown(diffs: list[StageDiff], base: str, head: str | None) -> str:
    out = [MARKER, f"### ddb2bigtable diff: `{base}` → `{head or 'working tree'}`", "",
           f"**{summary(diffs)}**", "",
           "| stage | nodes | Bigtable / month | DynamoDB / month | flags |", "|---|---|---|---|---|"]
    for d in diffs:
        out.append(f"| {d.stage} | {_nodes(d)} | {_money(d.bigtable_before, d.bigtable_after)} | "
                   f"{_money(d.dynamodb_before, d.dynamodb_after)} | {_flags(d)} |")
    for d in diffs:
        if not d.changes:
            continue
        flagged = [c for c in d.changes if c.flag]
        out += ["", f"<details{' open' if any(c.flag == 'DESTRUCTIVE' for c in flagged) else ''}>"
                    f"<summary>{d.stage}: {len(d.changes)} change(s), {_flags(d)}</summary>", "",
                "| where | what | before | after | flag | why |", "|---|---|---|---|---|---|"]
        out += [f"| {_cell(c.scope)} | {_cell(c.what)} | {_cell(c.before)} | {_cell(c.after)} | "
                f"{'**' + c.flag + '**' if c.flag else ''} | {_cell(c.why)} |" for c in d.changes]
        out += ["", "</details>"]
    return "\n".join(out) + "\n"


def print_diff(diffs: list[StageDiff], base: str, head: str | None, console: Console) -> None:
    console.print(Text(f"{base} → {head or 'working tree'}: {summary(diffs)}", style="bold"))
    overview = Table()
    for header in ("stage", "nodes", "Bigtable / month", "DynamoDB / month", "flags"):
        overview.add_column(header)
    for d in diffs:
        overview.add_row(d.stage, _nodes(d), _money(d.bigtable_before, d.bigtable_after),
                         _money(d.dynamodb_before, d.dynamodb_after), Text(_flags(d)))
    console.print(overview)
    for d in diffs:
        for c in d.changes:
            style = "red" if c.flag == "DESTRUCTIVE" else "yellow" if c.flag == "RISK" else ""
            flag = f"{c.flag}: " if c.flag else ""
            console.print(Text(f"  {d.stage} {c.scope}: {flag}{c.what} {c.before} → {c.after}"
                               + (f" ({c.why})" if c.why and c.flag else ""), style=style))
