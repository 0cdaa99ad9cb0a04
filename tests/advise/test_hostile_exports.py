"""`advise --export` and `import --export` on exports that are not what they claim: a FIFO,
a /dev/zero link, an endless manifest line, a gzip bomb. Each must end in seconds with one
located line and exit 2 (a FIFO used to block for a writer, /dev/zero to fill memory).

The commands run in a subprocess with a timeout, so a regression fails instead of hanging.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest

from ..conftest import ROOT
from .helpers import export_of, spec_file

DESCRIBED = {"Table": {"TableName": "Things", "TableArn": "arn:aws:dynamodb:us-east-1:123456789012:table/Things",
                       "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
                       "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}],
                       "BillingModeSummary": {"BillingMode": "PAY_PER_REQUEST"}}}


def _export(tmp_path: Path) -> Path:
    return export_of(tmp_path, ({"id": f"item-{i}", "v": i} for i in range(3)))


def _one(export: Path, pattern: str) -> Path:
    (found,) = export.glob(pattern)
    return found


def _replace(path: Path, by: Callable[[Path], None]) -> None:
    path.unlink()
    by(path)


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _dev_zero(path: Path) -> None:
    path.symlink_to("/dev/zero")


def _endless_line(path: Path) -> None:
    path.write_bytes(b"{" + b" " * (2 * 1024 * 1024))


def _gzip_bomb(path: Path) -> None:
    """64 MiB of one line that never ends, in about 64 KB: far more than 3 items can hold."""
    packer = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    chunk = b"a" * (1 << 20)
    path.write_bytes(b"".join(packer.compress(chunk) for _ in range(64)) + packer.flush())


HOSTILE = {
    "summary is a FIFO": ("manifest-summary.json", _fifo, "not a regular file"),
    "summary is /dev/zero": ("manifest-summary.json", _dev_zero, "manifest-summary.json"),
    "files manifest is a FIFO": ("manifest-files.json", _fifo, "not a regular file"),
    "files manifest is /dev/zero": ("manifest-files.json", _dev_zero, "outside the export folder"),
    "files manifest is one endless line": ("manifest-files.json", _endless_line, "a line longer than 65,536 bytes"),
    "data file is a FIFO": ("data/*.json.gz", _fifo, "not a regular file"),
    "data file is /dev/zero": ("data/*.json.gz", _dev_zero, "outside the export folder"),
    "data file is a gzip bomb": ("data/*.json.gz", _gzip_bomb, "a gzip bomb"),
}


def _command(kind: str, tmp_path: Path, export: Path) -> list[str]:
    if kind == "advise":
        return ["advise", str(spec_file(tmp_path, ("id", "S"))), "--export", str(export)]
    described = tmp_path / "things.json"
    described.write_text(json.dumps(DESCRIBED))
    return ["import", str(described), "--instance", "things-prod", "--region", "us-east-1", "--export", str(export)]


@pytest.mark.parametrize("kind", ["advise", "import"])
@pytest.mark.parametrize("case", list(HOSTILE))
def test_a_hostile_export_ends_at_once_with_one_line(tmp_path, kind, case):
    pattern, make, says = HOSTILE[case]
    export = _export(tmp_path)
    _replace(_one(export, pattern), make)
    run = subprocess.run([sys.executable, "-m", "ddb2bigtable", *_command(kind, tmp_path, export)], cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 2, run.stderr
    assert says in run.stderr and "Traceback" not in run.stderr
    assert len(run.stderr.splitlines()) <= 2, run.stderr  # the problem, and the count line
    assert not run.stdout


@pytest.mark.parametrize("kind", ["advise", "import"])
def test_the_export_itself_still_reads(tmp_path, kind):
    """The control: the same export untouched is read (so the cases above fail for their file)."""
    export = _export(tmp_path)
    run = subprocess.run([sys.executable, "-m", "ddb2bigtable", *_command(kind, tmp_path, export)], cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr


def test_gzip_of_the_bomb_is_small(tmp_path):
    bomb = tmp_path / "bomb.gz"
    _gzip_bomb(bomb)
    assert bomb.stat().st_size < 256 * 1024
    with gzip.open(bomb, "rb") as stream:
        assert stream.read(10) == b"a" * 10
