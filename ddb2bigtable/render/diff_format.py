"""`diff` output: stable JSON, markdown for a PR comment (updatable by its marker), terminal."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..plan.model import ClusterPlan
from ..review.change import Change
from ..review.diff import StageDiff, stage_summary, summary
from .markdown_blocks import CELL_LIMIT, arithmetic, contrast, escape, folded, nodes, nodes_chart, table

MARKER = "<!-- ddb2bigtable-diff -->"  # a CI job finds and updates its own comment by this
# GitHub refuses a comment body over 65,536 characters: "Body is too long (maximum is 65536
# characters)", the REST API's 422 for https://docs.github.com/rest/issues/comments#create-an-issue-comment
# (reported by CI tools since 2016, e.g. danger/danger#424; checked 2026-11-25). Keep a margin.
COMMENT_LIMIT = 65_000
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
                         "why": c.why, "brief": c.short_why} for c in d.changes],
            "clusters": [{"scope": m.scope, "nodes": {"before": m.before.nodes if m.before else None,
                                                      "after": m.after.nodes if m.after else None},
                          "buy": {"before": m.before.nodes_text if m.before else None,
                                  "after": m.after.nodes_text if m.after else None}} for m in d.clusters],
        } for d in diffs],
    }


def _flagged(stage: str, c: Change) -> str:
    """One line: where, what, both sides when they are short, and the reason in one sentence."""
    sides = f" ({c.before} → {c.after})" if len(c.before) + len(c.after) <= 60 else ""
    return f"- **{c.flag}** {stage} `{c.scope}`: {escape(c.what + sides)}: {escape(c.why or c.after)}"


def _side(c: ClusterPlan | None, absent: str) -> str:
    return absent if c is None else nodes(c)


def _chart(d: StageDiff) -> list[str]:
    """Expected nodes of every cluster of the instances whose clusters moved, before and after."""
    several = len({m.instance for m in d.clusters}) > 1
    bars, notes = [], ["expected nodes per cluster, before → after"]
    for m in d.clusters:
        label = f"{m.instance} {m.region}" if several else m.region
        bars += [(f"{label} before", m.before.nodes if m.before else 0),
                 (f"{label} after", m.after.nodes if m.after else 0)]
        notes.append(f"{m.scope}: {_side(m.before, 'absent')} → {_side(m.after, 'removed')}")
    return nodes_chart(f"{d.stage}: expected nodes per cluster", bars, notes) if bars else []


def _arithmetic(d: StageDiff, base: str, head: str) -> list[str]:
    """Each moved cluster's whole sizing arithmetic, after and before, each cluster folded on its own."""
    out = []
    for m in d.clusters:
        if not m.moved:
            continue
        body = []
        for label, ref, c in (("after", head, m.after), ("before", base, m.before)):
            if c is not None:
                body += [f"**{label}** (`{ref}`), zone {c.zone}:", "", *arithmetic(c), ""]
        out += folded(f"{d.stage} <code>{m.scope}</code>: {_side(m.before, 'absent')} → {_side(m.after, 'removed')}, "
                      "the arithmetic", body)
    return out


_COLUMNS = ("where", "what", "before", "after", "flag", "why")


def _row(c: Change) -> tuple[str, ...]:
    """The change's table cells before clipping: two long texts that differ in a few words show those words."""
    before, after = c.before, c.after
    if max(len(before), len(after)) > CELL_LIMIT and before != after:
        before, after = contrast(before, after)
    return c.scope, c.what, before, after, c.flag or "", c.short_why


def _stage(d: StageDiff, base: str, head: str, folds: bool = True) -> list[str]:
    """The stage's changes table, its chart, the folded arithmetic and the full text of every shortened cell
    (without `folds`, a line saying where to read them)."""
    rows = [_row(c) for c in d.changes]
    lines, clipped = table(_COLUMNS, rows)
    clipped_at = {(row, column) for row, column, _ in clipped}
    arithmetic_shown = {m.after.why for m in d.clusters if m.moved and m.after}
    full = []
    for index, (c, row) in enumerate(zip(d.changes, rows, strict=True)):
        originals = (c.scope, c.what, c.before, c.after, c.flag or "", c.short_why)
        full += [f"- `{c.scope}` {escape(c.what)}, {column}: {escape(original)}"
                 for column, cell, original in zip(_COLUMNS, row, originals, strict=True)
                 if cell != original or (index, column) in clipped_at]
        if c.brief and c.why not in (c.brief, c.before, c.after, *arithmetic_shown):
            full.append(f"- `{c.scope}` {escape(c.what)}, why in full: {escape(c.why)}")
    out = [*lines, "", *_chart(d)]
    if not folds:
        out += [f"_{d.stage}'s arithmetic and full texts are left out to keep this comment under GitHub's "
                f"{COMMENT_LIMIT:,}-character limit: `ddb2bigtable diff --stage {d.stage} --format markdown` "
                f"prints them._", ""]
    else:
        out += _arithmetic(d, base, head)
        if full:
            out += folded(f"{d.stage}: the full text behind {len(full)} short cell{'s' if len(full) != 1 else ''}",
                          full)
    count = len(d.changes)
    flags = _flags(d)
    return folded(f"<b>{d.stage}</b>: {count} change{'s' if count != 1 else ''}"
                  + (f" ({flags})" if flags != "-" else ""), out)


def to_markdown(diffs: list[StageDiff], base: str, head: str | None) -> str:
    """The pull-request comment. Its first screen: one line per stage, the totals table, the destructive
    and risky changes one line each. Below, each changed stage folded in one `<details>`: the changes
    table (short cells), a chart of nodes and the arithmetic folded again."""
    head = head or "working tree"
    lines, _ = table(("stage", "nodes", "Bigtable / month", "DynamoDB / month", "flags"), [
        (d.stage, _nodes(d), _money(d.bigtable_before, d.bigtable_after), _money(d.dynamodb_before, d.dynamodb_after),
         _flags(d)) for d in diffs])
    out = [MARKER, f"### ddb2bigtable diff: `{base}` → `{head}`", "",
           *(f"- {escape(stage_summary(d))}" for d in diffs), "", *lines, ""]
    flagged = [_flagged(d.stage, c) for flag in ("DESTRUCTIVE", "RISK") for d in diffs for c in d.changes
               if c.flag == flag]
    if flagged:
        out += ["**Destructive and risky changes**", "", *flagged, ""]
    changed = [d for d in diffs if d.changes]
    stages = [_stage(d, base, head) for d in changed]
    for index in reversed(range(len(changed))):  # the last stages give up their folded text first
        if len("\n".join(out + [line for stage in stages for line in stage])) < COMMENT_LIMIT:
            break
        stages[index] = _stage(changed[index], base, head, folds=False)
    return "\n".join(out + [line for stage in stages for line in stage]).rstrip("\n") + "\n"


def print_diff(diffs: list[StageDiff], base: str, head: str | None, console: Console) -> None:
    console.print(Text(f"{base} → {head or 'working tree'}", style="bold"))
    for d in diffs:
        console.print(Text(f"  {stage_summary(d)}", style="bold"))
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
            why = c.brief if not c.flag or c.why in (c.before, c.after) else c.why  # never a side twice
            console.print(Text(f"  {d.stage} {c.scope}: {flag}{c.what} {c.before} → {c.after}"
                               + (f" ({why})" if why else ""), style=style))
