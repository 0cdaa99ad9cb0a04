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


def _export(tmp: Path) -> Path:
    write_export(tmp / "bucket", ARN, ITEMS, export_time=WHEN)
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
    assert not (work / "dead-letters.jsonl").exists()
