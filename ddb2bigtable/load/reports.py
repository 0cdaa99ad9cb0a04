"""What a load reports: per data file and for the whole export, shared by the local loader
and the Beam runner, so both count, judge completeness and word a short file alike."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..exports.manifests import DataFile
from .forms import form_sentences
from .state import FileCounts


@dataclass
class FileReport:
    file: str
    manifest_items: int
    counts: FileCounts
    status: str  # "loaded" | "resumed: already loaded" | "failed" ("pending" while the load runs)
    error: str | None = None

    @classmethod
    def resumed(cls, f: DataFile, counts: FileCounts) -> FileReport:
        """A file an earlier run loaded: its counts come from the resume state."""
        return cls(f.key, f.item_count, counts, "resumed: already loaded")

    @classmethod
    def loaded(cls, f: DataFile, counts: FileCounts) -> FileReport:
        """A file read to its end; fewer or more lines than the manifest promises is an error
        of the export (a truncated copy), said next to the file."""
        short = (f"{f.key}: the manifest promises {f.item_count} items, the file holds {counts.read} lines"
                 if counts.read != f.item_count else None)
        return cls(f.key, f.item_count, counts, "loaded", short)


@dataclass
class LoadReport:
    table: str
    instance: str
    export: str
    export_type: str
    output_format: str
    manifest_items: int
    files: list[FileReport] = field(default_factory=list)
    lossy: list[str] = field(default_factory=list)
    seconds: float = 0.0
    dead_letters: str | None = None  # the folder of per-file JSONL parts, when any line was refused
    error: str | None = None
    notes: list[str] = field(default_factory=list)  # what the user should know: resume state ignored, ...

    def total(self, name: str) -> int:
        return sum(getattr(f.counts, name) for f in self.files)

    @property
    def typed_json(self) -> list[str]:
        """Which attributes changed form to typed DynamoDB JSON, why, and how many items."""
        total = FileCounts()
        for f in self.files:
            total.add(f.counts)
        return form_sentences(total.forms)

    @property
    def accounted(self) -> int:
        names = ("loaded", "expired", "dead_lettered", "sampled_out", "deleted")
        return sum(self.total(n) for n in names)

    @property
    def complete(self) -> bool:
        return self.error is None and all(f.status != "failed" for f in self.files) \
            and self.accounted == self.manifest_items

    @property
    def items_per_second(self) -> float:
        written = sum(f.counts.read for f in self.files if f.status == "loaded")
        return written / self.seconds if self.seconds else 0.0
