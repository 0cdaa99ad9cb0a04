"""Reads a DynamoDB export to S3 exactly as AWS writes it: manifests first, then data.

Layout (AWS's "DynamoDB table export output format" page, checked against a real export):

    <prefix>/AWSDynamoDB/<exportId>/manifest-summary.json   one JSON object
    <prefix>/AWSDynamoDB/<exportId>/manifest-files.json     JSON lines: itemCount, md5Checksum,
                                                              etag, dataFileS3Key per data file
    <prefix>/AWSDynamoDB/<exportId>/data/<name>.json.gz     full exports
    <prefix>/AWSDynamoDB/data/<name>.json.gz                incremental exports (shared folder)

Manifest keys are bucket keys (they carry `<prefix>/`), so wherever the export was copied
they resolve from their `AWSDynamoDB/` segment on, against the folder that holds the
export's own folder. Data files are gzip'd lines of DynamoDB JSON (`{"Item": {...}}`) or
text ION (`$ion_1_0 {Item:{...}}`); incremental exports carry `Metadata`, `Keys`,
`NewImage` and `OldImage` instead of `Item`.

Everything streams: a data file is read line by line from the gzip stream, so memory stays
bounded whatever the export's size, and one bad line becomes an "error" record for the
dead-letter file instead of stopping the load. Item counts are checked by the caller.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import hashlib
import re
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Context, Decimal
from typing import Any

import fsspec
import orjson
from amazon.ion import simpleion
from amazon.ion.core import IonType
from amazon.ion.exceptions import IonException
from amazon.ion.simple_types import IonPyNull

from ..codec.items import AttributeValue, Item

FULL_EXPORT = "FULL_EXPORT"
INCREMENTAL_EXPORT = "INCREMENTAL_EXPORT"
OUTPUT_FORMATS = ("DYNAMODB_JSON", "ION")
SUMMARY = "manifest-summary.json"
AWS_FOLDER = "AWSDynamoDB"
RAW_LIMIT = 1000

_NUMBER = re.compile(r"-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?", re.ASCII)
# DynamoDB numbers have up to 38 significant digits; a wide context never rounds them.
_WIDE = Context(prec=100, Emax=999_999, Emin=-999_999)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


class ExportError(Exception):
    """The export cannot be read: names the file, what is wrong and what to do."""


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


@dataclass(frozen=True, slots=True)
class Record:
    file: str
    line: int  # 1-based line in the decompressed data file
    kind: str  # "put" | "delete" | "error"
    item: Item | None  # full item (put; for incremental: NewImage)
    keys: Item | None  # incremental: Keys; full: None
    write_time_micros: int | None  # incremental: Metadata.WriteTimestampMicros
    error: str | None  # kind == "error": why the line could not be read
    raw: str | None  # kind == "error": the offending line (first 1000 chars)
    old_item: Item | None = None  # incremental: OldImage, when the export's view has it


# --- public API ---------------------------------------------------------------------------

def open_export(location: str) -> Manifest:
    """Read and check both manifests of the export at `location` (no data is read yet).

    `location` is a local folder or any fsspec URL (`file://`, `gs://`, `s3://`): the
    export's own `AWSDynamoDB/<id>/` folder, its `manifest-summary.json`, or any prefix
    holding exactly one `AWSDynamoDB/<id>/manifest-summary.json`.
    """
    fs, path = _filesystem(location)
    summary_path = _find_summary(fs, path, location)
    summary = _read_summary(fs, summary_path)
    root = _parent(_parent(summary_path))
    files_path = _resolve(root, _string(summary, "manifestFilesS3Key", summary_path), summary_path)
    files = _read_files_manifest(fs, files_path)
    export_type = summary.get("exportType", FULL_EXPORT)
    item_count = _count(summary.get("itemCount"), f"{summary_path}: itemCount")
    listed = sum(f.item_count for f in files)
    if listed != item_count:
        raise ExportError(f"{files_path}: the data files hold {listed} items but {summary_path} says "
                          f"{item_count}; the manifests belong to different exports or one is cut "
                          f"short: copy the export folder again")
    time_field = "exportTime" if export_type == FULL_EXPORT else "exportToTime"
    return Manifest(
        location=location,
        export_arn=summary.get("exportArn"),
        export_type=export_type,
        output_format=summary["outputFormat"],
        item_count=item_count,
        export_time_micros=_micros(_string(summary, time_field, summary_path), f"{summary_path}: {time_field}"),
        files=files,
        root=fs.unstrip_protocol(root),
    )


def verify_file(manifest: Manifest, f: DataFile) -> None:
    """Check the stored `.gz` bytes against the manifest's md5Checksum, streaming them."""
    fs, path = _data_path(manifest, f)
    digest = hashlib.md5(usedforsecurity=False)
    try:
        with fs.open(path, "rb") as stream:
            while chunk := stream.read(1 << 20):
                digest.update(chunk)
    except FileNotFoundError:
        raise _missing(f, path) from None
    actual = base64.b64encode(digest.digest()).decode()
    if actual != f.md5:
        raise ExportError(f"{path}: md5 is {actual} but manifest-files.json says {f.md5} for {f.key}; "
                          f"the file was changed or damaged after AWS wrote it: copy it again from the export")


def read_records(manifest: Manifest, f: DataFile) -> Iterator[Record]:
    """Every line of one data file as a `Record`, in order.

    A line that is not valid JSON/ION or not an item becomes an "error" record; a gzip
    stream that is cut short or corrupt raises `ExportError` after the last good line.
    """
    decode = _LINE_DECODERS[manifest.output_format, manifest.export_type == INCREMENTAL_EXPORT]
    for line_no, line in _file_lines(manifest, f):
        try:
            item, keys, write_time, old = decode(line)
        except _BadLine as bad:
            text = line.decode("utf-8", "replace").rstrip("\r\n")[:RAW_LIMIT]
            yield Record(f.key, line_no, "error", None, None, None, str(bad), text)
        else:
            kind = "put" if item is not None else "delete"
            yield Record(f.key, line_no, kind, item, keys, write_time, None, None, old)


def scan_items(manifest: Manifest, f: DataFile, wanted: Callable[[Any], bool]) -> Iterator[Item]:
    """The valid items of one data file that `wanted` asks for, for a pass that needs only
    a few of them (type inference: an item whose attributes all have types already seen
    changes nothing). `wanted` sees each item as parsed, before the validation that costs
    most of reading; what it turns down is neither validated nor returned, and what it
    asks for is returned only if valid (bad lines are the load's to dead-letter). Only
    full DynamoDB JSON exports skip the validation; ION and incremental exports are read
    as `read_records` reads them."""
    if manifest.output_format != "DYNAMODB_JSON" or manifest.export_type == INCREMENTAL_EXPORT:
        for record in read_records(manifest, f):
            if record.item is not None and wanted(record.item):
                yield record.item
        return
    for _, line in _file_lines(manifest, f):
        try:
            raw = _json_line(line).get("Item")
            if wanted(raw):
                yield _json_item(raw, "Item")
        except _BadLine:
            continue


def _file_lines(manifest: Manifest, f: DataFile) -> Iterator[tuple[int, bytes]]:
    """(line number, line) of one data file; ExportError when it is missing, unreadable,
    or its gzip stream is cut short or corrupt (after the last good line)."""
    fs, path = _data_path(manifest, f)
    line_no = 0
    try:
        with fs.open(path, "rb") as stream:
            for line_no, line in enumerate(_gzip_lines(stream), 1):
                yield line_no, line
    except FileNotFoundError:
        raise _missing(f, path) from None
    except (gzip.BadGzipFile, EOFError, zlib.error) as err:
        raise ExportError(f"{path}: the gzip stream of {f.key} is truncated or corrupt after line "
                          f"{line_no} ({err}); lines up to {line_no} were read: copy the file again "
                          f"from the export") from None
    except OSError as err:
        raise ExportError(f"{path}: cannot read {f.key} ({err})") from None


GZIP_CHUNK = 256 * 1024  # compressed bytes per read
GZIP_OUT = 1024 * 1024  # decompressed bytes per step: bounded even for data that compresses 100x


def _gzip_lines(stream: Any) -> Iterator[bytes]:
    """The lines of a gzip stream (concatenated members too), without their newline.

    zlib with our own line split: several times faster than `GzipFile`'s readline, which
    dominated the time of reading an export.
    """
    decompressor = zlib.decompressobj(zlib.MAX_WBITS | 16)
    tail = b""
    while data := stream.read(GZIP_CHUNK):
        while data:
            out = decompressor.decompress(data, GZIP_OUT)
            data = decompressor.unconsumed_tail
            lines = (tail + out).split(b"\n")
            tail = lines.pop()
            yield from lines
            if decompressor.eof and decompressor.unused_data.lstrip(b"\0"):  # the next member
                data = decompressor.unused_data.lstrip(b"\0")  # zero padding is allowed, as gzip does
                decompressor = zlib.decompressobj(zlib.MAX_WBITS | 16)
    if not decompressor.eof:
        raise EOFError("Compressed file ended before the end-of-stream marker was reached")
    if tail:
        yield tail


def dynamodb_number_text(value: Decimal | int) -> str:
    """A number as DynamoDB writes N: no exponent, no trailing zeros (`6E+2` -> `600`)."""
    text = format(Decimal(value).normalize(_WIDE), "f")
    return "0" if text == "-0" else text


# --- finding and reading the manifests ----------------------------------------------------

def _filesystem(location: str) -> tuple[fsspec.AbstractFileSystem, str]:
    try:
        fs, path = fsspec.core.url_to_fs(location)
    except ImportError as err:
        raise ExportError(f"{location}: {err} (fsspec needs it for this URL scheme)") from None
    return fs, path.rstrip("/")


def _find_summary(fs: fsspec.AbstractFileSystem, path: str, location: str) -> str:
    if path.endswith("/" + SUMMARY) and fs.isfile(path):
        return path
    if fs.isfile(f"{path}/{SUMMARY}"):
        return f"{path}/{SUMMARY}"
    if not fs.exists(path):
        raise ExportError(f"{location}: no such folder; give the folder the export was written to")
    found = sorted(fs.glob(f"{path}/**/{AWS_FOLDER}/*/{SUMMARY}"))
    if not found:
        raise ExportError(f"{location}: no {AWS_FOLDER}/<exportId>/{SUMMARY} below it; give the prefix "
                          f"the export was written to or the export's own folder")
    if len(found) > 1:
        listing = ", ".join(fs.unstrip_protocol(_parent(p)) for p in found)
        raise ExportError(f"{location}: holds {len(found)} exports ({listing}); give one of these folders")
    return found[0]


def _read_summary(fs: fsspec.AbstractFileSystem, path: str) -> dict[str, Any]:
    with fs.open(path, "rb") as stream:
        summary = _json_object(stream.read(), path)
    output_format = summary.get("outputFormat")
    if output_format not in OUTPUT_FORMATS:
        raise ExportError(f"{path}: outputFormat {output_format!r} is not one AWS writes "
                          f"({' or '.join(OUTPUT_FORMATS)}); is this a DynamoDB export manifest?")
    export_type = summary.get("exportType", FULL_EXPORT)
    if export_type not in (FULL_EXPORT, INCREMENTAL_EXPORT):
        raise ExportError(f"{path}: exportType {export_type!r} is neither {FULL_EXPORT} nor {INCREMENTAL_EXPORT}")
    return summary


def _read_files_manifest(fs: fsspec.AbstractFileSystem, path: str) -> tuple[DataFile, ...]:
    files: list[DataFile] = []
    try:
        with fs.open(path, "rb") as stream:
            for line_no, line in enumerate(stream, 1):
                if line.strip():
                    where = f"{path}:{line_no}"
                    entry = _json_object(line, where)
                    files.append(DataFile(
                        key=_string(entry, "dataFileS3Key", where),
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
    return (moment - _EPOCH) // _MICROSECOND


def _parent(path: str) -> str:
    return path.rsplit("/", 1)[0]


def _resolve(root: str, key: str, where: str) -> str:
    """A manifest key (a bucket key, maybe under a prefix) as a path below `root`."""
    at = key.rfind(AWS_FOLDER + "/")
    if at < 0 or (at > 0 and key[at - 1] != "/"):
        raise ExportError(f"{where}: key {key!r} has no {AWS_FOLDER}/ segment; it is not a DynamoDB export key")
    return f"{root}/{key[at + len(AWS_FOLDER) + 1:]}"


def _data_path(manifest: Manifest, f: DataFile) -> tuple[fsspec.AbstractFileSystem, str]:
    fs, root = _filesystem(manifest.root)
    return fs, _resolve(root, f.key, "manifest-files.json")


def _missing(f: DataFile, path: str) -> ExportError:
    return ExportError(f"{path}: missing; manifest-files.json lists {f.key} with {f.item_count} items: "
                       f"copy the whole export folder, data/ included")


# --- DynamoDB JSON lines ------------------------------------------------------------------

class _BadLine(Exception):
    """One line is not an item: becomes an "error" record, never stops the file."""


Decoded = tuple[Item | None, Item | None, int | None, Item | None]  # item, keys, write time, old image


def _json_full(line: bytes) -> Decoded:
    return _json_item(_json_line(line).get("Item"), "Item"), None, None, None


def _json_incremental(line: bytes) -> Decoded:
    record = _json_line(line)
    metadata = record.get("Metadata")
    stamp = metadata.get("WriteTimestampMicros") if isinstance(metadata, dict) else None
    write_time = _whole_micros(stamp.get("N") if isinstance(stamp, dict) else None, stamp)
    keys = _json_item(record.get("Keys"), "Keys")
    old = record.get("OldImage")
    if old is not None and not isinstance(old, dict):
        raise _BadLine("OldImage is not an object")
    image = record.get("NewImage")
    return ((None if image is None else _json_item(image, "NewImage")), keys, write_time,
            None if old is None else _json_item(old, "OldImage"))


def _whole_micros(text: object, stamp: object) -> int:
    """Metadata.WriteTimestampMicros: a whole number of microseconds, as decimal text."""
    if not isinstance(text, str) or not (text.isascii() and text.isdigit()):
        raise _BadLine(f"Metadata.WriteTimestampMicros is {stamp!r}, expected whole microseconds")
    return int(text)


def _json_line(line: bytes) -> dict[str, Any]:
    try:
        record = orjson.loads(line)
    except orjson.JSONDecodeError as err:
        raise _BadLine(f"not valid JSON: {err}") from None
    if not isinstance(record, dict):
        raise _BadLine(f"expected a JSON object, found {type(record).__name__}")
    return record


def _json_item(value: object, name: str) -> Item:
    if not isinstance(value, dict) or not value:
        raise _BadLine(f"{name} is missing, empty or not an object")
    try:  # the fast path: no per-value path strings, parsed dicts reused where nothing changes
        return {attr: _fast_value(v) for attr, v in value.items()}
    except _Invalid:  # the slow path only to say where: it raises the located _BadLine
        return {attr: _json_value(v, f"{name}.{attr}") for attr, v in value.items()}


class _Invalid(Exception):
    """Something in the line is not DynamoDB JSON; `_json_value` then says what and where."""


def _fast_value(value: Any) -> AttributeValue:
    """`_json_value` without building a path per value: same checks, same result. The
    parsed JSON is already the item's form except for binary (base64 text to bytes), so a
    value is returned as it is unless something inside it had to be converted."""
    if type(value) is not dict or len(value) != 1:
        raise _Invalid
    ((tag, inner),) = value.items()
    if tag == "S":
        if type(inner) is not str:
            raise _Invalid
        return value
    if tag == "N":
        if type(inner) is not str or not _NUMBER.fullmatch(inner):
            raise _Invalid
        return value
    if tag == "M":
        if type(inner) is not dict:
            raise _Invalid
        for v in inner.values():
            if _fast_value(v) is not v:  # binary inside: convert the map (rare)
                return {"M": {k: _fast_value(v) for k, v in inner.items()}}
        return value
    if tag == "L":
        if type(inner) is not list:
            raise _Invalid
        for v in inner:
            if _fast_value(v) is not v:
                return {"L": [_fast_value(v) for v in inner]}
        return value
    if tag == "BOOL":
        if type(inner) is not bool:
            raise _Invalid
        return value
    if tag == "NULL":
        if inner is not True:
            raise _Invalid
        return value
    try:
        if tag in ("SS", "NS"):
            _JSON_TYPES[tag](inner, tag)  # checks every member, converts nothing
            return value
        return {tag: _JSON_TYPES[tag](inner, tag)}  # B, BS: base64 to bytes
    except (KeyError, _BadLine):
        raise _Invalid from None


def _json_value(value: object, path: str) -> AttributeValue:
    if not isinstance(value, dict) or len(value) != 1:
        raise _BadLine(f"{path}: expected one DynamoDB type tag like {{'S': ...}}, found {value!r}"[:300])
    ((tag, inner),) = value.items()
    convert = _JSON_TYPES.get(tag)
    if convert is None:
        raise _BadLine(f"{path}: unknown DynamoDB type {tag!r}")
    return {tag: convert(inner, f"{path}.{tag}")}


def _json_s(value: object, path: str) -> str:
    if not isinstance(value, str):
        raise _BadLine(f"{path}: expected text, found {value!r}"[:300])
    return value


def _json_n(value: object, path: str) -> str:
    if not isinstance(value, str) or not _NUMBER.fullmatch(value):
        raise _BadLine(f"{path}: {value!r} is not a number"[:300])
    return value


def _json_b(value: object, path: str) -> bytes:
    try:
        return base64.b64decode(_json_s(value, path), validate=True)
    except binascii.Error:
        raise _BadLine(f"{path}: not valid base64") from None


def _json_bool(value: object, path: str) -> bool:
    if not isinstance(value, bool):
        raise _BadLine(f"{path}: expected true or false, found {value!r}"[:300])
    return value


def _json_null(value: object, path: str) -> bool:
    if value is not True:
        raise _BadLine(f"{path}: NULL must be true, found {value!r}"[:300])
    return True


def _json_set(member: Callable[[object, str], Any]) -> Callable[[object, str], list[Any]]:
    def convert(value: object, path: str) -> list[Any]:
        if not isinstance(value, list) or not value:
            raise _BadLine(f"{path}: a set must be a non-empty list")
        return [member(v, f"{path}[{i}]") for i, v in enumerate(value)]
    return convert


def _json_m(value: object, path: str) -> dict[str, AttributeValue]:
    if not isinstance(value, dict):
        raise _BadLine(f"{path}: expected an object")
    return {k: _json_value(v, f"{path}.{k}") for k, v in value.items()}


def _json_l(value: object, path: str) -> list[AttributeValue]:
    if not isinstance(value, list):
        raise _BadLine(f"{path}: expected a list")
    return [_json_value(v, f"{path}[{i}]") for i, v in enumerate(value)]


_JSON_TYPES: dict[str, Callable[[object, str], Any]] = {
    "S": _json_s, "N": _json_n, "B": _json_b, "BOOL": _json_bool, "NULL": _json_null,
    "SS": _json_set(_json_s), "NS": _json_set(_json_n), "BS": _json_set(_json_b),
    "M": _json_m, "L": _json_l,
}


# --- ION lines ----------------------------------------------------------------------------

def _ion_full(line: bytes) -> Decoded:
    return _ion_item(_ion_line(line).get("Item"), "Item"), None, None, None


def _ion_incremental(line: bytes) -> Decoded:
    record = _ion_line(line)
    metadata = record.get("Metadata")
    stamp = metadata.get("WriteTimestampMicros") if _is_ion(metadata, IonType.STRUCT) else None
    # AWS documents no ION incremental line: accept the number itself (N maps to an ION
    # decimal) or the DynamoDB JSON shape {N: "..."}.
    text = stamp.get("N") if _is_ion(stamp, IonType.STRUCT) else stamp
    if _is_ion(text, IonType.DECIMAL) or _is_ion(text, IonType.INT):
        text = dynamodb_number_text(text)
    elif _is_ion(text, IonType.STRING):
        text = str(text)
    write_time = _whole_micros(text, stamp)
    keys = _ion_item(record.get("Keys"), "Keys")
    old = record.get("OldImage")
    if old is not None and not _is_ion(old, IonType.STRUCT):
        raise _BadLine("OldImage is not a struct")
    image = record.get("NewImage")
    return ((None if image is None else _ion_item(image, "NewImage")), keys, write_time,
            None if old is None else _ion_item(old, "OldImage"))


def _ion_line(line: bytes) -> Any:
    try:
        record = simpleion.loads(line.decode("utf-8"))
    except UnicodeDecodeError as err:
        raise _BadLine(f"not valid UTF-8: {err}") from None
    except IonException as err:
        raise _BadLine(f"not valid ION: {err}") from None
    if not _is_ion(record, IonType.STRUCT):
        raise _BadLine("expected one ION struct after $ion_1_0")
    return record


def _is_ion(value: object, ion_type: IonType) -> bool:
    return not isinstance(value, IonPyNull) and getattr(value, "ion_type", None) is ion_type


def _ion_item(value: Any, name: str) -> Item:
    if not _is_ion(value, IonType.STRUCT) or not value:
        raise _BadLine(f"{name} is missing, empty or not a struct")
    return {attr: _ion_value(v, f"{name}.{attr}") for attr, v in value.items()}


_ION_SETS = {"$dynamodb_SS": "SS", "$dynamodb_NS": "NS", "$dynamodb_BS": "BS"}


def _ion_value(value: Any, path: str) -> AttributeValue:
    """AWS's mapping: string S, decimal N, blob B, bool BOOL, null NULL, struct M, list L,
    and sets as lists annotated `$dynamodb_SS`/`$dynamodb_NS`/`$dynamodb_BS`."""
    if isinstance(value, IonPyNull):
        return {"NULL": True}
    ion_type = value.ion_type
    if ion_type is IonType.STRING:
        return {"S": str(value)}
    if ion_type in (IonType.DECIMAL, IonType.INT):
        return {"N": dynamodb_number_text(value)}
    if ion_type is IonType.BOOL:
        return {"BOOL": bool(value)}
    if ion_type is IonType.BLOB:
        return {"B": bytes(value)}
    if ion_type is IonType.STRUCT:
        return {"M": {k: _ion_value(v, f"{path}.{k}") for k, v in value.items()}}
    if ion_type is IonType.LIST:
        annotations = [getattr(a, "text", a) for a in value.ion_annotations]
        if not annotations:
            return {"L": [_ion_value(v, f"{path}[{i}]") for i, v in enumerate(value)]}
        tag = _ION_SETS.get(annotations[0]) if len(annotations) == 1 else None
        if tag is None:
            raise _BadLine(f"{path}: list annotated {annotations}, expected one of {sorted(_ION_SETS)}")
        members = [_ion_value(v, f"{path}[{i}]") for i, v in enumerate(value)]
        if not members or any(next(iter(m)) != tag[0] for m in members):
            raise _BadLine(f"{path}: a {tag} set must be a non-empty list of {tag[0]} values")
        return {tag: [m[tag[0]] for m in members]}
    raise _BadLine(f"{path}: ION {ion_type.name.lower()} has no DynamoDB type")


_LINE_DECODERS: dict[tuple[str, bool], Callable[[bytes], Decoded]] = {
    ("DYNAMODB_JSON", False): _json_full,
    ("DYNAMODB_JSON", True): _json_incremental,
    ("ION", False): _ion_full,
    ("ION", True): _ion_incremental,
}
