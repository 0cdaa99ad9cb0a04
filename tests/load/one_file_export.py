"""A real DynamoDB export of one data file, whose lines a test writes itself.

The loader's property tests read random export lines through the export reader as a load
does: the export writer lays the export out once per module (manifests, one data file),
and each example puts its own lines in that one data file.
"""

from __future__ import annotations

import gzip
from pathlib import Path

from ddb2bigtable.exports.manifests import DataFile, Manifest, open_export
from ddb2bigtable.exports.writer import write_export

from ..exports.test_export_reader import WHEN

ARN = "arn:aws:dynamodb:us-east-1:123456789012:table/T"


def one_file_export(folder: Path, items: int) -> Path:
    """A full export of table T (keys `pk` and `sk`, as `tests/codec/test_codec.table`) in
    one data file below `folder`. Its manifest counts `items`, and the reader's gzip-bomb
    guard counts each line past that as waste: give at least as many as a test writes."""
    write_export(folder, ARN, [{"pk": {"S": str(i)}, "sk": {"S": "b"}} for i in range(items)], export_time=WHEN)
    return folder


def data_path(folder: Path) -> Path:
    """The export's one data file (gzip) below `folder`."""
    (path,) = folder.glob("AWSDynamoDB/**/data/*.gz")
    return path


def with_lines(folder: Path, lines: list[bytes]) -> tuple[Manifest, DataFile]:
    """The export's manifest and its one data file, which now holds `lines` (each ended by a
    newline, gzipped), for `read_records`."""
    manifest = open_export(str(folder))
    (data_file,) = manifest.files
    data_path(folder).write_bytes(gzip.compress(b"\n".join(lines) + b"\n"))
    return manifest, data_file
