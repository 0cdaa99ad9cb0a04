"""The SQL serve sends to read a GSI's materialized view, and its rows read back (view_sql.py).

The statement shapes follow Google's own example of querying an asynchronous secondary
index ("Asynchronous secondary index queries",
https://cloud.google.com/bigtable/docs/asynchronous-secondary-index-queries, read
2026-11-25): ``SELECT cell_plan, original_key FROM `mv_inverted_index` WHERE
stat_description = "connected_cell" AND stat_value = "2"``, the values as `@` parameters
(google-cloud-bigtable `execute_query`, read 2026-11-25). What the statements select is
checked by running them with SQLite over rows in a view's key order (BLOBs compare as
memcmp, as Bigtable orders bytes); that GoogleSQL itself accepts them is not shown here.
"""

from __future__ import annotations

import itertools
import sqlite3

import pytest

from ddb2bigtable.serve.errors import ServeError
from ddb2bigtable.serve.tables import served_table
from ddb2bigtable.serve.view_sql import ViewRow, query_statement, scan_statement, view_row
from ddb2bigtable.serve.views import check_readable
from ddb2bigtable.spec.model import Gsi, KeyAttribute, KeySchema
from ddb2bigtable.spec.reading import read_specs

from ..conftest import ROOT


def test_googles_example_lookup_is_the_statement_serve_sends():
    statement = query_statement("mv_inverted_index", ("stat_description", "stat_value"), b"connected_cell",
                                ("EQ", [b"2"]), None, False, None)
    assert statement.sql == ("SELECT `stat_description`, `stat_value`, source_key FROM `mv_inverted_index` "
                             "WHERE `stat_description` = @partition AND `stat_value` IS NOT NULL "
                             "AND `stat_value` = @sort_0")
    assert statement.params == {"partition": b"connected_cell", "sort_0": b"2"}


def test_begins_with_is_a_range_and_a_prefix_of_ff_bytes_a_lower_bound():
    ranged = query_statement("v", ("k", "s"), b"p", ("BEGINS_WITH", [b"ab"]), None, False, 10)
    assert "`s` >= @sort_0 AND `s` < @sort_1 LIMIT 10" in ranged.sql and ranged.params["sort_1"] == b"ac"
    top = query_statement("v", ("k", "s"), b"p", ("BEGINS_WITH", [b"\xff\xff"]), None, False, None)
    assert "@sort_1" not in top.sql and top.params == {"partition": b"p", "sort_0": b"\xff\xff"}


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
        got = _run(*_sql_params(query_statement("v", ("k", "s"), mark[0], None, mark[1:], backward, None)))
        assert got == [r for r in sorted(ROWS) if r[0] == mark[0] and ((r < mark) if backward else (r > mark))]
        scanned = _run(*_sql_params(scan_statement("v", ("k", "s"), mark, None)))
        assert scanned == [r for r in sorted(ROWS) if r > mark]


def _sql_params(statement):
    return statement.sql, statement.params


@pytest.mark.parametrize(("op", "bounds", "kept"), [
    ("LT", [b"b"], [b"a"]), ("LE", [b"b"], [b"a", b"b"]), ("GT", [b"b"], [b"b\x00", b"c"]),
    ("BETWEEN", [b"b", b"b\x00"], [b"b", b"b\x00"]), ("BEGINS_WITH", [b"b"], [b"b", b"b\x00"]),
])
def test_a_sort_condition_keeps_what_dynamodb_keeps_on_bytes(op, bounds, kept):
    rows = _run(*_sql_params(query_statement("v", ("k", "s"), b"p", (op, bounds), None, False, None)))
    assert sorted({r[1] for r in rows}) == kept


def test_a_name_a_quote_cannot_hold_is_refused_and_rows_must_be_bytes():
    with pytest.raises(ServeError, match="no column"):
        scan_statement("v", ("a`b",), None, None)
    assert view_row({"k": b"x", "s": None, "source_key": b"r"}, ("k", "s")) == ViewRow((b"x", None), b"r")
    with pytest.raises(ValueError, match="not BYTES"):
        view_row({"k": "x", "source_key": b"r"}, ("k",))


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
