"""The two manifests of a DynamoDB export to S3, read and checked before any data file.

Layout (AWS's "DynamoDB table export output format" page, checked against a real export):

    <prefix>/AWSDynamoDB/<exportId>/manifest-summary.json   one JSON object
    <prefix>/AWSDynamoDB/<exportId>/manifest-files.json     JSON lines: itemCount, md5Checksum,
                                                              etag, dataFileS3Key per data file
    <prefix>/AWSDynamoDB/<exportId>/data/<name>.json.gz     full exports
    <prefix>/AWSDynamoDB/data/<name>.json.gz                incremental exports (shared folder)

Manifest keys are bucket keys (they carry `<prefix>/`), so wherever the export was copied
they resolve from their `AWSDynamoDB/` segment on, against the folder that holds the
export's own folder.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cached_property
from typing import Any

import orjson

from ..codec.timestamps import micros_of
from ..spec.file_limits import MAX_BYTES
from .errors import ExportError
from .locations import store_for
from .stores import Store, read_at_most

FULL_EXPORT = "FULL_EXPORT"
INCREMENTAL_EXPORT = "INCREMENTAL_EXPORT"
OUTPUT_FORMATS = ("DYNAMODB_JSON", "ION")
SUMMARY = "manifest-summary.json"
AWS_FOLDER = "AWSDynamoDB"

# A line of manifest-files.json is one data file's entry, about 250 bytes as AWS writes it
# (its key is a bucket key, at most 1,024 bytes: S3's own limit); a longer line is damage.
MAX_MANIFEST_LINE = 64 * 1024

# Looking for exports below a location lists at most MAX_FOLDERS folders, MAX_DEPTH deep:
# a prefix holding a table's exports has a handful; more means the location is too broad.
MAX_FOLDERS = 10_000
MAX_DEPTH = 16


@dataclass(frozen=True)
class DataFile:
    key: str  # dataFileS3Key as in the manifest (relative to the export's base)
    item_count: int
    md5: str  # md5Checksum as written by AWS: base64 of the MD5 of the stored .gz bytes


@dataclass(frozen=True)
class Manifest:
    location: str  # what the user gave
    export_arn: str | None
    export_type: str  # "FULL_EXPORT" | "INCREMENTAL_EXPORT"
    output_format: str  # "DYNAMODB_JSON" | "ION"
    item_count: int
    export_time_micros: int  # exportTime (full) or exportToTime (incremental), epoch microseconds
    files: tuple[DataFile, ...]
    root: str  # URL of the folder playing AWS's `AWSDynamoDB/`: data keys resolve against it
    export_id: str  # the id in exportArn (`.../export/<id>`), else the export's folder name
    export_from_time_micros: int  # exportFromTime (incremental) or exportTime (full): where its window starts
    table_arn: str | None = None  # tableArn: the DynamoDB table the export was taken from

    @cached_property
    def files_by_key(self) -> dict[str, DataFile]:
        """The data files by key: the resume state, the encoders' lanes and Beam's elements name them so."""
        return {f.key: f for f in self.files}

    @property
    def table_name(self) -> str | None:
        """The table name in tableArn (`arn:aws:dynamodb:REGION:ACCOUNT:table/NAME`)."""
        if not self.table_arn or "table/" not in self.table_arn:
            return None
        return self.table_arn.split("table/", 1)[1].split("/", 1)[0]


def open_export(location: str) -> Manifest:
    """Read and check both manifests of the export at `location` (no data is read yet).

    `location` is a local folder, `file://`, `s3://BUCKET/PREFIX` or `gs://BUCKET/PREFIX`
    (stores.py): the export's own `AWSDynamoDB/<id>/` folder, its `manifest-summary.json`,
    or any prefix holding exactly one `AWSDynamoDB/<id>/manifest-summary.json`.
    """
    store, path = store_for(location)
    summary_path = _find_summary(store, path, location)
    summary = _read_summary(store, summary_path)
    root = _parent(_parent(summary_path))
    files_path = _resolve(root, _string(summary, "manifestFilesS3Key", summary_path), summary_path)
    store.inside(root, files_path, summary_path)
    files = _read_files_manifest(store, files_path)
    for f in files:
        store.inside(root, _resolve(root, f.key, files_path), files_path)
    export_type = summary.get("exportType", FULL_EXPORT)
    item_count = _count(summary.get("itemCount"), f"{summary_path}: itemCount")
    listed = sum(f.item_count for f in files)
    if listed != item_count:
        raise ExportError(f"{files_path}: the data files hold {listed} items but {summary_path} says "
                          f"{item_count}; the manifests belong to different exports or one is cut "
                          f"short: copy the export folder again")
    time_field, from_field = ("exportTime", "exportTime") if export_type == FULL_EXPORT else \
        ("exportToTime", "exportFromTime")
    arn = summary.get("exportArn")
    return Manifest(
        location=location,
        export_arn=arn,
        export_type=export_type,
        output_format=summary["outputFormat"],
        item_count=item_count,
        export_time_micros=_micros(_string(summary, time_field, summary_path), f"{summary_path}: {time_field}"),
        files=files,
        root=root,
        export_id=arn.rsplit("/export/", 1)[1] if isinstance(arn, str) and "/export/" in arn else
        _parent(summary_path).rsplit("/", 1)[-1],
        export_from_time_micros=_micros(_string(summary, from_field, summary_path), f"{summary_path}: {from_field}"),
        table_arn=summary.get("tableArn") if isinstance(summary.get("tableArn"), str) else None,
    )


Digest = Any  # hashlib's md5 object (hashlib names no public type for it)


def file_digest() -> Digest:
    """An empty md5, for the bytes of one data file (manifest-files.json's md5Checksum)."""
    return hashlib.md5(usedforsecurity=False)


def verify_file(manifest: Manifest, f: DataFile) -> None:
    """Check the stored `.gz` bytes against the manifest's md5Checksum, streaming them."""
    store, path = data_path(manifest, f)
    digest = file_digest()
    try:
        with store.open(path) as stream:
            while chunk := stream.read(1 << 20):
                digest.update(chunk)
    except FileNotFoundError:
        raise missing_file(f, path) from None
    check_digest(manifest, f, digest)


def check_digest(manifest: Manifest, f: DataFile, digest: Digest) -> None:
    """ExportError unless `digest`, fed every stored byte of the data file, is its
    md5Checksum: `verify_file`'s check, for a pass that read the bytes itself."""
    actual = base64.b64encode(digest.digest()).decode()
    if actual != f.md5:
        _, path = data_path(manifest, f)
        raise ExportError(f"{path}: md5 is {actual} but manifest-files.json says {f.md5} for {f.key}; "
                          f"the file was changed or damaged after AWS wrote it: copy it again from the export")


# --- finding and reading the manifests ----------------------------------------------------

def _find_summary(store: Store, path: str, location: str) -> str:
    if path.endswith("/" + SUMMARY) and store.is_file(path):
        return path
    if store.is_file(f"{path}/{SUMMARY}"):
        return f"{path}/{SUMMARY}"
    found = _summaries(store, path, location)
    if len(found) > 1:
        listing = ", ".join(_parent(p) for p in found)
        raise ExportError(f"{location}: holds {len(found)} exports ({listing}); give one of these folders")
    return found[0]


def _summaries(store: Store, path: str, location: str) -> list[str]:
    """Every `AWSDynamoDB/<exportId>/manifest-summary.json` below `path`, sorted; at least
    one. Folders are listed one level at a time (a bucket lists no data files this way),
    at most MAX_FOLDERS of them, MAX_DEPTH deep."""
    top = store.folders(path)
    if top is None:
        raise ExportError(f"{location}: no such folder; give the folder the export was written to")
    found: list[str] = []
    pending, listed = [(path, top, 0)], 0
    while pending:
        folder, names, depth = pending.pop()
        for name in names if depth < MAX_DEPTH else []:
            listed += 1
            if listed > MAX_FOLDERS:
                raise ExportError(f"{location}: more than {MAX_FOLDERS:,} folders below it were looked through "
                                  f"for exports; give the export's own folder or the prefix holding AWSDynamoDB/")
            if folder.rsplit("/", 1)[-1] == AWS_FOLDER:
                if store.is_file(f"{folder}/{name}/{SUMMARY}"):
                    found.append(f"{folder}/{name}/{SUMMARY}")
            else:
                pending.append((f"{folder}/{name}", store.folders(f"{folder}/{name}") or [], depth + 1))
    if not found:
        raise ExportError(f"{location}: no {AWS_FOLDER}/<exportId>/{SUMMARY} below it; give the prefix "
                          f"the export was written to or the export's own folder")
    return sorted(found)


def export_folders(location: str) -> list[str]:
    """The folder of every export below `location`: AWS writes a table's full export and
    its incremental exports side by side (`<prefix>/AWSDynamoDB/<exportId>/`), so one
    prefix holds a whole chain (`load --chain`)."""
    store, path = store_for(location)
    if store.is_file(f"{path}/{SUMMARY}"):
        return [location]
    return [_parent(summary) for summary in _summaries(store, path, location)]


def _read_summary(store: Store, path: str) -> dict[str, Any]:
    try:
        with store.open(path) as stream:
            text = read_at_most(stream, MAX_BYTES + 1)
    except FileNotFoundError:
        raise ExportError(f"{path}: missing; give the folder the export was written to") from None
    if len(text) > MAX_BYTES:
        raise ExportError(f"{path}: larger than {MAX_BYTES:,} bytes; AWS writes a summary of a few hundred bytes: "
                          f"is this a DynamoDB export manifest?")
    summary = _json_object(text, path)
    output_format = summary.get("outputFormat")
    if output_format not in OUTPUT_FORMATS:
        raise ExportError(f"{path}: outputFormat {output_format!r} is not one AWS writes "
                          f"({' or '.join(OUTPUT_FORMATS)}); is this a DynamoDB export manifest?")
    export_type = summary.get("exportType", FULL_EXPORT)
    if export_type not in (FULL_EXPORT, INCREMENTAL_EXPORT):
        raise ExportError(f"{path}: exportType {export_type!r} is neither {FULL_EXPORT} nor {INCREMENTAL_EXPORT}")
    return summary


def _lines(stream: Any, path: str) -> Iterator[tuple[int, bytes]]:
    """(number, line) of a manifest, each line at most MAX_MANIFEST_LINE bytes: a manifest
    that is one endless line must not be read into memory."""
    tail, line_no = b"", 0
    while chunk := stream.read(1 << 20):
        lines = (tail + chunk).split(b"\n")
        tail = lines.pop()
        for line in lines:
            line_no += 1
            yield line_no, line
        if len(tail) > MAX_MANIFEST_LINE:
            raise ExportError(f"{path}:{line_no + 1}: a line longer than {MAX_MANIFEST_LINE:,} bytes; AWS writes "
                              f"one short JSON object per data file: the manifest is damaged, copy it again")
    if tail:
        yield line_no + 1, tail


def _read_files_manifest(store: Store, path: str) -> tuple[DataFile, ...]:
    files: list[DataFile] = []
    try:
        with store.open(path) as stream:
            for line_no, line in _lines(stream, path):
                if line.strip():
                    where = f"{path}:{line_no}"
                    entry = _json_object(line, where)
                    files.append(DataFile(
                        key=_plain_key(_string(entry, "dataFileS3Key", where), where),
                        item_count=_count(entry.get("itemCount"), f"{where}: itemCount"),
                        md5=_string(entry, "md5Checksum", where),
                    ))
    except FileNotFoundError:
        raise ExportError(f"{path}: missing; manifest-summary.json names it as the list of data files: "
                          f"copy the whole export folder") from None
    return tuple(files)


def _json_object(text: bytes, where: str) -> dict[str, Any]:
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError as err:
        raise ExportError(f"{where}: not valid JSON ({err}); the manifest is damaged: copy it again") from None
    if not isinstance(value, dict):
        raise ExportError(f"{where}: expected a JSON object, found {type(value).__name__}")
    return value


def _string(entry: dict[str, Any], field: str, where: str) -> str:
    value = entry.get(field)
    if not isinstance(value, str) or not value:
        raise ExportError(f"{where}: {field} is missing or not text; the manifest is damaged: copy it again")
    return value


def _count(value: object, where: str) -> int:
    if type(value) is not int or value < 0:
        raise ExportError(f"{where}: expected a whole number >= 0, found {value!r}")
    return value


def _micros(text: str, where: str) -> int:
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise ExportError(f"{where}: {text!r} is not an ISO-8601 time") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return micros_of(moment)


def _parent(path: str) -> str:
    return path.rsplit("/", 1)[0]


def _plain_key(key: str, where: str) -> str:
    """Manifests often come from another team's bucket, so a key is a name, never a path:
    no `.`/`..` segment, no leading `/`, no backslash or NUL, or it could name any file
    the loader can read (and its lines would land in the dead letters)."""
    segments = key.split("/")
    if key.startswith("/") or "\\" in key or "\0" in key or any(s in (".", "..") for s in segments):
        raise ExportError(f"{where}: key {key!r} is not a plain bucket key (it has a '..' or '.' segment, a "
                          f"leading '/', a backslash or a NUL); AWS never writes one: the manifest was "
                          f"edited, so get the export again from its owner")
    return key


def _resolve(root: str, key: str, where: str) -> str:
    """A manifest key (a bucket key, maybe under a prefix) as a path below `root`."""
    _plain_key(key, where)
    at = key.rfind(AWS_FOLDER + "/")
    if at < 0 or (at > 0 and key[at - 1] != "/"):
        raise ExportError(f"{where}: key {key!r} has no {AWS_FOLDER}/ segment; it is not a DynamoDB export key")
    return f"{root}/{key[at + len(AWS_FOLDER) + 1:]}"


def data_path(manifest: Manifest, f: DataFile) -> tuple[Store, str]:
    """Where a data file is: inside the export's folder (the store opens only a regular file)."""
    store, root = store_for(manifest.root)
    path = _resolve(root, f.key, "manifest-files.json")
    store.inside(root, path, "manifest-files.json")
    return store, path


def missing_file(f: DataFile, path: str) -> ExportError:
    return ExportError(f"{path}: missing; manifest-files.json lists {f.key} with {f.item_count} items: "
                       f"copy the whole export folder, data/ included")
