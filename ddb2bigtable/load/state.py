"""Resume state of a load: which data files are finished, and what they counted.

A load is idempotent (same keys, same cell timestamps), so the state only saves time: a
rerun skips finished files and rewrites the rest. The finished files are keyed by a
fingerprint of the export (its manifest) and of the mapping, so a changed export or mapping
starts over instead of resuming into a different result. What describes the table itself
outlives one export: `table_types`, the types its cells were written with across every
export loaded into it (a later export encodes with them, and `verify` decodes with them,
whichever export it checks), and `chain`, the exports applied to it in order, so an
incremental that does not continue them is refused (load/chain.py). All of it is bound
to the target it was written for (project, instance, table and endpoint: a new emulator
listens elsewhere), so a load into another table never trusts it. A state can still
outlive its rows (a table dropped and recreated under the same name): `spot_check` reads
a sample of the rows it counts before a load says it is complete. Written atomically
(write + rename), so a kill at any moment leaves the previous state intact.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import orjson

from ..bigtable.emulator import EMULATOR_ENV
from ..spec.errors import InputError, Problem
from .chain import Link
from .work_folder import replace_private

STATE_FILE = "state.json"  # in a load's work folder: finished files, types, chain, target


@dataclass
class FileCounts:
    read: int = 0
    loaded: int = 0
    expired: int = 0
    dead_lettered: int = 0
    deleted: int = 0
    sampled_out: int = 0
    # Loaded items per type of each attribute stored as typed DynamoDB JSON
    # (attribute -> tag -> items): what made it so, for the report (load/forms.py).
    forms: dict[str, dict[str, int]] = field(default_factory=dict)

    def add(self, other: FileCounts) -> None:
        for name, value in asdict(other).items():
            if name == "forms":
                for attribute, tags in value.items():
                    mine = self.forms.setdefault(attribute, {})
                    for tag, items in tags.items():
                        mine[tag] = mine.get(tag, 0) + items
            else:
                setattr(self, name, getattr(self, name) + value)


@dataclass
class LoadState:
    fingerprint: str
    done: dict[str, FileCounts] = field(default_factory=dict)
    types: dict[str, str] | None = None  # this export's encoding types (None: not inferred yet)
    target: dict[str, str] | None = None  # where the done files were written (`target` below)
    table_types: dict[str, str] = field(default_factory=dict)  # the table's cells, across exports
    chain: tuple[Link, ...] = ()  # the exports applied to the table, in order (load/chain.py)

    @classmethod
    def open(cls, path: Path, fingerprint: str, target: dict[str, str] | None = None,
             *, fresh: str | None = None, export_id: str | None = None) -> tuple[LoadState, str | None]:
        """The state to resume from, or a new one and the sentence that says why. A damaged
        state starts over (writes are idempotent); a folder in its place is bad input.
        Another export (or mapping) of the same target keeps what the table holds
        (`table_types`) and starts its own files over."""
        if path.exists() and not path.is_file():
            raise InputError([Problem.about(str(path), "", "is not a file, so it cannot hold the load's resume "
                                            f"state: delete it (rm -r {path}) and rerun the load")])
        if not path.is_file():
            return cls(fingerprint, target=target), None
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            done = {str(k): FileCounts(**v) for k, v in data["done"].items()}
            types = data.get("types")
            if types is not None and not isinstance(types, dict):
                raise TypeError(f"types is {type(types).__name__}")
            table_types = data.get("table_types", types or {})  # states before table_types: the export's
            if not isinstance(table_types, dict):
                raise TypeError(f"table_types is {type(table_types).__name__}")
            chain = tuple(Link(**link) for link in data.get("chain", []))
        except (OSError, UnicodeDecodeError, ValueError, TypeError, KeyError, AttributeError) as error:
            return cls(fingerprint, target=target), (f"the resume state {path} is damaged ({type(error).__name__}: "
                                                     f"{error}); starting over (writes are idempotent)")
        if fresh:
            return cls(fingerprint, target=target), f"{fresh}: the resume state in {path} is ignored"
        if target is not None and data.get("target") != target:
            written = data.get("target") or "an unrecorded target"
            return cls(fingerprint, target=target), (f"the resume state in {path} was written for {written}, not "
                                                     f"{target}; starting over")
        if data.get("fingerprint") != fingerprint:
            new = cls(fingerprint, target=target, table_types=table_types, chain=chain)
            if chain and export_id is not None and export_id != chain[-1].export_id:
                return new, (f"export {export_id} comes after {chain[-1].export_id} in the table's recorded chain: "
                             f"every data file of it is loaded")
            return new, (f"the export or the mapping changed since the resume state in {path} was written; every "
                         f"data file is loaded (the table's recorded types and export chain are kept)")
        return cls(fingerprint, done, types, target, table_types, chain), None

    def save(self, path: Path) -> None:
        """Atomically, and for its owner only: the types and counts describe the data.

        With orjson, which writes the dataclasses itself: a load saves several times, the
        first before its first row, and the standard library's indenting encoder (pure
        Python, after `asdict` copies) took 30 times as long. Every name in it is valid
        UTF-8, as orjson requires: the export reader and the spec refuse a lone surrogate."""
        document: dict[str, Any] = {"fingerprint": self.fingerprint, "types": self.types, "target": self.target,
                                    "table_types": self.table_types, "chain": self.chain, "done": self.done}
        replace_private(path, orjson.dumps(document, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode())


def fingerprint(*parts: object) -> str:
    """A stable digest of the export and mapping identity (sorted JSON of the parts)."""
    text = json.dumps(parts, sort_keys=True, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def target(project: str, instance_id: str, table_id: str) -> dict[str, str]:
    """Where rows go: a resume state is valid for this target only. The endpoint tells two
    emulators apart (each runs on its own port) and the emulator from the cloud."""
    endpoint = os.environ.get(EMULATOR_ENV) or "bigtable.googleapis.com"
    return {"project": project, "instance": instance_id, "table": table_id, "endpoint": endpoint}
