"""The sample: bounded, spread over every data file, a count or a fraction."""

from __future__ import annotations

import pytest

from ddb2bigtable.advise.sample import sample_size, take_sample
from ddb2bigtable.exports.manifests import open_export

from .helpers import export_of


def test_every_file_gives_its_share_and_reading_stops(tmp_path):
    folder = export_of(tmp_path, ({"pk": f"k{i:04d}"} for i in range(1000)), per_file=100)
    sample = take_sample(open_export(str(folder)), 50)
    assert len(sample.items) == 50 and sample.files_read == sample.files == 10
    firsts = sorted(item["pk"]["S"] for item in sample.items)
    assert firsts[:5] == ["k0000", "k0001", "k0002", "k0003", "k0004"] and "k0900" in firsts and "k0005" not in firsts
    assert sample.fraction == 0.05 and sample.export_items == 1000 and not sample.complete


def test_a_short_file_leaves_its_share_to_the_next(tmp_path):
    folder = export_of(tmp_path, ({"pk": f"k{i:03d}"} for i in range(105)), per_file=100)  # files of 100 and 5
    sample = take_sample(open_export(str(folder)), 20)
    assert len(sample.items) == 15  # 10 from the first file, then the 5 the second holds
    assert sample.complete and sample.fraction == 1.0


def test_a_small_limit_reads_only_the_first_files(tmp_path):
    folder = export_of(tmp_path, ({"pk": f"k{i}"} for i in range(100)), per_file=10)
    sample = take_sample(open_export(str(folder)), 3)
    assert len(sample.items) == 3 and sample.files_read == 3


@pytest.mark.parametrize(("text", "items", "expected"), [
    ("10000", 5, 10000), ("0.01", 1_000_000, 10000), ("1.0", 42, 42), ("0.001", 10, 1), ("1", 7, 1)])
def test_sample_size(text, items, expected):
    assert sample_size(text, items) == expected


@pytest.mark.parametrize("text", ["0", "-3", "1.5", "abc", "2e3"])
def test_bad_sample_size(text):
    with pytest.raises(ValueError):
        sample_size(text, 100)


def test_bad_lines_are_counted_not_sampled(tmp_path):
    import gzip

    from ddb2bigtable.advise.report import sections
    from ddb2bigtable.advise.run import advise
    from ddb2bigtable.spec.reading import read_spec

    from .helpers import spec_file

    folder = export_of(tmp_path, ({"pk": f"k{i}"} for i in range(3)))
    (data,) = (folder / "data").iterdir()
    lines = gzip.decompress(data.read_bytes()).splitlines()
    data.write_bytes(gzip.compress(b"\n".join([lines[0], b"{not json", lines[2]]) + b"\n"))
    report = advise([read_spec(spec_file(tmp_path, ("pk", "S")))], export=str(folder))
    assert report.sampled[0].items == 2 and report.sampled[0].bad_lines == 1
    assert sections(report)[0].notes == ("things: lines read that are not items: 1 (load dead-letters them)",)
