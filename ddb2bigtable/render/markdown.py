"""Markdown for pull-request comments: GitHub-flavoured tables, details folded."""

from __future__ import annotations

from ..plan.model import StagePlan
from .sections import Section, instance_sections, stage_totals


def _cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def section_table(section: Section) -> list[str]:
    out = ["| " + " | ".join(_cell(h) for h in section.headers) + " |",
           "|" + "|".join("---" for _ in section.headers) + "|"]
    out += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in section.rows]
    if section.notes:
        out += ["", *(f"- {note}" for note in section.notes)]
    return out


def to_markdown(plan: StagePlan) -> str:
    totals = stage_totals(plan)
    project = f", GCP project `{plan.project}`" if plan.project else ""
    out = [f"## ddb2bigtable plan: stage `{plan.stage}`{project}", "", *section_table(totals), ""]
    for instance in plan.instances:
        out += [f"### Instance `{instance.id}` ({instance.spec_file})", ""]
        for section in instance_sections(instance):
            if section.title.endswith("cost lines"):
                out += [f"<details><summary>{section.title}</summary>", "", *section_table(section), "",
                        "</details>", ""]
            else:
                out += [f"**{section.title}**", "", *section_table(section), ""]
    if plan.warnings:
        out += ["### Warnings", ""]
        out += [f"- **{w.code}** `{w.instance}`" + (f" / `{w.table}`" if w.table else "") + f": {w.message}"
                for w in plan.warnings]
        out.append("")
    return "\n".join(out)
