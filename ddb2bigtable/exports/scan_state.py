"""The checkpoint of `ddb2bigtable export` (a parallel Scan), so a crashed export resumes
where it stopped, with no item written twice and none left out.

One JSON file, `<DIR>/.ddb2bigtable-scan.json`, owner-only (0600: the keys it holds are
table data), replaced whole after every data file a segment finishes: that file's entry
and the segment's LastEvaluatedKey after its last item are saved together, so on resume
a segment continues from exactly the item after the files it has. A data file a crash
left half-written is not in the checkpoint; the resumed segment writes it again under
the same name (names come from the export id, the segment and the file's number). The
checkpoint is deleted once the manifests are written: then the folder is a finished export.
"""

from __future__ import annotations

import base64
import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson

from ..codec.items import Item
from ..spec.errors import InputError, Problem

CHECKPOINT = ".ddb2bigtable-scan.json"
LOCK = ".ddb2bigtable-scan.lock"
VERSION = 1
Key = Item  # a LastEvaluatedKey: the table's key attributes (S, N or B)


@dataclass(frozen=True)
class DoneFile:
    """A data file a segment finished: its name (no extension), items, MD5 and raw size."""

    name: str
    count: int
    md5: str  # base64, as manifest-files.json's md5Checksum
    size: int


@dataclass
class Segment:
    """Where one segment of the Scan is: its finished files and the key to go on from."""

    files: list[DoneFile] = field(default_factory=list)
    key: Key | None = None  # None with no files: not started; None with files: see `done`
    done: bool = False


@dataclass
class ScanState:
    table_arn: str
    export_id: str
    start: datetime
    items_per_file: int
    segments: list[Segment]
    consumed: float = 0.0  # read capacity units the Scan's pages consumed so far

    def to_json(self) -> bytes:
        return orjson.dumps({
            "version": VERSION, "table_arn": self.table_arn, "export_id": self.export_id,
            "start": self.start.isoformat(), "items_per_file": self.items_per_file, "consumed": self.consumed,
            "segments": [{"files": [[f.name, f.count, f.md5, f.size] for f in s.files],
                          "key": _key_json(s.key), "done": s.done} for s in self.segments],
        })


@contextmanager
def only_writer(dest: Path) -> Iterator[None]:
    """`dest` for this export alone: a second one would interleave its data files and
    checkpoint with this one's. An flock, released when the process ends, so a killed
    export never keeps its resume out; the lock file goes when the export is finished."""
    fd = os.open(dest / LOCK, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise InputError([Problem.about(str(dest), "-o", "another `ddb2bigtable export` is writing this folder "
                                            "now: wait for it to end (a rerun then resumes or refuses a finished "
                                            "export), or give -o another folder")]) from None
        yield
    finally:
        os.close(fd)


def checkpoint_path(dest: Path) -> Path:
    return dest / CHECKPOINT


def save(dest: Path, state: ScanState) -> None:
    """The checkpoint replaced whole (a temporary file, then a rename), 0600 from its first byte."""
    path = checkpoint_path(dest)
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, state.to_json())
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)


def load(dest: Path) -> ScanState | None:
    """The checkpoint in `dest`, None when there is none; InputError (exit 2) when it is not
    one this tool wrote."""
    path = checkpoint_path(dest)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    try:
        data = orjson.loads(raw)
        if data.get("version") != VERSION:
            raise ValueError(f"version {data.get('version')!r}, expected {VERSION}")
        return ScanState(
            table_arn=str(data["table_arn"]), export_id=str(data["export_id"]),
            start=datetime.fromisoformat(data["start"]), items_per_file=int(data["items_per_file"]),
            consumed=float(data["consumed"]),
            segments=[Segment([DoneFile(str(n), int(c), str(m), int(z)) for n, c, m, z in s["files"]],
                              _key_from_json(s["key"]), bool(s["done"])) for s in data["segments"]])
    except (orjson.JSONDecodeError, ValueError, KeyError, TypeError) as error:
        raise InputError([Problem.about(str(path), "", f"not a checkpoint of `ddb2bigtable export` ({error}); "
                                        f"give -o a new folder, or delete this file to start the export "
                                        f"again")]) from None


def _key_json(key: Key | None) -> dict[str, dict[str, str]] | None:
    if key is None:
        return None
    return {name: {"B": base64.b64encode(v["B"]).decode()} if "B" in v else dict(v) for name, v in key.items()}


def _key_from_json(value: Any) -> Key | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ValueError("a segment's key is not an object")
    return {str(name): {"B": base64.b64decode(v["B"])} if "B" in v else {str(t): str(x) for t, x in v.items()}
            for name, v in value.items()}
