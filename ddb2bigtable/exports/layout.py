"""The files of a DynamoDB export to S3 as AWS writes them: data files, the two manifests
and their `.md5` files. `writer.py` (exports built from items, for fixtures and the shipped
`exports/`) and `scan_export.py` (`ddb2bigtable export`, a parallel Scan) both lay their
exports out through here, so the two cannot drift apart.

What is copied from AWS and where it was seen is in `writer.py`'s docstring: the summary's
key order, md5Checksum (base64 MD5 of the stored `.gz` bytes), the one-part ETag, gzip's
header (no file name, mtime 0, level 6), data file names (26 lowercase base32 characters).
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..codec.timestamps import micros_of
from .manifests import AWS_FOLDER

_GZIP_LEVEL = 6  # zlib's default; levels 1 and 9 would change the header's XFL byte


@dataclass(frozen=True)
class S3Location:
    """Where the manifests say the export lives in S3; the folder written plays the prefix."""

    bucket: str | None = "ddb2bigtable-exports"  # None: written to a folder, never to S3
    prefix: str | None = None


DEFAULT_S3 = S3Location()


@dataclass(frozen=True)
class Summary:
    """What manifest-summary.json says of one export besides its window."""

    table_arn: str
    export_id: str
    start: datetime
    end: datetime
    item_count: int
    billed_bytes: int
    output_format: str = "DYNAMODB_JSON"
    s3: S3Location = DEFAULT_S3


def write_manifests(export_dir: Path, entries: list[bytes], summary: Summary, fields: dict[str, Any], *,
                    full: bool = True) -> None:
    """manifest-files.json (`entries`: `file_entry` lines), then manifest-summary.json in
    AWS's key order, the window (`exportTime`, or `exportFromTime`/`exportToTime`) where AWS
    puts it and the rest of `fields` last; each beside its .md5, as AWS writes them."""
    window = {k: v for k, v in fields.items() if k.startswith("export") and k.endswith("Time")}
    key_prefix = f"{summary.s3.prefix.strip('/')}/" if summary.s3.prefix else ""
    _write_with_md5(export_dir / "manifest-files.json", b"".join(entries))
    document: dict[str, Any] = {
        "version": "2020-06-30" if full else "2023-08-01",
        "exportArn": f"{summary.table_arn}/export/{summary.export_id}",
        "startTime": iso_millis(summary.start),
        "endTime": iso_millis(summary.end),
        "tableArn": summary.table_arn,
        "tableId": str(uuid.UUID(bytes=hashlib.sha256(summary.table_arn.encode()).digest()[:16], version=4)),
        **window,
        "s3Bucket": summary.s3.bucket,
        "s3Prefix": summary.s3.prefix,
        "s3SseAlgorithm": "AES256",
        "s3SseKmsKeyId": None,
        "manifestFilesS3Key": f"{key_prefix}{AWS_FOLDER}/{summary.export_id}/manifest-files.json",
        "billedSizeBytes": summary.billed_bytes,
        "itemCount": summary.item_count,
        "outputFormat": summary.output_format,
        **{k: v for k, v in fields.items() if k not in window},
    }
    _write_with_md5(export_dir / "manifest-summary.json", _compact(document))


def data_file_name(seed: bytes) -> str:
    """A data file's name as AWS gives it: 26 lowercase base32 characters of 16 bytes."""
    return base64.b32encode(seed[:16]).decode().rstrip("=").lower()


def file_entry(key: str, count: int, digest: bytes) -> bytes:
    """One line of manifest-files.json: the data file at bucket key `key`, its item count
    and the MD5 of its stored bytes (md5Checksum, and the ETag of a one-part upload)."""
    return _compact({
        "itemCount": count,
        "md5Checksum": base64.b64encode(digest).decode(),
        "etag": hashlib.md5(digest, usedforsecurity=False).hexdigest() + "-1",
        "dataFileS3Key": key,
    }) + b"\n"



def write_data_file(path: Path, lines: Iterable[bytes]) -> tuple[int, int, bytes]:
    """Write `lines` gzip'd; return the line count, uncompressed size and MD5 of the file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    count = size = 0
    with path.open("wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw,
                                               compresslevel=_GZIP_LEVEL, mtime=0) as gz:
        for line in lines:
            gz.write(line)
            count += 1
            size += len(line)
    digest = hashlib.md5(usedforsecurity=False)
    with path.open("rb") as stored:
        while block := stored.read(1 << 20):
            digest.update(block)
    return count, size, digest.digest()


def _write_with_md5(path: Path, content: bytes) -> None:
    path.write_bytes(content)
    path.with_suffix(".md5").write_bytes(base64.b64encode(hashlib.md5(content, usedforsecurity=False).digest()))


def _compact(value: object) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def epoch_millis(moment: datetime) -> int:
    return micros_of(moment) // 1000


def iso_millis(moment: datetime) -> str:
    """A time as AWS's manifests write it: UTC, to the millisecond, `Z`."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


