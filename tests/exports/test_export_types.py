"""Type inference over an export file skips validating the items that repeat known types;
it must infer exactly what validating every item infers, bad lines included (a bad line
is dead-lettered by the load, so it must not sway a type either way)."""

from __future__ import annotations

import base64
import copy
import gzip
import json
import random
import tempfile
from pathlib import Path

import msgspec
import orjson
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from ddb2bigtable.codec.type_inference import KNOWN_AT_MOST, MIXED, TypeScan, infer_types
from ddb2bigtable.exports.json_lines import BadLine, json_full
from ddb2bigtable.exports.manifests import open_export
from ddb2bigtable.exports.reader import known_lines, read_records, scan_items
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
        for known in (False, True):  # parsed and asked (`news`), or decoded against `known_items` first
            scan = TypeScan()
            for item in scan_items(manifest, f, scan.news, known=scan.known_items if known else None):
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


# --- the lines' text: what `known_items` decodes in C must settle only what `news` would ------

# A name that is a tag, one escaped in JSON, the empty name, names msgspec cannot take as a field's.
TEXT_NAMES = ["a", "b", "B", "é", "", 'q"', "\\", "\x01"]
TEXT_POOL = [*POOL, {"N": "1E+2"}, {"N": "-0"}, {"N": "1e400"}, {"N": "+5"}, {"NS": ["1e05", "-0.0"]},
             {"M": {"x": {"N": "inf"}}}, {"L": [{"N": "nan"}]}, {"L": [{"N": " 1"}]}, {"M": {"N": {"N": "1"}}},
             {"BOOL": True}, {"NULL": True}, {"B": b"\x00"}, {"L": []}, {"M": {}}, {"L": [{"L": [{"BS": [b"1"]}]}]}]


def json_text(value, rnd: random.Random) -> str:
    """JSON as a hand-written export might spell it: spaces and tabs between tokens,
    characters escaped as \\uXXXX (tags and names too), keys given twice (JSON's last one
    wins, as orjson reads it), binary as base64."""
    def space() -> str:
        return rnd.choice(["", "", "", " ", "\t", " \r "])

    def text(s: str) -> str:
        out = []
        for ch in s:
            if ch in '"\\' or ord(ch) < 0x20 or rnd.random() < 0.15:
                out.append(f"\\u{ord(ch):04x}" if rnd.random() < 0.8 or ch not in '"\\' else "\\" + ch)
            else:
                out.append(ch)
        return '"' + "".join(out) + '"'

    if isinstance(value, bytes):
        value = base64.b64encode(value).decode()
    if isinstance(value, str):
        return text(value)
    if isinstance(value, dict):
        pairs = list(value.items())
        if pairs and rnd.random() < 0.2:  # a duplicate key, before (overridden) or after (wins)
            key = rnd.choice(pairs)[0]
            pairs.insert(rnd.randrange(len(pairs) + 1), (key, rnd.choice([*TEXT_POOL, *INVALID])))
        body = ",".join(f"{space()}{text(k)}{space()}:{space()}{json_text(v, rnd)}{space()}" for k, v in pairs)
        return "{" + body + "}"
    if isinstance(value, list):
        return "[" + ",".join(space() + json_text(v, rnd) + space() for v in value) + "]"
    return json.dumps(value)


class _Tame(random.Random):
    """For the explicit examples: no escapes, no duplicate keys, no damage, `Item` alone."""

    def random(self) -> float:
        return 0.5


TAME = _Tame()
# Values inside a map or list: plain, or what makes it need the typed form.
NESTED = [{"N": "1"}, {"N": "-0.5E+3"}, *({"N": n} for n in ODD_NUMBERS), {"N": "1e400"}, {"SS": ["s"]}, {"NS": ["1"]},
          {"BS": [b"1"]}, {"B": b"1"}, {"S": "x"}, {"BOOL": False}, {"NULL": True}, {"M": {"B": {"S": "x"}}},
          {"L": [{"N": "007"}]}, {"M": {"y": {"L": [{"B": b"2"}]}}}]


def same_tag(value) -> st.SearchStrategy:
    """Another value with `value`'s tag, plain or not (an item that repeats the types seen)."""
    tag = next(iter(value)) if isinstance(value, dict) and len(value) == 1 else None
    nested = st.sampled_from(NESTED)
    if tag == "M":
        return nested.map(lambda v: {"M": {"x": v}})
    if tag == "L":
        return nested.map(lambda v: {"L": [{"S": "y"}, v]})
    if tag == "NS":
        return st.lists(st.sampled_from(["1", "2.5", *ODD_NUMBERS, "1E+2"]), min_size=1, max_size=3).map(
            lambda ns: {"NS": ns})
    return st.just(value)


def text_line(raw: dict, rnd: random.Random) -> bytes:
    """One export line for this item, or a line that is not one: bad JSON, another shape."""
    shape = rnd.random()
    if shape < 0.06:
        return rnd.choice([b"[]", b'"Item"', b"{}", b'{"Item": null}', b'{"Item": []}', b'{"Item": {}}', b"",
                           b'{"Item": {"a": {"S": "x"}}} {}', b'{"Item": {"a": {"S": "x"}}', b"\xff\xfe"])
    line = {"Item": raw} if shape < 0.8 else {"Other": [1, {"S": "x"}], "Item": raw}
    text = json_text(line, rnd).encode()
    if rnd.random() < 0.05:  # cut short or a stray byte
        cut = rnd.randrange(len(text))
        text = text[:cut] if rnd.random() < 0.5 else text[:cut] + rnd.choice([b"}", b",", b"\\", b"\xc3"]) + text[cut:]
    return text


def text_items():
    good = st.dictionaries(st.sampled_from(TEXT_NAMES),
                           st.one_of(st.sampled_from(TEXT_POOL), values(max_leaves=6), odd_values()), max_size=4)
    bad = st.dictionaries(st.sampled_from(TEXT_NAMES), st.sampled_from(INVALID), min_size=1, max_size=2)
    return st.one_of(good, good, good, bad.flatmap(lambda b: good.map(lambda g: {**g, **b})))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.lists(text_items(), min_size=1, max_size=4), st.integers(1, 8), st.lists(text_items(), max_size=16),
       st.randoms(use_true_random=False), st.sampled_from([None, "M", "L", "NS"]))
@example([{"a": {"M": {"x": {"N": "1"}}}}], 8, [{"a": {"M": {"x": {"N": "007"}}}}], TAME, "M")
@example([{"a": {"L": [{"S": "x"}]}}], 8, [{"a": {"L": [{"M": {"y": {"SS": ["s"]}}}]}}], TAME, "L")
@example([{"a": {"NS": ["1"]}}], 8, [{"a": {"NS": ["1", ".5"]}}], TAME, None)
@example([{"a": {"S": "x"}, "b": {"N": "1"}}], 8, [{"a": {"S": "y"}, "b": {"B": b"1"}}], TAME, None)
def test_lines_decoded_against_the_known_types_infer_what_validating_every_line_infers(
        first, repeat, raw, rnd, declared):
    """The inference pass (most lines decoded by msgspec against `TypeScan.known_items`, the
    rest parsed and asked `news`) infers exactly what `infer_types` infers over every line
    `json_full` accepts, whatever the lines' spelling: escapes, spaces, duplicate keys,
    odd numbers (`007`, `.5`, `1E+2`, `1e400`), sets and binary nested at any depth, bad
    JSON and lines of other shapes. Runs of similar lines, so the type is built, used,
    outgrown and built again within one file: the first items `repeat` times, then others."""
    t = table(sk=None, attributes=[AttributeMapping("a", type=declared)] if declared else [])
    lines = [text_line(r, rnd) for r in first * repeat + raw]
    with tempfile.TemporaryDirectory() as tmp:
        write_export(Path(tmp), ARN, [{"pk": {"S": "k"}}], export_time=WHEN)
        manifest = open_export(tmp)
        f = manifest.files[0]
        (Path(tmp) / f.key).write_bytes(gzip.compress(b"\n".join(lines) + b"\n"))
        validated = infer_types((r.item for r in read_records(manifest, f) if r.item is not None), t)
        scan = TypeScan()
        for item in scan_items(manifest, f, scan.news, known=scan.known_items):
            scan.add(item)
        assert scan.types(t) == validated


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.lists(text_items(), min_size=1, max_size=6), st.data(), st.randoms(use_true_random=False))
@example([{"a": {"M": {"x": {"N": "1"}}}}], {"a": {"M": {"x": {"N": "007"}}}}, TAME)
@example([{"a": {"M": {"x": {"N": "1"}}}}], {"a": {"M": {"x": {"L": [{"B": b"1"}]}}}}, TAME)
@example([{"a": {"S": "x"}}, {"a": {"N": "1"}}], {"a": {"NS": ["007"]}}, TAME)
def test_a_line_known_items_settles_would_change_nothing(seen, candidate, rnd):  # candidate: an item or st.data()
    """The rule itself, line by line: a line whose `Item` decodes as `known_items` is one
    `json_full` refuses (dead-lettered: it counts for nothing), or whose item `add` would
    not change the scan. Errs only towards "not settled"."""
    scan = TypeScan()
    for raw in seen:
        try:
            scan.add(json_full(text_line(raw, rnd))[0])
        except BadLine:
            pass
    for _ in range(len(scan.seen) + 1):  # the reader asks `news` about the lines it does not settle
        scan.news(None)
    if scan.known_items() is None:
        return
    if not isinstance(candidate, dict):  # mostly a seen item with other values of the same tags
        base = candidate.draw(st.sampled_from(seen))
        candidate = candidate.draw(st.one_of(
            text_items(), st.fixed_dictionaries({name: same_tag(value) for name, value in base.items()})))
    line = text_line(candidate, rnd)
    try:
        known_lines(scan.known_items())(line)
    except (msgspec.DecodeError, RecursionError, ValueError):
        return  # not settled: parsed and asked `news`
    try:
        item = json_full(line)[0]
    except BadLine:
        return
    after = copy.deepcopy(scan)
    after.add(item)
    assert (after.seen, after.not_plain) == (scan.seen, scan.not_plain)


def test_a_wide_table_infers_the_same_past_the_known_items_limit(tmp_path):
    """An export whose items bring more attributes than `known_items` takes
    (KNOWN_AT_MOST): the lines then all go to `news`, with the same types."""
    rnd = random.Random(3)
    raw = [{f"attr {n}": rnd.choice(POOL) for n in range(i, i + 12)} for i in range(0, 2 * KNOWN_AT_MOST, 6)]
    write_export(tmp_path, ARN, [{"pk": {"S": "k"}}], export_time=WHEN)
    manifest = open_export(str(tmp_path))
    f = manifest.files[0]
    (tmp_path / f.key).write_bytes(gzip.compress(b"\n".join(text_line(r, TAME) for r in raw * 3) + b"\n"))
    t = table(sk=None)
    validated = infer_types((r.item for r in read_records(manifest, f) if r.item is not None), t)
    scan = TypeScan()
    for item in scan_items(manifest, f, scan.news, known=scan.known_items):
        scan.add(item)
    assert scan.types(t) == validated
    assert len(scan.seen) > KNOWN_AT_MOST and scan.known_items() is None


def test_lines_with_names_that_are_not_utf8_are_not_settled_and_count_for_nothing(tmp_path):
    """Bytes that are not UTF-8 in a name (msgspec raises UnicodeDecodeError there, no
    DecodeError) are a bad line once the type is built: dead-lettered, no type."""
    good = b'{"Item":{"a":{"M":{"x":{"S":"y"}}},"b":{"S":"z"}}}'
    bad = [b'{"Item":{"a":{"M":{"\xff":{"SS":["y"]}}}}}', b'{"Item":{"\xff":{"N":"1"}}}',
           b'{"Item":{"a":{"M":{"x":{"S":"\xff"}}},"b":{"N":"1"}}}']
    write_export(tmp_path, ARN, [{"pk": {"S": "k"}}], export_time=WHEN)
    manifest = open_export(str(tmp_path))
    f = manifest.files[0]
    (tmp_path / f.key).write_bytes(gzip.compress(b"\n".join([good] * 5 + bad) + b"\n"))
    scan = TypeScan()
    for item in scan_items(manifest, f, scan.news, known=scan.known_items):
        scan.add(item)
    assert scan.types(table(sk=None)) == {"pk": "S", "a": "M", "b": "S"}
