"""Resume state of a load: which data files are finished, and what they counted.

A load is idempotent (same keys, same cell timestamps), so the state only saves time: a
rerun skips finished files and rewrites the rest. The state is keyed by a fingerprint of
the export (its manifest) and of the mapping, so a changed export or mapping starts over
instead of resuming into a different result. Written atomically (write + rename), so a
kill at any moment leaves the previous state intact.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .work_folder import private_dir, private_open


@dataclass
class FileCounts:
    read: int = 0
    loaded: int = 0
    expired: int = 0
    dead_lettered: int = 0
    deleted: int = 0
    sampled_out: int = 0

    def add(self, other: FileCounts) -> None:
        for name, value in asdict(other).items():
            setattr(self, name, getattr(self, name) + value)


@dataclass
class LoadState:
    fingerprint: str
    done: dict[str, FileCounts] = field(default_factory=dict)
    types: dict[str, str] | None = None

    @classmethod
    def open(cls, path: Path, fingerprint: str) -> LoadState:
        if path.is_file():
            data = json.loads(path.read_text())
            if data.get("fingerprint") == fingerprint:
                return cls(fingerprint, {k: FileCounts(**v) for k, v in data["done"].items()}, data.get("types"))
        return cls(fingerprint)

    def save(self, path: Path) -> None:
        """Atomically, and for its owner only: the types and counts describe the data."""
        private_dir(path.parent)
        tmp = path.with_suffix(".tmp")
        document: dict[str, Any] = {"fingerprint": self.fingerprint, "types": self.types,
                                    "done": {k: asdict(v) for k, v in self.done.items()}}
        with private_open(tmp) as out:
            out.write(json.dumps(document, indent=1, sort_keys=True))
        os.replace(tmp, path)


def fingerprint(*parts: object) -> str:
    """A stable digest of the export and mapping identity (sorted JSON of the parts)."""
    text = json.dumps(parts, sort_keys=True, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()[:32]
