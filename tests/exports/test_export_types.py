"""Type inference over an export file skips validating the items that repeat known types;
it must infer exactly what validating every item infers, bad lines included (a bad line
is dead-lettered by the load, so it must not sway a type either way)."""

from __future__ import annotations

import base64
import gzip
import tempfile
from pathlib import Path

import orjson
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from ddb2bigtable.codec.type_inference import MIXED, TypeScan, infer_types
from ddb2bigtable.exports.manifests import open_export
from ddb2bigtable.exports.reader import read_records, scan_items
from ddb2bigtable.exports.types import export_types
from ddb2bigtable.exports.writer import write_export
from ddb2bigtable.spec.model import AttributeMapping

from ..codec.test_codec import table, values
from .test_export_reader import ARN, WHEN

NAMES = ["a", "b", "c", "d"]  # few names, so most items repeat types already seen
# Numbers the reader accepts but plain JSON cannot hold exactly (hand-written exports).
ODD_NUMBERS = [".5", "5.", "007", "-0.50e+3"]
# Values that are not DynamoDB JSON: such a line is dead-lettered, whatever its types.
# Values whose type repeats across items, plain or not: what the skipping must get right.
POOL = [{"M": {"x": {"N": "1"}}}, {"M": {"x": {"SS": ["1"]}}}, {"M": {"x": {"L": [{"B": b"1"}]}}},
        {"L": [{"S": "B"}]}, {"L": [{"NS": ["2"]}]}, {"L": [{"M": {"B": {"S": "x"}}}]}, {"NS": ["1", "2"]},
        {"NS": ["007"]}, {"S": "x"}, {"N": "1"}, {"SS": ["x"]}]
INVALID = [{"N": "abc"}, {"S": 5}, {"Q": "x"}, {"S": "x", "N": "1"}, {"M": {"x": {"N": "1e"}}},
           {"L": [{"SS": [1]}]}, {"M": {"x": {"B": "not base64!"}}}, "text", {"NS": ["1", "x"]}]


def odd_values():
    odd = st.sampled_from(ODD_NUMBERS)
    return st.one_of(odd.map(lambda n: {"N": n}),
                     st.lists(odd, min_size=1, max_size=3, unique=True).map(lambda ns: {"NS": ns}),
                     odd.map(lambda n: {"M": {"x": {"N": n}}}),
                     odd.map(lambda n: {"L": [{"S": "y"}, {"N": n}]}))


def raw_items():
    """Items as they appear in the export's JSON (binary as base64), some of them invalid."""
    good = st.dictionaries(st.sampled_from(NAMES),
                           st.one_of(st.sampled_from(POOL), values(max_leaves=6), odd_values()), max_size=4)
    bad = st.dictionaries(st.sampled_from(NAMES), st.sampled_from(INVALID), min_size=1, max_size=2)
    return st.one_of(good, good, good, bad.flatmap(lambda b: good.map(lambda g: {**g, **b})))


def json_line(raw: dict) -> bytes:
    def typed(value):
        if isinstance(value, bytes):
            return base64.b64encode(value).decode()
        if isinstance(value, dict):
            return {k: typed(v) for k, v in value.items()}
        if isinstance(value, list):
            return [typed(v) for v in value]
        return value
    return orjson.dumps({"Item": {"pk": {"S": "k"}, **typed(raw)}})


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(raw_items(), min_size=1, max_size=12), st.sampled_from([None, "M", "L", "NS"]))
@example([{"a": POOL[0]}, {"a": POOL[1]}], None)  # a set inside a map seen plain before
@example([{"a": POOL[3]}, {"a": POOL[5]}], "L")  # a map key named B is still plain
@example([{"a": {"NS": ["1", "2"]}}, {"a": {"NS": ["007"]}}], None)  # a number plain JSON cannot hold
@example([{"a": {"S": "x"}}, {"a": {"N": "1"}}], None)  # a second type: mixed
@example([{"a": {"S": "x"}}, {"a": {"Q": "x"}}], None)  # a bad line's type does not count
def test_skipping_validation_infers_what_validating_every_item_infers(raw, declared):
    t = table(sk=None, attributes=[AttributeMapping("a", type=declared)] if declared else [])
    with tempfile.TemporaryDirectory() as tmp:
        write_export(Path(tmp), ARN, [{"pk": {"S": "k"}}], export_time=WHEN)
        manifest = open_export(tmp)
        f = manifest.files[0]
        (Path(tmp) / f.key).write_bytes(gzip.compress(b"\n".join(json_line(r) for r in raw) + b"\n"))

        validated = infer_types((r.item for r in read_records(manifest, f) if r.item is not None), t)
        scan = TypeScan()
        for item in scan_items(manifest, f, scan.news):
            scan.add(item)
        assert scan.types(t) == validated


def test_an_attribute_seen_with_two_types_or_with_a_set_inside_is_mixed(tmp_path):
    items = [{"pk": {"S": "1"}, "a": {"S": "x"}, "m": {"M": {"n": {"N": "1"}}}},
             {"pk": {"S": "2"}, "a": {"N": "2"}, "m": {"M": {"n": {"NS": ["1"]}}}},
             {"pk": {"S": "3"}, "a": {"S": "y"}, "m": {"M": {"n": {"N": "3"}}}}]
    write_export(tmp_path, ARN, items, export_time=WHEN, items_per_file=2)
    manifest = open_export(str(tmp_path))
    types = export_types(manifest, table(sk=None))
    assert types == {"pk": "S", "a": MIXED, "m": MIXED}
