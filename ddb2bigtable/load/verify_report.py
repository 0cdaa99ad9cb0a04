"""What `verify` found, and why it failed: the report `load/verify.py` fills and the
renderers (render/load_report.py) show. Its `reasons` are the first words of every output
of a failed verification, so no exit 1 comes without its cause."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..codec.items import Item
from ..exports.reader import Record
from .chain import iso
from .later_writes import after_export, why_not_after

MAX_EXAMPLES = 20
CHAIN = "CHAIN"  # the export type of a report against a chain's final state (`verify --chain`)


@dataclass
class VerifyReport:
    table: str
    export: str
    export_type: str
    manifest_items: int
    sampled: bool
    checked: int = 0
    matched: int = 0
    missing: int = 0
    mismatched: int = 0
    expired: int = 0
    dead_lettered: int = 0
    deleted_absent: int = 0
    table_items: int | None = None  # items decoded from a full scan (full exports, no sample)
    locked_rows: int = 0  # rows a serve transaction still holds (load/locks.py): said, not an error
    export_time_micros: int | None = None  # the manifest's exportTime (a chain's: its last export's)
    changed_after: int = 0  # export items whose row differs, written after the export: expected
    added_after: int = 0  # items the table holds beyond the export, written after it: expected
    not_in_export: int = 0  # items the table holds beyond the export, no later write explains: a failure
    key_names: tuple[str, ...] = ()  # the table's key attributes, naming items in examples
    lossy: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what to know though it verified (an index no item enters)
    examples: list[dict[str, Any]] = field(default_factory=list)
    later: list[dict[str, Any]] = field(default_factory=list)  # examples of changed_after and added_after
    strays: list[dict[str, Any]] = field(default_factory=list)  # examples of not_in_export
    seconds: float = 0.0

    @property
    def accounted(self) -> int | None:
        """The export's items the table accounts for: those it holds (beyond the export left
        out), expired and dead-lettered; None when the table was not scanned."""
        if self.table_items is None:
            return None
        return self.table_items - self.added_after - self.not_in_export + self.expired + self.dead_lettered

    @property
    def export_time(self) -> str:
        return iso(self.export_time_micros) if self.export_time_micros is not None else "unknown"

    @property
    def reasons(self) -> list[str]:
        """Why the verification failed, in the words every output starts with (empty: ok)."""
        why = []
        if self.missing:
            why.append(f"{self.missing:,} item(s) of the export missing from the table")
        if self.mismatched:
            why.append(f"{self.mismatched:,} item(s) differ from the export")
        if self.not_in_export:
            why.append(f"{self.not_in_export:,} item(s) in the table not in the export and not written after it")
        if self.accounted is not None and self.accounted != self.manifest_items:
            why.append(f"accounted for {self.accounted:,} of the manifest's {self.manifest_items:,} items")
        return why

    @property
    def ok(self) -> bool:
        return not self.reasons

    def problem(self, record: Record, kind: str, detail: str) -> None:
        if len(self.examples) < MAX_EXAMPLES:
            self.examples.append({"file": record.file, "line": record.line, "problem": kind, "detail": detail})

    def changed(self, record: Record, row_key: bytes, written: int | None, detail: str) -> None:
        """An export item its row no longer equals, written after the export: expected."""
        self.changed_after += 1
        self._later(row_key, record.item or record.keys, written, "changed after the export", detail)

    def beyond(self, row_key: bytes, item: Item | None, written: int | None, unreadable: str = "") -> None:
        """An item the table holds that the export does not, judged by when its row was
        written; a row that cannot be read back (`unreadable` says why) is wrong whenever."""
        if not unreadable and after_export(written, self.export_time_micros):
            self.added_after += 1
            self._later(row_key, item, written, "added after the export", "")
        else:
            self.not_in_export += 1
            if len(self.strays) < MAX_EXAMPLES:
                self.strays.append({**self._named(row_key, item, written), "problem": "not in the export",
                                    "detail": unreadable or why_not_after(written, self.export_time_micros or 0,
                                                                               self.export_time)})

    def _later(self, row_key: bytes, item: Item | None, written: int | None, problem: str, detail: str) -> None:
        if len(self.later) < MAX_EXAMPLES:
            self.later.append({**self._named(row_key, item, written), "problem": problem, "detail": detail})

    def _named(self, row_key: bytes, item: Item | None, written: int | None) -> dict[str, Any]:
        return {"row_key": row_key.decode("utf-8", "replace"),
                "key": {name: item[name] for name in self.key_names if name in item} if item else None,
                "written": iso(written) if written is not None else None}
