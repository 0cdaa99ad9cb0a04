"""Exports from another team's bucket are data, never paths: a manifest cannot make the
loader read a file outside the export folder, and the load says so before reading.

Each case tampers with an export our writer laid out like AWS's, then opens it as `load`
does, and runs the CLI once to see exit 2 with the located message.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ddb2bigtable.exports.manifests import ExportError, open_export
from ddb2bigtable.exports.reader import read_records
from ddb2bigtable.exports.writer import write_export

from .test_export_reader import ARN, WHEN

ROOT = Path(__file__).resolve().parents[2]
ITEMS = [{"year": {"N": str(2000 + i)}, "title": {"S": f"t{i}"}} for i in range(3)]


def _export(tmp: Path, items: list | None = None) -> Path:
    write_export(tmp / "bucket", ARN, items or ITEMS, export_time=WHEN)
    (folder,) = (tmp / "bucket" / "AWSDynamoDB").iterdir()
    return folder


def _rewrite_files_manifest(folder: Path, key: str) -> None:
    manifest = folder / "manifest-files.json"
    entry = json.loads(manifest.read_text().splitlines()[0])
    entry["dataFileS3Key"] = key
    manifest.write_text(json.dumps(entry) + "\n")


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    """A gzip file outside the export whose lines must never be read."""
    path = tmp_path / "secret.json.gz"
    with gzip.open(path, "wt") as f:
        f.write('{"Item": {"year": {"N": "1"}, "title": {"S": "private"}}}\n' * 3)
    return path


@pytest.mark.parametrize("key", [
    "AWSDynamoDB/{id}/data/../../../secret.json.gz",
    "/AWSDynamoDB/../../secret.json.gz",
    "AWSDynamoDB/{id}/data/./x.json.gz",
    "AWSDynamoDB\\\\{id}\\\\data\\\\x.json.gz",
    "AWSDynamoDB/{id}/data/x\x00.json.gz",
])
def test_a_data_key_that_is_a_path_is_refused_before_reading(tmp_path, secret, key):
    folder = _export(tmp_path)
    _rewrite_files_manifest(folder, key.format(id=folder.name))
    with pytest.raises(ExportError, match=r"manifest-files.json:1: key .* is not a plain bucket key"):
        open_export(str(folder))


def test_the_files_manifest_key_follows_the_same_rule(tmp_path, secret):
    folder = _export(tmp_path)
    summary = folder / "manifest-summary.json"
    data = json.loads(summary.read_text())
    data["manifestFilesS3Key"] = "AWSDynamoDB/../../outside/mf.json"
    summary.write_text(json.dumps(data))
    with pytest.raises(ExportError, match=r"manifest-summary.json: key .* is not a plain bucket key"):
        open_export(str(folder))


def test_a_data_file_that_links_out_of_the_export_is_refused(tmp_path, secret):
    folder = _export(tmp_path)
    (data_file,) = (folder / "data").iterdir()
    data_file.unlink()
    os.symlink(secret, data_file)
    with pytest.raises(ExportError, match=r"outside the export folder .* \(a link\?\)"):
        open_export(str(folder))


def test_an_export_reached_through_a_link_still_opens(tmp_path):
    """Links to the export itself are fine: only what leaves its folder is refused."""
    _export(tmp_path)
    link = tmp_path / "link"
    os.symlink(tmp_path / "bucket", link)
    manifest = open_export(str(link))
    assert [r.item for f in manifest.files for r in read_records(manifest, f)] == ITEMS


def test_load_exits_2_and_reads_nothing(tmp_path, secret):
    folder = _export(tmp_path)
    _rewrite_files_manifest(folder, f"AWSDynamoDB/{folder.name}/data/../../../secret.json.gz")
    work = tmp_path / "work"
    run = subprocess.run([sys.executable, "-m", "ddb2bigtable", "load", "specs/movies.yaml", "--table", "movies",
                          "--export", str(folder), "--stage", "local", "--work-dir", str(work)],
                         cwd=ROOT, capture_output=True, text=True, timeout=60,
                         env={**os.environ, "BIGTABLE_EMULATOR_HOST": "127.0.0.1:9"})
    assert run.returncode == 2, run.stdout + run.stderr
    assert "is not a plain bucket key" in run.stderr and "Traceback" not in run.stderr
    assert not (work / "dead-letters").exists()


def _replace_data(folder: Path, body: bytes | None = None, *, chunks: int = 0) -> Path:
    """The export's one data file replaced by `body`, or by `chunks` MiB of zeros with no
    newline (a gzip bomb: ~1,000x smaller compressed), written in a stream."""
    (data_file,) = (folder / "data").iterdir()
    with open(data_file, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=1) as gz:
        if body is not None:
            gz.write(body)
        zeros = bytes(1024 * 1024)
        for _ in range(chunks):
            gz.write(zeros)
    return data_file


def test_a_line_longer_than_any_item_is_one_error_record(tmp_path):
    folder = _export(tmp_path, ITEMS * 4)  # 12 items: room for 16 MiB of lines
    good = json.dumps({"Item": ITEMS[0]}).encode()
    _replace_data(folder, good + b"\n" + b"a" * (5 * 1024 * 1024) + b"\n" + good + b"\n" + b"b" * (6 * 1024 * 1024))
    manifest = open_export(str(folder))
    records = list(read_records(manifest, manifest.files[0]))
    assert [(r.line, r.kind) for r in records] == [(1, "put"), (2, "error"), (3, "put"), (4, "error")]
    assert "longer than 4,194,304 bytes" in records[1].error and records[1].raw is None


def test_a_gzip_bomb_stops_early_within_a_memory_cap(tmp_path):
    """2 GiB of zeros without a newline, read by a child process limited to 1 GiB of
    address space: it must stop with a clear error, not grow until the machine gives out."""
    folder = _export(tmp_path)
    _replace_data(folder, chunks=2048)
    script = f"""
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (1024**3, 1024**3))
from ddb2bigtable.exports.manifests import ExportError, open_export
from ddb2bigtable.exports.reader import read_records
manifest = open_export({str(folder)!r})
try:
    for record in read_records(manifest, manifest.files[0]):
        pass
except ExportError as error:
    print(error)
    sys.exit(3)
"""
    run = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 3, run.stderr[-2000:]
    assert "decompresses to more than" in run.stdout and "gzip bomb" in run.stdout
