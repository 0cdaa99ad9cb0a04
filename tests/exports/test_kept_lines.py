"""A data file kept from its type-inference read is not read again (the loader's encode
pass takes its lines from memory): the same records as a second read would give, kept
only within the budget, and only for a file read whole with its md5 right."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pytest

from ddb2bigtable.exports.kept_lines import KEPT_LINE_COST, KeptLines
from ddb2bigtable.exports.manifests import ExportError, Manifest, open_export
from ddb2bigtable.exports.reader import read_records, scan_items
from ddb2bigtable.exports.types import file_types, share_types
from ddb2bigtable.spec.reading import read_spec

from .test_export_reader import EXPORTS, ROOT

MOVIES_TABLE = read_spec(ROOT / "specs" / "movies.yaml").tables[0]
BIG = 1 << 30


def copied(tmp: Path, name: str) -> tuple[Path, Manifest]:
    shutil.copytree(EXPORTS / name, tmp / name)
    return tmp / name, open_export(str(tmp / name))


def cost(path: Path) -> int:
    """What keeping a data file's lines takes of the budget."""
    data = gzip.decompress(path.read_bytes())
    return len(data) + KEPT_LINE_COST * len(data.splitlines())


@pytest.mark.parametrize("name", ["movies", "other/movies-ion", "other/movies-incremental"])
@pytest.mark.parametrize("check", [True, False])
def test_a_kept_file_gives_the_records_of_a_second_read_without_one(tmp_path, name, check):
    folder, manifest = copied(tmp_path, name)
    expected = {f.key: list(read_records(manifest, f, check=check)) for f in manifest.files}
    keep = KeptLines(BIG)
    share_types(manifest, manifest.files, MOVIES_TABLE, keep)
    assert all(f.key in keep for f in manifest.files)
    shutil.rmtree(next(folder.glob("**/data")))  # nothing left to read: the lines come from memory
    for f in manifest.files:
        assert list(read_records(manifest, f, check=check, keep=keep)) == expected[f.key]
        assert f.key not in keep  # released: kept for one more pass only
        with pytest.raises(ExportError, match="missing"):
            list(read_records(manifest, f, keep=keep))


def test_files_are_kept_while_they_fit_in_the_budget(tmp_path):
    folder, manifest = copied(tmp_path, "movies")
    costs = {f.key: cost(next(folder.glob(f"**/{Path(f.key).name}"))) for f in manifest.files}
    budget = sum(sorted(costs.values())[:2]) + KEPT_LINE_COST  # the two smallest fit, not every file
    keep, left, expected = KeptLines(budget), budget, set()
    for f in manifest.files:  # in order, each kept if it fits in what is left
        if costs[f.key] <= left:
            expected.add(f.key)
            left -= costs[f.key]
    share_types(manifest, manifest.files, MOVIES_TABLE, keep)
    assert {f.key for f in manifest.files if f.key in keep} == expected and 0 < len(expected) < len(manifest.files)
    assert keep.left == left >= 0


def test_a_file_that_fails_its_read_or_its_md5_is_not_kept(tmp_path):
    folder, manifest = copied(tmp_path, "movies")
    first, second = (next(folder.glob(f"**/{Path(f.key).name}")) for f in manifest.files[:2])
    first.write_bytes(first.read_bytes() + b"\0")  # still gzip, the same lines: only the md5 differs
    second.write_bytes(second.read_bytes()[:-20])  # cut short
    keep = KeptLines(BIG)
    with pytest.raises(ExportError, match="md5"):
        file_types(manifest, manifest.files[0], MOVIES_TABLE, keep)
    with pytest.raises(ExportError, match="md5"):  # checked alone first (its md5 is wrong too)
        file_types(manifest, manifest.files[1], MOVIES_TABLE, keep)
    assert manifest.files[0].key not in keep and manifest.files[1].key not in keep and keep.left == BIG


def test_a_read_that_does_not_hash_the_file_keeps_nothing(tmp_path):
    _, manifest = copied(tmp_path, "movies")
    keep = KeptLines(BIG)
    assert sum(1 for _ in scan_items(manifest, manifest.files[0], lambda _: True, keep=keep)) > 0
    assert manifest.files[0].key not in keep and keep.left == BIG
