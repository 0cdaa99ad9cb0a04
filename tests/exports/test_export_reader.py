"""The export reader reads what AWS writes (and what our writer writes like AWS), streams
it in bounded memory, and says exactly which file and line is wrong."""

from __future__ import annotations

import filecmp
import gzip
import importlib.util
import json
import tempfile
import tracemalloc
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ddb2bigtable.codec.items import Item
from ddb2bigtable.exports.json_lines import dynamodb_number_text
from ddb2bigtable.exports.manifests import ExportError, Manifest, open_export, verify_file
from ddb2bigtable.exports.reader import Record, read_records
from ddb2bigtable.exports.writer import (
    IncrementalChange,
    S3Location,
    item_from_plain,
    write_export,
    write_incremental_export,
)

ROOT = Path(__file__).resolve().parents[2]
EXPORTS = ROOT / "exports"
MOVIES_JSON = ROOT / "exports" / "sources" / "moviedata.json.gz"
ARN = "arn:aws:dynamodb:us-east-1:123456789012:table/Things"
WHEN = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
FORMATS = ["DYNAMODB_JSON", "ION"]
# The md5Checksum AWS wrote for an empty partition's data file in a real export.
AWS_EMPTY_FILE_MD5 = "FjvgqIxwymKf1RbbqtrZag=="

EVERY_TYPE: Item = {
    "pk": {"S": "thing#1"},
    "sk": {"N": "-12.5"},
    "text": {"S": "naïve \"quoted\" 'single' \\ back\nnew line\t tab \x01 😀"},
    "empty": {"S": ""},
    "big": {"N": "12345678901234567890123456789012345678"},
    "tiny": {"N": "0.000000000000000000000000000001"},
    "huge": {"N": "99900000000000000000000000000000000000000000000000"},
    "zero": {"N": "0"},
    "blob": {"B": bytes(range(256))},
    "yes": {"BOOL": True},
    "no": {"BOOL": False},
    "nothing": {"NULL": True},
    "tags": {"SS": ["red", "green", "ünïcode"]},
    "scores": {"NS": ["1", "-2.5", "600", "0.001"]},
    "blobs": {"BS": [b"\x00", b"\xff\xfe", b"abc"]},
    "1080p": {"S": "needs a quoted ION symbol"},
    "null": {"S": "an ION keyword as a name"},
    "nested": {"M": {
        "list": {"L": [{"N": "1"}, {"S": "two"}, {"L": [{"BOOL": False}, {"NULL": True}]}, {"M": {}}]},
        "map": {"M": {"deep": {"M": {"b": {"B": b"\x01"}, "ns": {"NS": ["7"]}}}}},
        "it's": {"L": []},
    }},
}


def export(tmp: Path, items: list[Item], **options) -> Manifest:
    write_export(tmp, ARN, items, export_time=WHEN, **options)
    return open_export(str(tmp))


def records(manifest: Manifest) -> list[Record]:
    return [r for f in manifest.files for r in read_records(manifest, f)]


def movies_by_key() -> dict[tuple[str, str], Item]:
    with gzip.open(MOVIES_JSON, "rt", encoding="utf-8") as f:
        plain = json.load(f, parse_float=Decimal, parse_int=Decimal)
    items = [item_from_plain(movie) for movie in plain]
    return {(i["year"]["N"], i["title"]["S"]): i for i in items}


def rewrite(path: Path, lines: list[bytes]) -> None:
    path.write_bytes(gzip.compress(b"".join(lines)))


# --- round trips --------------------------------------------------------------------------

@pytest.mark.parametrize("output_format", FORMATS)
def test_every_type_survives_writer_and_reader(tmp_path, output_format):
    items = [EVERY_TYPE | {"pk": {"S": f"thing#{i}"}} for i in range(5)]
    manifest = export(tmp_path, items, output_format=output_format, items_per_file=2, s3=S3Location(prefix="backups/2026"))

    assert (manifest.export_type, manifest.output_format, manifest.item_count) == ("FULL_EXPORT", output_format, 5)
    assert manifest.export_time_micros == int(WHEN.timestamp()) * 1_000_000
    assert manifest.export_arn.startswith(f"{ARN}/export/")
    assert [f.item_count for f in manifest.files] == [2, 2, 1]
    assert all(f.key.startswith("backups/2026/AWSDynamoDB/") for f in manifest.files)
    for f in manifest.files:
        verify_file(manifest, f)
    got = records(manifest)
    assert [r.item for r in got] == items
    assert {(r.kind, r.keys, r.write_time_micros, r.error) for r in got} == {("put", None, None, None)}
    assert [(r.file, r.line) for r in got] == [(f.key, n) for f in manifest.files for n in range(1, f.item_count + 1)]


NAMES = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=8)
NUMBERS = st.decimals(allow_nan=False, allow_infinity=False).filter(  # DynamoDB's range and precision
    lambda d: d.is_zero() or (-130 <= d.adjusted() <= 125 and len(d.normalize().as_tuple().digits) <= 38)
).map(dynamodb_number_text)
TEXTS = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
SCALARS = st.one_of(
    TEXTS.map(lambda s: {"S": s}), NUMBERS.map(lambda n: {"N": n}), st.binary(max_size=8).map(lambda b: {"B": b}),
    st.booleans().map(lambda b: {"BOOL": b}), st.just({"NULL": True}),
    st.lists(TEXTS, min_size=1, max_size=3, unique=True).map(lambda v: {"SS": v}),
    st.lists(NUMBERS, min_size=1, max_size=3, unique=True).map(lambda v: {"NS": v}),
    st.lists(st.binary(max_size=4), min_size=1, max_size=3, unique=True).map(lambda v: {"BS": v}),
)
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3).map(lambda v: {"L": v}),
    st.dictionaries(NAMES, inner, max_size=3).map(lambda v: {"M": v})), max_leaves=8)
ITEMS = st.dictionaries(NAMES, VALUES, min_size=1, max_size=5)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(item=ITEMS, output_format=st.sampled_from(FORMATS))
def test_any_item_round_trips(item, output_format):
    with tempfile.TemporaryDirectory() as tmp:
        manifest = export(Path(tmp), [item], output_format=output_format)
        assert [r.item for r in records(manifest)] == [item]


def test_writer_is_deterministic(tmp_path):
    for run in ("a", "b"):
        write_export(tmp_path / run, ARN, [EVERY_TYPE], output_format="ION", export_time=WHEN)
    comparison = filecmp.dircmp(tmp_path / "a", tmp_path / "b")
    assert not comparison.diff_files and not comparison.left_only and not comparison.right_only


def test_an_empty_table_gives_the_empty_file_aws_writes(tmp_path):
    manifest = export(tmp_path, [])
    (empty,) = manifest.files
    assert (empty.item_count, empty.md5) == (0, AWS_EMPTY_FILE_MD5)
    verify_file(manifest, empty)
    assert list(read_records(manifest, empty)) == []


def test_the_lines_in_aws_documentation_read_as_one_item(tmp_path):
    documented_json = (b'{"Item":{"Authors":{"SS":["Author1","Author2"]},"Dimensions":{"S":"8.5 x 11.0 x 1.5"},'
                       b'"ISBN":{"S":"333-3333333333"},"Id":{"N":"103"},"InPublication":{"BOOL":false},'
                       b'"PageCount":{"N":"600"},"Price":{"N":"2000"},"ProductCategory":{"S":"Book"},'
                       b'"Title":{"S":"Book 103 Title"}}}\n')
    documented_ion = (b'$ion_1_0 {Item:{Authors:$dynamodb_SS::["Author1","Author2"],Dimensions:"8.5 x 11.0 x 1.5",'
                      b'ISBN:"333-3333333333",Id:103.,InPublication:false,PageCount:6d2,Price:2d3,'
                      b'ProductCategory:"Book",Title:"Book 103 Title"}}\n')
    items = []
    for output_format, line in [("DYNAMODB_JSON", documented_json), ("ION", documented_ion)]:
        manifest = export(tmp_path / output_format, [{"x": {"S": "placeholder"}}], output_format=output_format)
        rewrite(tmp_path / output_format / manifest.files[0].key, [line])
        (record,) = records(manifest)
        items.append(record.item)
    assert items[0] == items[1]
    assert items[0]["PageCount"] == {"N": "600"} and items[0]["Authors"] == {"SS": ["Author1", "Author2"]}


@pytest.mark.parametrize(("number", "text"), [
    (Decimal("6E+2"), "600"), (Decimal("103"), "103"), (Decimal("6.20"), "6.2"), (Decimal("-0"), "0"),
    (Decimal("0E-5"), "0"), (Decimal("-1.5E-3"), "-0.0015"), (1985, "1985"),
    (Decimal("12345678901234567890123456789012345678"), "12345678901234567890123456789012345678"),
])
def test_numbers_read_as_dynamodb_writes_them(number, text):
    assert dynamodb_number_text(number) == text


# --- the shipped exports ------------------------------------------------------------------

def test_shipped_movies_export_is_the_movies_sample():
    manifest = open_export(str(EXPORTS / "movies"))
    assert (manifest.output_format, manifest.item_count) == ("DYNAMODB_JSON", 4609)
    for f in manifest.files:
        verify_file(manifest, f)
        assert sum(1 for _ in read_records(manifest, f)) == f.item_count
    got = records(manifest)
    assert {r.kind for r in got} == {"put"}
    by_key = {(r.item["year"]["N"], r.item["title"]["S"]): r.item for r in got}
    assert len(by_key) == 4609  # (year, title) is unique
    assert by_key == movies_by_key()


def test_shipped_ion_export_holds_the_same_items():
    def items(folder: str) -> dict[tuple[str, str], Item]:
        manifest = open_export(str(EXPORTS / folder))
        for f in manifest.files:
            verify_file(manifest, f)
        return {(r.item["year"]["N"], r.item["title"]["S"]): r.item for r in records(manifest)}

    assert open_export(str(EXPORTS / "other" / "movies-ion")).output_format == "ION"
    assert items("other/movies-ion") == items("movies")


def test_shipped_incremental_export_carries_puts_deletes_and_write_times():
    manifest = open_export(str(EXPORTS / "other" / "movies-incremental"))
    assert (manifest.export_type, manifest.item_count) == ("INCREMENTAL_EXPORT", 6)
    assert all(f.key.startswith("AWSDynamoDB/data/") for f in manifest.files)  # AWS's shared folder
    for f in manifest.files:
        verify_file(manifest, f)
    got = records(manifest)
    changes = {(r.keys["year"]["N"], r.keys["title"]["S"]): r for r in got}
    assert {key: r.kind for key, r in changes.items()} == {
        ("2019", "Parasite"): "put", ("2019", "Joker"): "put", ("2013", "Rush"): "put",
        ("2013", "Thor: The Dark World"): "put", ("2010", "Frozen"): "delete", ("2018", "Halloween III"): "delete"}
    assert changes["2013", "Rush"].item["info"]["M"]["rating"] == {"N": "8.1"}
    assert all(r.item is None for r in got if r.kind == "delete")
    window_start = open_export(str(EXPORTS / "movies")).export_time_micros
    assert all(window_start <= r.write_time_micros < manifest.export_time_micros for r in got)
    assert [r.write_time_micros for r in got] == sorted(r.write_time_micros for r in got)

    table = movies_by_key()  # the full export with the changes applied keeps every other movie
    for key, r in changes.items():
        if r.kind == "put":
            table[key] = r.item
        else:
            del table[key]
    assert len(table) == 4609


def test_shipped_exports_are_what_the_build_script_writes(tmp_path):
    spec = importlib.util.spec_from_file_location("build_exports", ROOT / "scripts" / "build_exports.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    for folder in script.build_all(tmp_path):
        name = folder.relative_to(tmp_path).parts[0]
        for built in (tmp_path / name).rglob("*"):
            if built.is_file():
                shipped = EXPORTS / name / built.relative_to(tmp_path / name)
                assert shipped.read_bytes() == built.read_bytes(), f"{shipped} is stale: run scripts/build_exports.py"


# --- incremental exports ------------------------------------------------------------------

@pytest.mark.parametrize("output_format", FORMATS)
def test_incremental_records_are_puts_and_deletes_with_write_times(tmp_path, output_format):
    old = {"pk": {"S": "a"}, "v": {"N": "1"}}
    new = EVERY_TYPE | {"pk": {"S": "a"}}
    changes = [
        IncrementalChange({"pk": {"S": "a"}}, 1_795_165_200_000_001, new_image=new, old_image=old),
        IncrementalChange({"pk": {"S": "b"}}, 1_795_165_200_000_002, new_image={"pk": {"S": "b"}}),
        IncrementalChange({"pk": {"S": "c"}}, 1_795_165_200_000_003, old_image={"pk": {"S": "c"}}),
        IncrementalChange({"pk": {"S": "d"}}, 1_795_165_200_000_004),  # NEW_IMAGE view: keys only
    ]
    write_incremental_export(tmp_path, ARN, changes, output_format=output_format, export_time=WHEN, export_from_time=WHEN - timedelta(hours=2))
    manifest = open_export(str(tmp_path))
    assert manifest.export_type == "INCREMENTAL_EXPORT"
    got = records(manifest)
    assert [(r.kind, r.keys, r.item, r.write_time_micros) for r in got] == [
        ("put", {"pk": {"S": "a"}}, new, 1_795_165_200_000_001),
        ("put", {"pk": {"S": "b"}}, {"pk": {"S": "b"}}, 1_795_165_200_000_002),
        ("delete", {"pk": {"S": "c"}}, None, 1_795_165_200_000_003),
        ("delete", {"pk": {"S": "d"}}, None, 1_795_165_200_000_004),
    ]


def test_an_incremental_line_without_a_write_time_is_an_error_record(tmp_path):
    write_incremental_export(tmp_path, ARN, [IncrementalChange({"pk": {"S": "a"}}, 1)], export_time=WHEN)
    manifest = open_export(str(tmp_path))
    rewrite(tmp_path / manifest.files[0].key, [b'{"Keys":{"pk":{"S":"a"}},"NewImage":{"pk":{"S":"a"}}}\n'])
    (record,) = records(manifest)
    assert record.kind == "error" and "WriteTimestampMicros" in record.error


# --- damaged exports ----------------------------------------------------------------------

def test_a_changed_data_file_fails_its_md5(tmp_path):
    manifest = export(tmp_path, [{"pk": {"S": "a"}}, {"pk": {"S": "b"}}])
    f = manifest.files[0]
    rewrite(tmp_path / f.key, [b'{"Item":{"pk":{"S":"a"}}}\n'])
    with pytest.raises(ExportError, match="md5") as raised:
        verify_file(manifest, f)
    assert f.key in str(raised.value) and f.md5 in str(raised.value)


def test_a_missing_data_file_is_an_export_error(tmp_path):
    manifest = export(tmp_path, [{"pk": {"S": "a"}}])
    f = manifest.files[0]
    (tmp_path / f.key).unlink()
    with pytest.raises(ExportError, match="missing") as raised:
        verify_file(manifest, f)
    assert f.key in str(raised.value)
    with pytest.raises(ExportError, match="missing"):
        list(read_records(manifest, f))


@pytest.mark.parametrize(("output_format", "bad_lines"), [
    ("DYNAMODB_JSON", [b'{"Item":{"pk":{"S":"x"}', b'{"Item":{"pk":{"N":"abc"}}}', b'{"Item":{"pk":{"Q":"x"}}}',
                       b'{"Item":{"pk":{"B":"not base64!"}}}', b'{"Item":{}}', b'[1,2]', b'\xff\xfe']),
    ("ION", [b'$ion_1_0 {Item:{pk:"x"', b"$ion_1_0 {Item:{pk:2026-11-20T}}", b'$ion_1_0 {Item:{pk:1.5e0}}',
             b'$ion_1_0 {Item:{s:$dynamodb_SS::[1.]}}', b'$ion_1_0 {Thing:{pk:"x"}}', b"\xff\xfe"]),
])
def test_a_bad_line_is_an_error_record_and_the_others_still_come(tmp_path, output_format, bad_lines):
    items = [{"pk": {"S": f"item#{i}"}} for i in range(3)]
    manifest = export(tmp_path, items, output_format=output_format)
    f = manifest.files[0]
    with gzip.open(tmp_path / f.key) as stream:
        good = stream.readlines()
    rewrite(tmp_path / f.key, [good[0], *(line + b"\n" for line in bad_lines), good[1], good[2]])

    got = list(read_records(manifest, f))
    assert [r.item for r in got if r.kind == "put"] == items
    errors = [r for r in got if r.kind == "error"]
    assert [(r.file, r.line) for r in errors] == [(f.key, n) for n in range(2, 2 + len(bad_lines))]
    assert all(r.error and r.item is None for r in errors)
    assert errors[0].raw == bad_lines[0].decode()


def test_a_long_bad_line_is_kept_to_1000_characters(tmp_path):
    manifest = export(tmp_path, [{"pk": {"S": "a"}}])
    rewrite(tmp_path / manifest.files[0].key, [b"x" * 5000 + b"\n"])
    (record,) = records(manifest)
    assert record.kind == "error" and record.raw == "x" * 1000


def test_a_truncated_gzip_names_the_file_and_the_last_good_line(tmp_path):
    items = [{"pk": {"S": f"item#{i}"}, "pad": {"S": f"{i}" * 200}} for i in range(2000)]
    manifest = export(tmp_path, items, items_per_file=2000)
    f = manifest.files[0]
    path = tmp_path / f.key
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])

    seen = []
    with pytest.raises(ExportError, match="truncated or corrupt") as raised:
        for record in read_records(manifest, f):
            seen.append(record)
    assert f.key in str(raised.value)
    assert f"after line {len(seen)}" in str(raised.value)
    assert 0 < len(seen) < 2000 and all(r.kind == "put" for r in seen)


def test_manifests_that_disagree_on_the_item_count_are_an_export_error(tmp_path):
    folder = write_export(tmp_path, ARN, [{"pk": {"S": "a"}}], export_time=WHEN)
    summary = folder / "manifest-summary.json"
    summary.write_text(summary.read_text().replace('"itemCount":1', '"itemCount":2'))
    with pytest.raises(ExportError, match="hold 1 items but .* says 2"):
        open_export(str(tmp_path))


def test_a_summary_that_is_not_an_export_manifest_is_an_export_error(tmp_path):
    folder = write_export(tmp_path, ARN, [], export_time=WHEN)
    (folder / "manifest-summary.json").write_text('{"outputFormat": "CSV"}')
    with pytest.raises(ExportError, match="outputFormat 'CSV'"):
        open_export(str(tmp_path))


# --- locations ----------------------------------------------------------------------------

def test_an_export_opens_from_its_prefix_its_folder_or_its_summary(tmp_path):
    folder = write_export(tmp_path / "bucket" / "prefix", ARN, [{"pk": {"S": "a"}}], export_time=WHEN)
    for location in [tmp_path / "bucket", tmp_path / "bucket" / "prefix", folder, folder / "manifest-summary.json"]:
        manifest = open_export(str(location))
        assert manifest.location == str(location)
        assert [r.item for r in records(manifest)] == [{"pk": {"S": "a"}}]
    assert open_export(f"file://{tmp_path}/bucket").item_count == 1


def test_a_prefix_with_several_exports_lists_them(tmp_path):
    first = write_export(tmp_path, ARN, [], export_time=WHEN)
    second = write_export(tmp_path, ARN, [], export_time=WHEN + timedelta(days=1))
    with pytest.raises(ExportError, match="holds 2 exports") as raised:
        open_export(str(tmp_path))
    assert first.name in str(raised.value) and second.name in str(raised.value)


def test_a_folder_without_an_export_is_an_export_error(tmp_path):
    with pytest.raises(ExportError, match="no AWSDynamoDB/<exportId>/manifest-summary.json"):
        open_export(str(tmp_path))
    with pytest.raises(ExportError, match="no such folder"):
        open_export(str(tmp_path / "nowhere"))


# --- memory -------------------------------------------------------------------------------

def test_reading_a_large_export_keeps_memory_bounded(tmp_path):
    count = 200_000
    pad = "p" * 200
    items = ({"pk": {"S": f"user#{i:06d}"}, "n": {"N": str(i)}, "pad": {"S": pad}} for i in range(count))
    write_export(tmp_path, ARN, items, export_time=WHEN, items_per_file=count)  # one ~50 MB file
    manifest = open_export(str(tmp_path))
    (f,) = manifest.files
    with gzip.open(tmp_path / f.key) as stream:
        size = sum(len(block) for block in iter(lambda: stream.read(1 << 20), b""))
    assert size > 40 * 2**20  # loading the file whole would break the bound below

    tracemalloc.start()
    try:
        verify_file(manifest, f)
        puts = sum(record.kind == "put" for record in read_records(manifest, f))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert puts == count
    assert peak < 30 * 2**20, f"peak {peak / 2**20:.1f} MiB"


def test_shipped_exports_are_small():
    total = sum(p.stat().st_size for p in EXPORTS.rglob("*") if p.is_file())
    assert total < 3 * 2**20
