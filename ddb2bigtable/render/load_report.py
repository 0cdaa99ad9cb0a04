"""Load and verify reports: JSON (stable, `--format json`) and text for people."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..load.locks import locked_note
from ..load.reports import LoadReport
from ..load.verify_report import VerifyReport
from .sections import Section
from .terminal import print_section

SHOWN_LATER = 5  # examples of items written after the export on screen (JSON has up to 20)


def load_json(r: LoadReport) -> dict[str, Any]:
    return {
        "table": r.table, "instance": r.instance, "export": r.export, "export_type": r.export_type,
        "output_format": r.output_format, "manifest_items": r.manifest_items,
        "loaded": r.total("loaded"), "expired": r.total("expired"), "dead_lettered": r.total("dead_lettered"),
        "deleted": r.total("deleted"), "sampled_out": r.total("sampled_out"), "accounted": r.accounted,
        "complete": r.complete, "seconds": round(r.seconds, 3), "items_per_second": round(r.items_per_second, 1),
        "dead_letters": r.dead_letters, "lossy": r.lossy, "typed_json": r.typed_json, "error": r.error,
        "notes": r.notes,
        "files": [{"file": f.file, "manifest_items": f.manifest_items, "status": f.status, "error": f.error,
                   "read": f.counts.read, "loaded": f.counts.loaded, "expired": f.counts.expired,
                   "dead_lettered": f.counts.dead_lettered, "deleted": f.counts.deleted,
                   "sampled_out": f.counts.sampled_out} for f in r.files],
    }


def verify_json(r: VerifyReport) -> dict[str, Any]:
    return {
        "table": r.table, "export": r.export, "export_type": r.export_type, "manifest_items": r.manifest_items,
        "sampled": r.sampled, "checked": r.checked, "matched": r.matched, "missing": r.missing,
        "mismatched": r.mismatched, "expired": r.expired, "dead_lettered": r.dead_lettered,
        "deleted_absent": r.deleted_absent, "table_items": r.table_items, "accounted": r.accounted,
        "ok": r.ok, "lossy": r.lossy, "examples": r.examples, "seconds": round(r.seconds, 3),
        "locked_rows": r.locked_rows, "reasons": r.reasons, "notes": r.notes,
        "export_time": None if r.export_time_micros is None else r.export_time,
        "after_export": {"changed": r.changed_after, "added": r.added_after, "examples": r.later},
        "not_in_export": {"items": r.not_in_export, "examples": r.strays},
    }


def print_load(r: LoadReport, console: Console) -> None:
    verdict = ("[green]complete[/]" if r.complete else "[red]INCOMPLETE[/]")
    console.print(f"load {r.table} ({r.instance}) from {r.export} [{r.export_type}, {r.output_format}]: {verdict}")
    for note in r.notes:
        console.print(Text(f"  note: {note}", style="yellow"))
    table = Table(show_header=True, title_justify="left")
    for header in ("manifest", "loaded", "expired", "dead-lettered", "deleted", "sampled out", "items/s"):
        table.add_column(header, justify="right")
    table.add_row(*(str(x) for x in (r.manifest_items, r.total("loaded"), r.total("expired"),
                                      r.total("dead_lettered"), r.total("deleted"), r.total("sampled_out"),
                                      f"{r.items_per_second:,.0f}")))
    console.print(table)
    for f in r.files:
        if f.status != "loaded" or f.error:
            console.print(Text(f"  {f.file}: {f.status}" + (f" ({f.error})" if f.error else "")))
    if r.dead_letters:
        console.print(Text(f"  dead letters (file, line, reason; one JSONL file per data file): {r.dead_letters}/"))
    for sentence in r.lossy:
        console.print(Text(f"  mapping keeps less than the item: {sentence}", style="yellow"))
    for sentence in r.typed_json:
        console.print(Text(f"  form changed: {sentence}", style="yellow"))
    if r.error:
        console.print(Text(f"  error: {r.error}", style="red"))


def print_verify(r: VerifyReport, console: Console) -> None:
    verdict = Text("ok", style="green") if r.ok else Text("FAILED: " + "; ".join(r.reasons), style="red")
    scope = "a sample of" if r.sampled else "every item of"
    # the verdict and its reasons first, on one line even in a pipe (a script reads it whole)
    console.print(Text(f"verify {r.table}: ").append_text(verdict), soft_wrap=True)
    console.print(Text(f"  against {scope} {r.export}"))
    print_section(Section("", ("checked", "matched", "missing", "different", "expired", "dead letters", "in table"),
                          ((*(f"{x:,}" for x in (r.checked, r.matched, r.missing, r.mismatched, r.expired,
                                                 r.dead_lettered)),
                            "-" if r.table_items is None else f"{r.table_items:,}"),)), console)
    if r.deleted_absent:  # a chain's deleted keys are checked too: checked = matched + these + the rest
        console.print(Text(f"  matched includes {r.deleted_absent:,} keys the chain deleted last, absent as they "
                           f"should be: checked = the table's items + those"))
    if r.accounted is not None:
        beyond = r.added_after + r.not_in_export
        console.print(Text(f"  accounted for {r.accounted:,} of the manifest's {r.manifest_items:,} items"
                           + (f"; the table holds {beyond:,} more, beyond the export" if beyond else "")))
    if r.changed_after or r.added_after:
        console.print(Text(f"  written after the export ({r.export_time}): {r.changed_after:,} changed, "
                           f"{r.added_after:,} added: expected while serve or replicate writes, not a difference",
                           style="yellow"))
    if r.locked_rows:
        console.print(Text(f"  note: {locked_note(r.locked_rows)}", style="yellow"))
    for note in r.notes:
        console.print(Text(f"  note: {note}", style="yellow"))
    for example in r.examples:
        console.print(Text(f"  {example['file']}:{example['line']}: {example['problem']}: {example['detail']}"))
    for example in (*r.strays, *r.later[:SHOWN_LATER]):
        named = ", ".join(f"{k}={next(iter(v.values()))}" for k, v in (example["key"] or {}).items())
        detail = f": {example['detail']}" if example["detail"] else ""
        console.print(Text(f"  row {example['row_key']}" + (f" ({named})" if named else "")
                           + f": {example['problem']}{detail}"))


def print_up_summary(loads: list[LoadReport], verifies: list[VerifyReport], console: Console, *,
                     notes: bool = True) -> None:
    """One line per table: what the export held, where each item went, whether verify agreed;
    a failed table's whole report; the mapping's notes unless `notes` is False (`up`'s
    one screen: they are in its report file)."""
    table = Table(title="Loaded and verified", title_justify="left")
    for header in ("table", "export", "items", "loaded", "expired", "dead", "verified", "items/s"):
        table.add_column(header, justify="left" if header in ("table", "export", "verified") else "right")
    for r, v in zip(loads, verifies, strict=True):
        verdict = Text("ok", style="green") if v.ok and r.complete else Text("FAILED", style="red")
        kind = "incremental" if r.export_type == "INCREMENTAL_EXPORT" else "full"
        table.add_row(r.table, f"{kind} {'ION' if r.output_format == 'ION' else 'JSON'}",
                      str(r.manifest_items), str(r.total("loaded")), str(r.total("expired")),
                      str(r.total("dead_lettered")), verdict, f"{r.items_per_second:,.0f}")
    console.print(table)
    for r, v in zip(loads, verifies, strict=True):
        if not (r.complete and v.ok):  # the whole report, these lines included
            print_load(r, console)
            print_verify(v, console)
            continue
        if r.dead_letters:
            console.print(Text(f"  {r.table}: dead letters in {r.dead_letters}/"))
        for note in v.notes:  # what to know even when it all verified (an index no item enters)
            console.print(Text(f"  {r.table}: note: {note}", style="yellow"))
        if not notes:
            continue
        for sentence in r.lossy:
            console.print(Text(f"  {r.table}: the mapping keeps less than the item: {sentence}", style="dim"))
        for sentence in r.typed_json:
            console.print(Text(f"  {r.table}: form changed: {sentence}", style="yellow"))
