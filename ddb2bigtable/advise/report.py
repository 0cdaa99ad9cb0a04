"""The advisor's report three ways: sections for the terminal, markdown for a PR comment,
and JSON (version 1, docs/json-formats.md; the codes in docs/advise.md) for tools. All three
carry the same facts."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..render.markdown import section_table
from ..render.sections import Section
from .findings import CHECKED, SEVERITIES, Finding
from .run import Report

JSON_VERSION = 1


def _ordered(report: Report) -> list[Finding]:
    """Worst first, then by table and code, so two runs on the same input read the same."""
    return sorted(report.findings, key=lambda f: (-SEVERITIES.index(f.severity), f.table, f.code))


def _sampled(report: Report) -> Section:
    return Section("Sampled", ("table", "items", "of", "files", "seconds"), tuple(
        (s.table, f"{s.items:,}", f"{s.export_items:,}", f"{s.files_read}/{s.files}", f"{s.seconds:.2f}")
        for s in report.sampled), tuple(f"{s.table}: lines read that are not items: {s.bad_lines:,} (load "
                                        "dead-letters them)" for s in report.sampled if s.bad_lines))


def _count(n: int, severity: str) -> str:
    return f"{n} {severity}" + ("s" if n != 1 and severity != "info" else "")


def counts(report: Report) -> str:
    """`0 errors, 2 warnings, 1 info (spec checks only: ...)`: the report in one line."""
    found = ", ".join(_count(sum(f.severity == s for f in report.findings), s) for s in reversed(SEVERITIES))
    return found + ("" if report.sampled else " (spec checks only: no --export)")


def tripped(report: Report, severity: str | None) -> list[str]:
    """`--fail-on SEVERITY`: the rule's line with its figure (how many findings, which codes on
    which tables), or nothing when no finding is that severe."""
    hits = [f for f in _ordered(report) if severity and f.at_least(severity)]
    if not hits:
        return []
    named = "; ".join(f"{f.severity} {f.code} ({f.table})" for f in hits[:3])
    more = f"; and {len(hits) - 3} more" if len(hits) > 3 else ""
    return [f"--fail-on {severity}: {len(hits)} finding{'s' if len(hits) != 1 else ''} at {severity} or worse "
            f"({named}{more})"]


def _listed(findings: list[Finding]) -> Section:
    return Section("Findings", ("severity", "code", "table", "evidence"),
                   tuple((f.severity, f.code, f.table, f.evidence) for f in findings))


def sections(report: Report) -> list[Section]:
    """The terminal's tables: what was read, then the findings with each suggestion,
    snippet and public source as a note under the table (the table itself stays narrow)."""
    findings = _ordered(report)
    notes = tuple(f"{f.code} ({f.table}): {f.suggestion}" + (f"\n{f.snippet}" if f.snippet else "")
                  + f"\nsource: {f.source}" for f in findings)
    return ([_sampled(report)] if report.sampled else []) + ([replace(_listed(findings), notes=notes)]
                                                             if findings else [])


def to_markdown(report: Report) -> str:
    """A PR comment: counts, the findings table, then each finding's fix folded."""
    findings = _ordered(report)
    out = [f"## ddb2bigtable advise: {', '.join(f'`{t}`' for t in report.tables)}", "", f"{counts(report)}.", ""]
    if report.sampled:
        out += ["**Sampled**", "", *section_table(_sampled(report)), ""]
    if findings:
        out += ["**Findings**", "", *section_table(_listed(findings)), ""]
    for f in findings:
        out += [f"<details><summary><code>{f.code}</code> ({f.table}): what to change</summary>", "",
                f.suggestion, ""]
        if f.snippet:
            out += ["```yaml", f.snippet, "```", ""]
        out += [f"Source: [{f.source.page.title} § {f.source.section}]({f.source.page.url})", "", "</details>", ""]
    return "\n".join(out)


def to_json(report: Report) -> dict[str, Any]:
    return {
        "version": JSON_VERSION,
        "specs": list(report.specs),
        "tables": list(report.tables),
        "sampled": [{"table": s.table, "export": s.export, "items": s.items, "export_items": s.export_items,
                     "files_read": s.files_read, "files": s.files, "bad_lines": s.bad_lines,
                     "seconds": round(s.seconds, 3)}
                    for s in report.sampled],
        "findings": [{"code": f.code, "severity": f.severity, "table": f.table, "evidence": f.evidence,
                      "seed": {"file": f.source.seed_file, "heading": f.source.seed_heading,
                               "english": f.source.section},
                      "source": {"page": f.source.page.title, "section": f.source.section,
                                 "url": f.source.page.url, "checked": CHECKED},
                      "suggestion": f.suggestion, "snippet": f.snippet or None}
                     for f in _ordered(report)],
    }
