"""A data file's bytes that are no item (lines over MAX_LINE, lines past its itemCount)
are bounded by MAX_WASTE (16 MiB decompressed): a gzip bomb of one endless line stops
there, where it ran to the file's 1 MiB per listed item (11 s for a file listing 1,000
items), and one of endless empty lines after 1,024 of them, where it made an error
record of each for minutes."""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ddb2bigtable.exports.manifests import ExportError, open_export
from ddb2bigtable.exports.reader import EXTRA_LINE_COST, MAX_WASTE, read_records
from ddb2bigtable.exports.writer import write_export

ARN = "arn:aws:dynamodb:us-east-1:123456789012:table/Things"
WHEN = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
MIB = 1024 * 1024


def _export(tmp: Path, files: int, body: bytes, repeat: int) -> Path:
    """An export of `files` data files listing 1,000 items each, every file's content
    replaced by `body` written `repeat` times (its md5 in the manifest updated: the bytes
    pass the md5 check, as a hostile export's would)."""
    items = [{"pk": {"S": f"thing#{i}"}} for i in range(1000 * files)]
    write_export(tmp / "bucket", ARN, items, export_time=WHEN, items_per_file=1000)
    (folder,) = (tmp / "bucket" / "AWSDynamoDB").iterdir()
    entries = [json.loads(line) for line in (folder / "manifest-files.json").read_text().splitlines()]
    for entry in entries:
        path = folder / "data" / entry["dataFileS3Key"].rsplit("/", 1)[1]
        with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=1) as gz:
            for _ in range(repeat):
                gz.write(body)
        entry["md5Checksum"] = base64.b64encode(hashlib.md5(path.read_bytes()).digest()).decode()
    (folder / "manifest-files.json").write_text("".join(json.dumps(e) + "\n" for e in entries))
    return folder


def _read_all(folder: Path) -> tuple[int, str | None, float]:
    """Every file in manifest order, as every reader does: the first error ends the read."""
    manifest = open_export(str(folder))
    started, records = time.monotonic(), 0
    try:
        for f in manifest.files:
            for _ in read_records(manifest, f):
                records += 1
    except ExportError as error:
        return records, str(error), time.monotonic() - started
    return records, None, time.monotonic() - started


def test_an_endless_line_stops_after_max_waste_not_after_its_files_items(tmp_path):
    folder = _export(tmp_path, 1, bytes(MIB), 256)  # 256 MiB of zeros: under the file's 1,000 MiB for its items
    records, error, seconds = _read_all(folder)
    assert error is not None and f"more than {MAX_WASTE:,} decompressed bytes of it are no item" in error
    assert "gzip bomb" in error and records == 0
    assert seconds < 5


def test_a_bomb_of_empty_lines_ends_after_1024_lines_past_the_item_count(tmp_path):
    folder = _export(tmp_path, 1, b"\n" * MIB, 64)  # 64 Mi empty lines for 1,000 items
    records, error, seconds = _read_all(folder)
    assert error is not None and "lines past its itemCount 1000" in error
    assert records == 1000 + MAX_WASTE // EXTRA_LINE_COST
    assert seconds < 10


@pytest.mark.parametrize("extra", [1, 3])
def test_a_few_lines_past_the_item_count_are_still_read_for_the_report_to_name(tmp_path, extra):
    write_export(tmp_path / "bucket", ARN, [{"pk": {"S": f"thing#{i}"}} for i in range(3)], export_time=WHEN)
    (folder,) = (tmp_path / "bucket" / "AWSDynamoDB").iterdir()
    (data,) = (folder / "data").iterdir()
    lines = gzip.decompress(data.read_bytes()) + b'{"Item":{"pk":{"S":"extra"}}}\n' * extra
    data.write_bytes(gzip.compress(lines))
    entries = json.loads((folder / "manifest-files.json").read_text())
    entries["md5Checksum"] = base64.b64encode(hashlib.md5(data.read_bytes()).digest()).decode()
    (folder / "manifest-files.json").write_text(json.dumps(entries) + "\n")
    manifest = open_export(str(folder))
    assert len(list(read_records(manifest, manifest.files[0]))) == 3 + extra
