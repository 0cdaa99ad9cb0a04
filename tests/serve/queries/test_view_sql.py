"""The SQL serve sends to read a GSI's materialized view, and its rows read back (view_sql.py).

The statement shapes follow Google's own example of querying an asynchronous secondary
index ("Asynchronous secondary index queries",
https://cloud.google.com/bigtable/docs/asynchronous-secondary-index-queries, read
2026-11-25): ``SELECT cell_plan, original_key FROM `mv_inverted_index` WHERE
stat_description = "connected_cell" AND stat_value = "2"``, the values as `@` parameters
(google-cloud-bigtable `execute_query`, read 2026-11-25). What the statements select is
checked by running them with SQLite over rows in a view's key order (BLOBs compare as
memcmp, as Bigtable orders bytes); that GoogleSQL itself accepts them is not shown here.
An N key's bounds are checked against every float a bound can round to.
"""

from __future__ import annotations

import itertools
import math
import sqlite3
from decimal import Decimal

import pytest

from ddb2bigtable.serve.catalog import served_table
from ddb2bigtable.serve.errors import ServeError
from ddb2bigtable.serve.queries.view_sql import (
    ViewRow,
    bytes_between,
    float_range,
    float_rank,
    query_statement,
    ranked_float,
    scan_statement,
    view_row,
)
from ddb2bigtable.serve.queries.views import check_readable
from ddb2bigtable.spec.model import Gsi, KeyAttribute, KeySchema
from ddb2bigtable.spec.reading import read_specs

from ...conftest import ROOT


def test_googles_example_lookup_is_the_statement_serve_sends():
    statement = query_statement("mv_inverted_index", _keys("stat_description", "stat_value"), b"connected_cell",
                                ("EQ", [b"2"]))
    assert statement.sql == ("SELECT `stat_description`, `stat_value`, source_key FROM `mv_inverted_index` "
                             "WHERE `stat_description` = @partition AND `stat_value` IS NOT NULL "
                             "AND `stat_value` = @sort_0")
    assert statement.params == {"partition": b"connected_cell", "sort_0": b"2"}


def test_begins_with_is_a_range_and_a_prefix_of_ff_bytes_a_lower_bound():
    ranged = query_statement("v", KS, b"p", ("BEGINS_WITH", [b"ab"]), limit=10)
    assert "`s` >= @sort_0 AND `s` < @sort_1 LIMIT 10" in ranged.sql and ranged.params["sort_1"] == b"ac"
    top = query_statement("v", KS, b"p", ("BEGINS_WITH", [b"\xff\xff"]))
    assert "@sort_1" not in top.sql and top.params == {"partition": b"p", "sort_0": b"\xff\xff"}


def _keys(*names: str, kind: str = "S") -> tuple[KeyAttribute, ...]:
    return tuple(KeyAttribute(n, kind if n != names[0] else "S") for n in names)


KS = _keys("k", "s")
VALUES = [b"a", b"b", b"b\x00", b"c"]
ROWS = [(k, s, src) for k, s, src in itertools.product((b"p", b"q"), VALUES, (b"1", b"2"))]


def _run(sql: str, params: dict[str, bytes]) -> list[tuple[bytes, ...]]:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE `v` (`k` BLOB, `s` BLOB, source_key BLOB)")
    db.executemany("INSERT INTO `v` VALUES (?, ?, ?)", sorted(ROWS))
    return db.execute(sql, params).fetchall()


@pytest.mark.parametrize("backward", [False, True])
def test_the_position_is_the_tuple_order_of_the_views_key(backward):
    """Every row past (or before) a position, as Python orders the tuples, and no other."""
    for mark in ROWS:
        got = _run(*_sql_params(query_statement("v", KS, mark[0], None, start=mark[1:], backward=backward)))
        assert got == [r for r in sorted(ROWS) if r[0] == mark[0] and ((r < mark) if backward else (r > mark))]
        scanned = _run(*_sql_params(scan_statement("v", KS, mark, None)))
        assert scanned == [r for r in sorted(ROWS) if r > mark]


def _sql_params(statement):
    return statement.sql, statement.params


@pytest.mark.parametrize(("op", "bounds", "kept"), [
    ("LT", [b"b"], [b"a"]), ("LE", [b"b"], [b"a", b"b"]), ("GT", [b"b"], [b"b\x00", b"c"]),
    ("BETWEEN", [b"b", b"b\x00"], [b"b", b"b\x00"]), ("BEGINS_WITH", [b"b"], [b"b", b"b\x00"]),
])
def test_a_sort_condition_keeps_what_dynamodb_keeps_on_bytes(op, bounds, kept):
    rows = _run(*_sql_params(query_statement("v", KS, b"p", (op, bounds))))
    assert sorted({r[1] for r in rows}) == kept


def test_a_name_a_quote_cannot_hold_is_refused_and_rows_must_be_bytes():
    with pytest.raises(ServeError, match="no column"):
        scan_statement("v", _keys("a`b"), None, None)
    assert view_row({"k": b"x", "s": None, "source_key": b"r"}, KS) == ViewRow((b"x", None), b"r", (b"x", None))
    with pytest.raises(ValueError, match="not BYTES"):
        view_row({"k": "x", "source_key": b"r"}, _keys("k"))
    numbered = view_row({"k": b"x", "s": b"1.5", "s_number": 1.5, "source_key": b"r"}, _keys("k", "s", kind="N"))
    assert numbered.order == (b"x", 1.5)
    with pytest.raises(ValueError, match="not FLOAT64"):
        view_row({"k": b"x", "s": b"1", "s_number": b"1", "source_key": b"r"}, _keys("k", "s", kind="N"))


def test_an_index_the_view_cannot_read_is_refused_saying_why():
    (spec,) = read_specs([str(ROOT / "specs" / "video-single-table.yaml")])
    wide = served_table(spec.tables[0], "i", {}, (None, None))
    by_title = Gsi("by-title", KeySchema(KeyAttribute("Title", "S")))
    with pytest.raises(ServeError, match="mapping rules"):
        check_readable(wide, by_title)
    (spec,) = read_specs([str(ROOT / "specs" / "movies.yaml")])
    movies = served_table(spec.tables[0], "i", {"rating": "S", "genre": "mixed"}, (None, None))
    with pytest.raises(ServeError, match="row key"):
        check_readable(movies, Gsi("by-title", KeySchema(KeyAttribute("title", "S"))))
    with pytest.raises(ServeError, match="not stored as its own S cell"):  # typed JSON cells: {"S": ...}
        check_readable(movies, Gsi("by-genre", KeySchema(KeyAttribute("genre", "S"))))
    check_readable(movies, Gsi("by-rating", KeySchema(KeyAttribute("rating", "S"))))


NUMBERS = ["-1E+125", "-2", "-1.0000000000000001", "-1", "0", "1E-130", "0.1", "1", "1.0000000000000001", "2",
           "9007199254740993", "12345678901234567890123456789012345678", "9.9999999999999999999999999999999999999E+125"]


@pytest.mark.parametrize("op", ["EQ", "LT", "LE", "GT", "GE", "BETWEEN"])
def test_an_n_bound_keeps_every_row_whose_number_meets_it_whatever_its_float(op):
    """The SQL keeps a superset on FLOAT64 (never loses a row meeting the condition, even
    where the server's float is one ulp off Python's), and leaves out rows far from it."""
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE `v` (`k` BLOB, `s` BLOB, `s_number` REAL, source_key BLOB)")
    rows = [(b"p", n.encode(), _ulps(float(Decimal(n)), shift), f"{n}/{shift}".encode()) for n in NUMBERS
            for shift in (-1, 0, 1)]  # the server's float as Python's, or one ulp either side
    db.executemany("INSERT INTO `v` VALUES (?, ?, ?, ?)", sorted(rows, key=lambda r: (r[2], r[3])))
    keys = _keys("k", "s", kind="N")
    for bound in NUMBERS:
        bounds = [bound.encode(), NUMBERS[-1].encode()] if op == "BETWEEN" else [bound.encode()]
        statement = query_statement("v", keys, b"p", (op, bounds))
        got = db.execute(statement.sql, statement.params).fetchall()
        want = {(n.encode(), shift) for n in NUMBERS for shift in (-1, 0, 1)
                if _meets(Decimal(n), op, [Decimal(b.decode()) for b in bounds])}
        assert want <= {(r[1], int(r[3].split(b"/")[1])) for r in got}
        got = {r[1] for r in got}
        low, high = float_range(bound.encode())
        assert all(low <= float(Decimal(g.decode())) for g in got) or op in ("LT", "LE")
        assert all(float(Decimal(g.decode())) <= high for g in got) or op in ("GT", "GE", "BETWEEN")


def _ulps(value: float, steps: int) -> float:
    return math.nextafter(value, math.copysign(math.inf, steps)) if steps else value


def _meets(have: Decimal, op: str, bounds: list[Decimal]) -> bool:
    return {"EQ": have == bounds[0], "LT": have < bounds[0], "LE": have <= bounds[0], "GT": have > bounds[0],
            "GE": have >= bounds[0], "BETWEEN": bounds[0] <= have <= bounds[-1]}[op]


def test_float_ranks_keep_the_floats_order_and_give_them_back():
    values = [-math.inf, -1e308, -1.5, -5e-324, -0.0, 0.0, 5e-324, 1.0, 1e16, 1.0000000000000002e16, math.inf]
    ranks = [float_rank(v) for v in values]
    assert ranks == sorted(set(ranks))
    assert [math.copysign(1, ranked_float(r)) * abs(ranked_float(r)) for r in ranks] == values
    assert ranked_float((float_rank(1.0) + float_rank(2.0)) // 2) == 1.5  # halving a range of floats


def test_a_byte_string_between_two_lies_strictly_between_them():
    import random

    rng = random.Random(31)
    pieces = [b"", b"\x00", b"\x00\x00", b"\xff", b"a", b"ab", b"\xff\xff", b"a\x00", b"\x7f"]
    pairs = [(a + b, a + c) for a in pieces for b in pieces for c in pieces]
    pairs += [(bytes(rng.randrange(256) for _ in range(rng.randrange(6))),
               bytes(rng.randrange(256) for _ in range(rng.randrange(6)))) for _ in range(2000)]
    for low, high in pairs:
        if low >= high:
            continue
        middle = bytes_between(low, high)
        assert middle is None and high == low + b"\x00" or low < middle < high, (low, high, middle)
        assert low < bytes_between(low, None)
