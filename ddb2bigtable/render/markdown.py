"""Markdown for pull-request comments: GitHub-flavoured tables, details folded.

`plan --format markdown` reads like `diff`'s comment: the totals and the warnings first, a
chart of nodes per cluster, then each instance's tables with short cells; each cluster's
sizing arithmetic is folded below its table, verbatim.
"""

from __future__ import annotations

from dataclasses import replace

from ..plan.model import InstancePlan, StagePlan
from .markdown_blocks import arithmetic, escape, folded, nodes, nodes_chart, table
from .sections import Section, instance_sections, serve_section, stage_totals


def _cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def section_table(section: Section, clip: bool = False) -> list[str]:
    """A section as a table and its notes; with `clip`, cells longer than the comment's limit are
    shortened and their full text added to the notes."""
    if clip:
        out, cut = table(section.headers, section.rows)
        notes = [*(escape(n) for n in section.notes),
                 *(f"{escape(section.rows[row][0])}, {escape(column)}: {escape(text)}" for row, column, text in cut)]
    else:
        out = ["| " + " | ".join(_cell(h) for h in section.headers) + " |",
               "|" + "|".join("---" for _ in section.headers) + "|"]
        out += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in section.rows]
        notes = list(section.notes)
    if notes:
        out += ["", *(f"- {note}" for note in notes)]
    return out


def _chart(plan: StagePlan) -> list[str]:
    bars, notes = [], ["expected nodes per cluster"]
    for i in plan.instances:
        for c in i.clusters:
            bars.append((f"{i.id} {c.gcp_region}", c.nodes))
            notes.append(f"{i.id}/cluster {c.gcp_region}: {nodes(c)}")
    return nodes_chart(f"{plan.stage}: expected nodes per cluster", bars, notes)


def _instance(instance: InstancePlan) -> list[str]:
    out = [f"### Instance `{instance.id}` ({instance.spec_file})", ""]
    for section in instance_sections(instance):
        if section.title.endswith("cost lines"):
            out += folded(section.title, section_table(section, clip=True))
        elif section.title == "Clusters":
            out += [f"**{section.title}**", "", *section_table(replace(section, notes=()), clip=True), ""]
            for c in instance.clusters:
                out += folded(f"<code>{c.id}</code> (zone {c.zone}): {nodes(c)}, the arithmetic",
                              arithmetic(c))
        else:
            out += [f"**{section.title}**", "", *section_table(section, clip=True), ""]
    return out


def to_markdown(plan: StagePlan) -> str:
    totals = stage_totals(plan)
    project = f", GCP project `{plan.project}`" if plan.project else ""
    out = [f"## ddb2bigtable plan: stage `{plan.stage}`{project}", "", *section_table(totals, clip=True), ""]
    if plan.warnings:
        out += [f"**{len(plan.warnings)} warning{'s' if len(plan.warnings) != 1 else ''}**", ""]
        out += [f"- **{w.code}** `{w.instance}`" + (f" / `{w.table}`" if w.table else "") + f": {escape(w.message)}"
                for w in plan.warnings]
        out.append("")
    if plan.serve:
        out += ["**Serve**", "", *section_table(serve_section(plan.serve), clip=True), ""]
    out += _chart(plan)
    for instance in plan.instances:
        out += _instance(instance)
    return "\n".join(out)
