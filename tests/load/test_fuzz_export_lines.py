"""Random export lines: each one is loaded, expired, sampled out or a counted dead letter.

A line of an export is another team's data. Whatever it holds (damaged JSON, wrong type
tags, deep nesting, lines either side of the length limit, huge numbers, binary junk), reading and routing it as the loader does
(`read_records` then `buckets.route` with the Movies codec) must put it in exactly one
bucket and never raise. Both output formats and both export types are covered.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ddb2bigtable.codec.codec import Codec
from ddb2bigtable.exports.reader import MAX_LINE, read_records
from ddb2bigtable.exports.writer import IncrementalChange, write_export, write_incremental_export
from ddb2bigtable.load.buckets import route
from ddb2bigtable.load.state import FileCounts
from ddb2bigtable.spec.reading import read_spec

from ..conftest import ROOT
from ..exports.test_export_reader import WHEN
from .one_file_export import with_lines

TABLE = read_spec(ROOT / "specs" / "movies.yaml").tables[0]
ARN = "arn:aws:dynamodb:us-west-2:123456789012:table/Movies"
GOOD = {"year": {"N": "2013"}, "title": {"S": "Rush"}, "info": {"M": {"rating": {"N": "8.3"}}}}
NOW = 1_800_000_000 * 1_000_000

tags = st.sampled_from(["S", "N", "B", "BOOL", "NULL", "SS", "NS", "BS", "M", "L", "X", ""])
scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), st.text(max_size=20),
                    st.sampled_from(["2013", "-1e999", "1" * 50, "AAEC", "not base64!", ""]))
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                       st.dictionaries(st.one_of(tags, st.text(max_size=6)), inner,
                                                                       max_size=4)), max_leaves=20)
typed = st.dictionaries(st.sampled_from(["year", "title", "info", "x", ""]),
                        st.dictionaries(tags, values, min_size=1, max_size=2), max_size=4)


@st.composite
def lines(draw) -> bytes:
    kind = draw(st.sampled_from(["item", "typed", "json", "bytes", "mutated", "nested", "long"]))
    if kind == "item":
        return json.dumps({"Item": {**GOOD, **draw(typed)}}).encode()
    if kind == "typed":
        return json.dumps({"Item": draw(typed)}).encode()
    if kind == "json":
        return json.dumps(draw(values)).encode()
    if kind == "nested":
        depth = draw(st.integers(50, 3000))
        return ('{"Item": {"year": {"N": "1"}, "title": {"S": "t"}, "deep": ' + '{"L": [' * depth
                + "]}" * depth + "}}").encode()
    if kind == "long":  # either side of the reader's line limit
        head, tail = b'{"Item": {"year": {"N": "1"}, "title": {"S": "', b'"}}}'
        size = MAX_LINE + draw(st.integers(-2, 2)) - len(head) - len(tail)
        return head + b"x" * size + tail
    good = json.dumps({"Item": GOOD}).encode()
    if kind == "mutated":
        at = draw(st.integers(0, len(good)))
        return (good[:at] + draw(st.binary(max_size=6)) + good[at + draw(st.integers(0, 6)):]).replace(b"\n", b" ")
    return draw(st.binary(max_size=60)).replace(b"\n", b" ")


@pytest.fixture(scope="module", params=["DYNAMODB_JSON", "ION"])
def export(request, tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp(request.param)
    write_export(folder, ARN, [GOOD], output_format=request.param, export_time=WHEN)
    return folder


@pytest.fixture(scope="module")
def incremental(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("incremental")
    change = IncrementalChange(keys={"year": {"N": "1"}, "title": {"S": "a"}}, write_time_micros=1, new_image=GOOD)
    write_incremental_export(folder, ARN, [change], export_time=WHEN, export_from_time=WHEN)
    return folder


# At most one line near the limit per file: the manifest says 1 item, and past 1 MiB per
# item (+ one long line) the reader rightly stops the file as a gzip bomb.
line_lists = st.lists(lines(), min_size=1, max_size=5).filter(lambda ls: sum(len(x) > 1 << 20 for x in ls) <= 1)


def _route_all(folder: Path, body: list[bytes]) -> FileCounts:
    manifest, data_file = with_lines(folder, body)
    codec, counts = Codec(TABLE, {}), FileCounts()
    for record in read_records(manifest, data_file):
        route(record, codec, NOW, NOW, None, counts)
    return counts


def _one_bucket_each(counts: FileCounts, lines_: list[bytes]) -> None:
    assert counts.read == len(lines_)
    assert counts.loaded + counts.expired + counts.dead_lettered + counts.deleted + counts.sampled_out == counts.read


@settings(max_examples=300, deadline=5000, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                   HealthCheck.too_slow])
@given(line_lists)
def test_every_random_line_lands_in_one_bucket(export, lines_):
    _one_bucket_each(_route_all(export, lines_), lines_)


@settings(max_examples=150, deadline=5000, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                   HealthCheck.too_slow])
@given(line_lists)
def test_every_random_incremental_line_lands_in_one_bucket(incremental, lines_):
    wrapped = [line if not line.startswith(b'{"Item"') else
               b'{"Metadata": {"WriteTimestampMicros": {"N": "1"}}, "Keys": {"year": {"N": "1"}, "title": {"S": "a"}}, '
               b'"NewImage"' + line[len(b'{"Item"'):] for line in lines_]
    _one_bucket_each(_route_all(incremental, wrapped), wrapped)


def _nested(levels: int) -> bytes:
    return ('{"Item": {"year": {"N": "1"}, "title": {"S": "t"}, "deep": ' + '{"M": {"a": ' * (levels - 1)
            + '{"L": []}' + "}}" * (levels - 1) + "}}").encode()


@pytest.mark.parametrize("export", ["DYNAMODB_JSON"], indirect=True)
def test_nesting_past_dynamodbs_32_levels_is_a_dead_letter_with_its_reason(export):
    manifest, data_file = with_lines(export, [_nested(32), _nested(33), _nested(5000)])
    records = list(read_records(manifest, data_file))
    assert [r.kind for r in records] == ["put", "error", "error"]
    assert "nested deeper than DynamoDB's 32 levels" in records[1].error and "depth limit" in records[2].error


@pytest.mark.parametrize("export", ["DYNAMODB_JSON"], indirect=True)
def test_binary_that_is_not_even_ascii_is_a_bad_line(export):
    """Found by this fuzz test in CI: a BS member of non-ASCII text crashed the reader."""
    manifest, data_file = with_lines(export, [b'{"Item": {"year": {"N": "1"}, "title": {"BS": ["\\u0080"]}}}'])
    (record,) = read_records(manifest, data_file)
    assert record.kind == "error" and "not valid base64" in record.error
