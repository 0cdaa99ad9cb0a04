"""serve's lean Bigtable calls (point_calls.py, issue 54) read and write exactly what the data
client does, on the real emulator: rows with several families, versions and a value split
over chunks, by key, range, limit and filter; a conditional write's both branches; a missing
table's NotFound (serve's ResourceNotFoundException); and the chunk merger's rules."""

from __future__ import annotations

import asyncio

import pytest
from google.api_core import exceptions as google_errors
from google.cloud.bigtable import Client, column_family
from google.cloud.bigtable.data import BigtableDataClientAsync, ReadRowsQuery, RowRange, SetCell
from google.cloud.bigtable.data import row_filters as rf
from google.cloud.bigtable.data.mutations import AddToCell, DeleteAllFromFamily, DeleteAllFromRow, DeleteRangeFromColumn
from google.cloud.bigtable_v2.types import ReadRowsResponse

from ddb2bigtable.codec.mutations import Cell
from ddb2bigtable.serve.point_calls import FILTERS, LeanTable, merged, mutation_message, raw
from ddb2bigtable.serve.store import item_cells

PROJECT, INSTANCE, TABLE = "lean-test", "lean", "rows"
BIG = bytes(range(256)) * 12_000  # 3 MB: the emulator sends it in several chunks


@pytest.fixture(scope="module")
def table(bigtable_emulator) -> None:
    made = Client(project=PROJECT, admin=True).instance(INSTANCE).table(TABLE)
    if not made.exists():
        made.create(column_families={f: column_family.MaxVersionsGCRule(3) for f in ("a", "b")})


def _cells(rows) -> list[tuple]:
    """Each row's key and cells (labels left out: serve's filters apply none, its rows keep none)."""
    return [(r.row_key, [(c.family, c.qualifier, c.value, c.timestamp_micros) for c in r]) for r in rows]


def _run(check) -> None:
    async def world() -> None:
        async with BigtableDataClientAsync(project=PROJECT) as client:
            data = client.get_table(INSTANCE, TABLE)
            await check(LeanTable(data), data)
    asyncio.run(world())


def test_reads_equal_the_data_clients(table):
    async def check(lean: LeanTable, data) -> None:
        for n in range(5):
            await data.mutate_row(b"k%d" % n, [SetCell("a", b"x", b"v%d" % n, 1_000), SetCell("a", b"x", b"w", 2_000),
                                               SetCell("b", b"y", b"%d" % n, 3_000)])
        await data.mutate_row(b"k2", [SetCell("b", b"big", BIG, 4_000)])
        only_b = rf.RowFilterChain([rf.FamilyNameRegexFilter("b"), rf.CellsColumnLimitFilter(1)])
        for key, row_filter in ((b"k2", None), (b"k2", only_b), (b"k1", only_b), (b"none", None)):
            want = await data.read_row(key, row_filter=row_filter)
            got = await lean.read_row(key, row_filter=row_filter)
            assert _cells([got] if got else []) == _cells([want] if want else [])
        assert any(c.value == BIG for c in await lean.read_row(b"k2"))
        for query in (ReadRowsQuery(row_keys=[b"k3", b"k0", b"k2", b"missing"]),
                      ReadRowsQuery(row_ranges=[RowRange(b"k1", b"k4")], limit=2, row_filter=only_b),
                      ReadRowsQuery(row_ranges=[RowRange(b"k1", None, start_is_inclusive=False)])):
            assert _cells(await lean.read_rows(query)) == _cells(await data.read_rows(query))
    _run(check)


def test_a_conditional_write_takes_its_branch(table):
    async def check(lean: LeanTable, data) -> None:
        await data.mutate_row(b"c", [SetCell("a", b"x", b"1", 1_000)])
        holds = rf.RowFilterChain([rf.ColumnRangeFilter("a", b"x", b"x"), rf.CellsColumnLimitFilter(1),
                                   rf.LiteralValueFilter(b"1")])  # the newest version is 1
        assert await lean.check_and_mutate_row(b"c", holds, true_case_mutations=[SetCell("a", b"x", b"2", 2_000)])
        assert not await lean.check_and_mutate_row(b"c", holds, true_case_mutations=SetCell("a", b"x", b"3", 3_000),
                                                   false_case_mutations=[SetCell("b", b"f", b"no", 3_000)])
        row = await data.read_row(b"c", row_filter=rf.CellsColumnLimitFilter(1))
        assert sorted((c.family, c.value) for c in row) == [("a", b"2"), ("b", b"no")]
    _run(check)


def test_a_missing_table_is_not_found(table):
    async def check(lean: LeanTable, data) -> None:
        gone = LeanTable(data.client.get_table(INSTANCE, "no-such-table"))
        with pytest.raises(google_errors.NotFound):
            await gone.read_row(b"k")
        with pytest.raises(google_errors.NotFound):
            await gone.check_and_mutate_row(b"k", None, true_case_mutations=[SetCell("a", b"x", b"1", 1)])
    _run(check)


async def _stream(*responses):
    for response in responses:
        yield response


def _chunk(**fields) -> dict:
    return fields


def test_chunks_merge_into_rows():
    """A value in parts (value_size), family and qualifier kept until they change, a row
    dropped at reset_row and sent again, keys in order; a key out of order is DataLoss."""
    cells = [_chunk(row_key=b"r1", family_name={"value": "a"}, qualifier={"value": b"q"}, timestamp_micros=5,
                    value=b"he", value_size=5),
             _chunk(value=b"llo"),
             _chunk(qualifier={"value": b"p"}, value=b"x", commit_row=True),
             _chunk(row_key=b"r2", family_name={"value": "a"}, qualifier={"value": b"q"}, value=b"lost"),
             _chunk(reset_row=True),
             _chunk(row_key=b"r2", family_name={"value": "b"}, qualifier={"value": b"q"}, value=b"kept",
                    commit_row=True)]

    async def rows(chunks, descending=False):
        return [row async for row in merged(_stream(ReadRowsResponse(chunks=chunks)), descending=descending)]

    got = asyncio.run(rows(cells))
    assert _cells(got) == [(b"r1", [("a", b"q", b"hello", 5), ("a", b"p", b"x", 0)]),
                           (b"r2", [("b", b"q", b"kept", 0)])]
    assert all(type(c) is Cell for row in got for c in row)  # the codec's own: no reader converts them again
    with pytest.raises(google_errors.DataLoss):
        asyncio.run(rows(cells, descending=True))


def test_a_query_is_the_request_the_data_client_makes(table):
    """LeanTable builds a ReadRowsQuery's request from raw protobuf, byte for byte the one its
    own `_to_pb` makes: keys, ranges open and closed, a limit, a filter (converted once)."""
    only_b = rf.RowFilterChain([rf.FamilyNameRegexFilter("b"), rf.CellsColumnLimitFilter(1)])
    queries = (ReadRowsQuery(row_keys=[b"k3", b"k0"]), ReadRowsQuery(row_ranges=[RowRange(b"k1", b"k4")], limit=2),
               ReadRowsQuery(row_ranges=[RowRange(b"k1", None, start_is_inclusive=False),
                                         RowRange(None, b"a", end_is_inclusive=True)], row_filter=only_b),
               ReadRowsQuery(row_keys=[b"x"], row_ranges=[RowRange(b"k", b"l")], limit=7, row_filter=only_b), ReadRowsQuery())

    async def check(lean: LeanTable, data) -> None:
        for query in (*queries, *queries):
            made = lean.request(query)
            assert made.SerializeToString(deterministic=True) == \
                type(query._to_pb(data)).pb(query._to_pb(data)).SerializeToString(deterministic=True)
    _run(check)


def test_a_range_is_the_request_its_query_makes(table):
    """LeanTable.range_request (serve's scans) is byte for byte the request of the one-range
    ReadRowsQuery it replaces, and refuses a start past the end as RowRange does."""
    only_b = rf.RowFilterChain([rf.FamilyNameRegexFilter("b"), rf.CellsColumnLimitFilter(1)])

    async def check(lean: LeanTable, data) -> None:
        for start, end in ((None, None), (b"k1", None), (None, b"k4"), (b"k1", b"k4"), (b"", b"")):
            for start_open in (False, True):
                for limit, row_filter in ((0, None), (10, only_b)):
                    query = ReadRowsQuery(row_ranges=[RowRange(start_key=start, end_key=end,
                                                               start_is_inclusive=not start_open)],
                                          limit=limit, row_filter=row_filter)
                    made = lean.range_request(start, end, start_open=start_open, limit=limit, row_filter=row_filter)
                    assert made.SerializeToString(deterministic=True) == \
                        lean.request(query).SerializeToString(deterministic=True)
        with pytest.raises(ValueError, match="start_key must be less than or equal to end_key"):
            lean.range_request(b"k4", b"k1", start_open=False, limit=0, row_filter=None)
        assert _cells(await lean.read_range(b"k1", b"k4", start_open=True, limit=2, row_filter=None)) == \
            _cells(await data.read_rows(ReadRowsQuery(row_ranges=[RowRange(b"k1", b"k4", start_is_inclusive=False)],
                                                      limit=2)))
    _run(check)


def test_mutations_are_the_messages_the_data_client_makes():
    """Every mutation a conditional write sends is byte for byte what its own `_to_pb` makes:
    the deletes built field by field, every time range shape, and the rest converted as before."""
    made = [DeleteAllFromFamily("i"), DeleteAllFromFamily(""), DeleteAllFromRow(),
            DeleteRangeFromColumn("i", b"q"), DeleteRangeFromColumn("i", b"", 0, 0),
            DeleteRangeFromColumn("i", b"q", 1000), DeleteRangeFromColumn("i", b"q", None, 5000),
            DeleteRangeFromColumn("f", b"\x00\xff", 1000, 5000), SetCell("i", b"q", b"v", 7000),
            AddToCell("c", b"q", -3, 9000)]
    for mutation in made:
        assert mutation_message(mutation).SerializeToString() == raw(mutation._to_pb()).SerializeToString(), mutation


def test_a_stores_views_and_a_filter_in_use_outlast_filters_made_per_call(table):
    """A store's fixed views are sent as made; a filter in use stays converted however many
    filters made per call (a TTL sweep's time range, one a pass) come and go; the cache was
    emptied whole when full, so a flood of per-pass filters took every converted one with it."""
    view = item_cells(("a", "b"))

    async def check(lean: LeanTable, _data) -> None:
        kept = rf.FamilyNameRegexFilter("a")
        converted = lean._filter(kept)
        for n in range(3 * FILTERS):
            lean._filter(rf.ColumnQualifierRegexFilter(b"pass-%d" % n))  # a pass's own filter
            assert lean._filter(view) is view.message
            assert lean._filter(kept) is converted
        assert len(lean._filters) <= FILTERS

    _run(check)
