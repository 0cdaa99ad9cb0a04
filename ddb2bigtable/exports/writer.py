"""Writes DynamoDB exports to S3 as AWS lays them out, so the repo and the tests load real
exports without an AWS account.

What is copied from AWS, and where it was seen (AWS's "DynamoDB table export output format"
page and a real export published as test data):

- `AWSDynamoDB/<exportId>/` with `manifest-summary.json` (one compact JSON object, no final
  newline, fields in AWS's order), `manifest-files.json` (one compact JSON line per data
  file: itemCount, md5Checksum, etag, dataFileS3Key), their `.md5` files (24-character
  base64 MD5, no newline) and an empty `_started`.
- `<exportId>` is the start time in epoch milliseconds (14 digits) and 8 hex digits; data
  files are named by 26 lowercase base32 characters (16 random bytes).
- Full exports keep data in `AWSDynamoDB/<exportId>/data/`; incremental exports in the
  shared `AWSDynamoDB/data/`. Keys in the manifests are bucket keys (`<s3Prefix>/AWSDynamoDB/...`).
- md5Checksum is the base64 MD5 of the stored `.gz` bytes; etag is the S3 ETag of a
  one-part multipart upload: hex MD5 of that MD5, then `-1`.
- gzip: no file name, mtime 0, OS byte 255, level 6; an empty data file is byte-for-byte
  the one AWS writes for an empty partition.
- Lines: DynamoDB JSON `{"Item":{...}}`; incremental `{"Metadata":{...},"Keys":{...},
  "OldImage":{...},"NewImage":{...}}` (a delete has no NewImage); attributes and map keys
  sorted, as AWS's samples show. ION: `$ion_1_0 {Item:{...}}` text, decimals written the
  way AWS's sample writes them (`103.`, `6d2`, `6.2`), sets as annotated lists.

Output is deterministic: ids and names come from a generator seeded by the table, type,
format and time, so rebuilding gives identical files.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import random
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Context, Decimal
from pathlib import Path
from typing import Any

import orjson

from ..codec.items import AttributeValue, Item
from ..codec.scalars import binary_text
from .json_lines import dynamodb_number_text
from .layout import (
    DEFAULT_S3,
    S3Location,
    Summary,
    data_file_name,
    epoch_millis,
    file_entry,
    iso_millis,
    write_data_file,
    write_manifests,
)
from .manifests import AWS_FOLDER, FULL_EXPORT, INCREMENTAL_EXPORT, OUTPUT_FORMATS

_EXPORT_DURATION = timedelta(minutes=5)
_INCREMENTAL_MIN_BILL = 10_000_000  # AWS bills an incremental export at least 10 MB
_SYMBOL = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ION_KEYWORDS = frozenset({"null", "true", "false", "nan"})
_DECIMALS = Context(prec=100, Emax=999_999, Emin=-999_999)  # never rounds DynamoDB's 38 digits


@dataclass(frozen=True)
class IncrementalChange:
    """One line of an incremental export: the item's state after a write in the window."""

    keys: Item
    write_time_micros: int
    new_image: Item | None = None  # None: the item was deleted
    old_image: Item | None = None  # the item before the change (NEW_AND_OLD_IMAGES view)


@dataclass(frozen=True)
class _Layout:
    export_type: str
    output_format: str
    items_per_file: int
    s3: S3Location


def write_export(dest: Path, table_arn: str, items: Iterable[Item], *, export_time: datetime,
                 output_format: str = "DYNAMODB_JSON", items_per_file: int = 1000,
                 s3: S3Location = DEFAULT_S3) -> Path:
    """Write one full export below `dest` and return its folder.

    Numbers should be DynamoDB's own text (`dynamodb_number_text`), as a table holds them.
    Items are streamed: any number fits in memory."""
    layout = _layout(FULL_EXPORT, output_format, items_per_file, s3, export_time)
    lines = (item_line(item, output_format) for item in items)
    return _write(dest, table_arn, lines, layout, export_time, {"exportTime": iso_millis(export_time)})


def write_incremental_export(dest: Path, table_arn: str, changes: Iterable[IncrementalChange], *,
                             export_time: datetime, export_from_time: datetime | None = None,
                             output_format: str = "DYNAMODB_JSON", items_per_file: int = 1000,
                             s3: S3Location = DEFAULT_S3) -> Path:
    """Write one incremental export (its window runs from `export_from_time`, default one
    hour earlier, to `export_time`) below `dest`, beside the chain's other exports."""
    layout = _layout(INCREMENTAL_EXPORT, output_format, items_per_file, s3, export_time)
    if export_from_time is not None and export_from_time.tzinfo is None:
        raise ValueError("export times must be timezone-aware")
    changes = list(changes)
    with_old = any(c.old_image is not None for c in changes)
    window = {"exportFromTime": iso_millis(export_from_time or export_time - timedelta(hours=1)),
              "exportToTime": iso_millis(export_time)}
    lines = (_change_line(c, output_format) for c in changes)
    return _write(dest, table_arn, lines, layout, export_time, window,
                  {"outputView": "NEW_AND_OLD_IMAGES" if with_old else "NEW_IMAGE", "exportType": INCREMENTAL_EXPORT})


def _layout(export_type: str, output_format: str, items_per_file: int, s3: S3Location,
            export_time: datetime) -> _Layout:
    if output_format not in OUTPUT_FORMATS:
        raise ValueError(f"output_format must be one of {OUTPUT_FORMATS}, not {output_format!r}")
    if export_time.tzinfo is None:
        raise ValueError("export times must be timezone-aware")
    if items_per_file < 1:
        raise ValueError("items_per_file must be at least 1")
    return _Layout(export_type, output_format, items_per_file, s3)


def _write(dest: Path, table_arn: str, lines: Iterator[bytes], layout: _Layout, export_time: datetime,
           window: dict[str, str], tail: dict[str, str] | None = None) -> Path:
    """Data files, then manifest-files.json, then manifest-summary.json (in AWS's key order),
    each manifest beside its .md5, as AWS writes them."""
    full = layout.export_type == FULL_EXPORT
    rng = random.Random(hashlib.sha256(
        f"{table_arn}|{layout.export_type}|{layout.output_format}|{export_time.isoformat()}".encode()).digest())
    start = export_time.astimezone(UTC)
    export_id = f"{epoch_millis(start):014d}-{rng.getrandbits(32):08x}"
    # Full exports keep their data in their own folder, incremental ones in a shared one.
    data_folder = f"{AWS_FOLDER}/{export_id}/data" if full else f"{AWS_FOLDER}/data"
    key_prefix = f"{layout.s3.prefix.strip('/')}/" if layout.s3.prefix else ""
    extension = ".json.gz" if layout.output_format == "DYNAMODB_JSON" else ".ion.gz"
    export_dir = dest / AWS_FOLDER / export_id
    export_dir.mkdir(parents=True, exist_ok=True)
    (export_dir / "_started").write_bytes(b"")

    entries: list[bytes] = []
    item_count = size = 0
    for chunk in _chunks(lines, layout.items_per_file):
        name = data_file_name(rng.getrandbits(128).to_bytes(16, "big"))
        count, raw_size, digest = write_data_file(dest / data_folder / f"{name}{extension}", chunk)
        item_count += count
        size += raw_size
        entries.append(file_entry(f"{key_prefix}{data_folder}/{name}{extension}", count, digest))
    summary = Summary(table_arn, export_id, start, start + _EXPORT_DURATION, item_count,
                      size if full else max(size, _INCREMENTAL_MIN_BILL), layout.output_format, layout.s3)
    write_manifests(export_dir, entries, summary, {**window, **(tail or {})}, full=full)
    return export_dir


def item_from_plain(value: dict[str, object]) -> Item:
    """A plain JSON document (numbers parsed as `Decimal`) as a typed item, the way the
    DynamoDB document SDKs store it: dict -> M, list -> L, str -> S, Decimal -> N, bool ->
    BOOL, None -> NULL."""
    return {name: _typed(v) for name, v in value.items()}


def _typed(value: object) -> AttributeValue:
    if isinstance(value, bool):
        return {"BOOL": value}
    if isinstance(value, Decimal | int):
        return {"N": dynamodb_number_text(value)}
    if isinstance(value, str):
        return {"S": value}
    if value is None:
        return {"NULL": True}
    if isinstance(value, dict):
        return {"M": item_from_plain(value)}
    if isinstance(value, list):
        return {"L": [_typed(v) for v in value]}
    raise TypeError(f"{type(value).__name__} has no DynamoDB type (parse floats as Decimal)")


# --- files --------------------------------------------------------------------------------

def _chunks(lines: Iterator[bytes], size: int) -> Iterator[Iterator[bytes]]:
    """Groups of `size` lines, lazily; at least one (maybe empty) group, as AWS writes at
    least one file per partition even when it is empty."""
    first = next(lines, None)
    yield iter(()) if first is None else itertools.chain([first], itertools.islice(lines, size - 1))
    while (first := next(lines, None)) is not None:
        yield itertools.chain([first], itertools.islice(lines, size - 1))


# --- lines --------------------------------------------------------------------------------

def item_line(item: Item, output_format: str = "DYNAMODB_JSON") -> bytes:
    if output_format == "DYNAMODB_JSON":
        return b'{"Item":' + _json(item) + b"}\n"
    return f"$ion_1_0 {{Item:{_ion_struct(item)}}}\n".encode()


def _change_line(change: IncrementalChange, output_format: str) -> bytes:
    images = [("OldImage", change.old_image), ("NewImage", change.new_image)]
    if output_format == "DYNAMODB_JSON":
        parts = [b'{"Metadata":{"WriteTimestampMicros":{"N":"%d"}},"Keys":' % change.write_time_micros,
                 _json(change.keys)]
        parts += [b',"%s":%s' % (name.encode(), _json(image)) for name, image in images if image is not None]
        return b"".join(parts) + b"}\n"
    text = f"$ion_1_0 {{Metadata:{{WriteTimestampMicros:{change.write_time_micros}.}},Keys:{_ion_struct(change.keys)}"
    text += "".join(f",{name}:{_ion_struct(image)}" for name, image in images if image is not None)
    return (text + "}\n").encode()


def _json(item: Item) -> bytes:
    return orjson.dumps(item, default=_base64, option=orjson.OPT_SORT_KEYS)


def _base64(value: object) -> str:
    if isinstance(value, bytes):
        return binary_text(value)
    raise TypeError(f"{type(value).__name__} is not part of the typed item form")


def _ion_struct(item: Item) -> str:
    return "{" + ",".join(f"{_ion_symbol(name)}:{_ion(item[name])}" for name in sorted(item)) + "}"


def _ion(value: AttributeValue) -> str:
    ((tag, inner),) = value.items()
    if tag == "S":
        return _ion_string(inner)
    if tag == "N":
        return _ion_decimal(inner)
    if tag == "B":
        return _ion_blob(inner)
    if tag == "BOOL":
        return "true" if inner else "false"
    if tag == "NULL":
        return "null"
    if tag == "M":
        return _ion_struct(inner)
    if tag == "L":
        return "[" + ",".join(_ion(v) for v in inner) + "]"
    members: dict[str, Callable[[Any], str]] = {"SS": _ion_string, "NS": _ion_decimal, "BS": _ion_blob}
    member = members[tag]
    return f"$dynamodb_{tag}::[" + ",".join(member(v) for v in inner) + "]"


def _ion_string(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)  # JSON's escapes are all valid ION escapes


def _ion_symbol(name: str) -> str:
    if _SYMBOL.fullmatch(name) and name not in _ION_KEYWORDS:
        return name
    return "'" + json.dumps(name, ensure_ascii=False)[1:-1].replace("'", "\\'") + "'"


def _ion_decimal(number: str) -> str:
    """`103.`, `6d2`, `6.2`, `1.5d-130`: AWS's sample writes normalized decimals this way."""
    canonical = Decimal(dynamodb_number_text(Decimal(number))).normalize(_DECIMALS)
    text = str(canonical).replace("E+", "d").replace("E", "d")
    return text if ("." in text or "d" in text) else text + "."


def _ion_blob(data: bytes) -> str:
    return "{{" + binary_text(data) + "}}"
