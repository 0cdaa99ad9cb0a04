"""Which export folders `up` loads, and which it was given and leaves alone.

`up` loads `<exports>/<table id>/` for each table of its specs. A folder named otherwise
(after the DynamoDB table, `ShopOrders/`, instead of the table id, `shoporders`) used to be
passed over without a word while its table was created empty and the stage called ready.
Now every export folder (one holding `AWSDynamoDB/`) that no table id names is named back,
with the table it was probably meant for: an error when nothing at all would be loaded, a
warning otherwise (docs/cli.md, `up`).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path

from ..exports.manifests import AWS_FOLDER
from ..spec.model import TableSpec

CLOSE = 0.8  # difflib's ratio from which a folder name is taken for a misspelt table id


@dataclass(frozen=True)
class UnusedExport:
    folder: str  # the folder's name under the exports folder
    nearest: str | None  # the table id it was probably meant for (a table left without data)

    @property
    def advice(self) -> str:
        guess = f"; did you mean {self.nearest}? (rename the folder to {self.nearest})" if self.nearest else ""
        return f"matches no table id{guess}"

    def warning(self, exports: Path) -> str:
        return f"{exports / self.folder}/ {self.advice}: not loaded"


def export_folders(exports: Path) -> list[str]:
    """The names of the folders under `exports` that hold an export, sorted."""
    if not exports.is_dir():
        return []
    return sorted(p.name for p in exports.iterdir() if (p / AWS_FOLDER).is_dir())


def unused_exports(folders: list[str], tables: list[TableSpec]) -> list[UnusedExport]:
    """The export folders no table id names, each with its nearest table among those no
    folder names: the table id or DynamoDB table name it equals but for case, else the id
    it is closest to (difflib ratio >= CLOSE on lower case)."""
    ids = {t.id for t in tables}
    empty = [t for t in tables if t.id not in folders]
    return [UnusedExport(name, _nearest(name, empty)) for name in folders if name not in ids]


def _nearest(name: str, tables: list[TableSpec]) -> str | None:
    lower = name.lower()
    for table in tables:
        if lower in (table.id.lower(), table.source.table.lower()):
            return table.id
    scored = sorted((difflib.SequenceMatcher(None, lower, t.id.lower()).ratio(), t.id) for t in tables)
    return scored[-1][1] if scored and scored[-1][0] >= CLOSE else None
