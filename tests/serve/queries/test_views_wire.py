"""Query and Scan with IndexName on a cloud stage: serve reads the GSI's materialized view
with PrepareQuery + ExecuteQuery and the items from the table.

A stand-in for the wire protocol, because the emulator lacks it: the Bigtable emulator
answers PrepareQuery with UNIMPLEMENTED, so the SQL RPCs go to tests/serve/sql_standin.py,
a gRPC server on 127.0.0.1 speaking google.bigtable.v2.Bigtable's real PrepareQuery and
ExecuteQuery messages, which runs serve's SQL with SQLite over a view the test fills from
the table's rows (as the plan's `view_query` selects them) and passes every other call to
the real emulator. The items, their writes and their reads are the emulator's. This shows
serve's statements, parameters, paging and decoding working through google-cloud-bigtable's
own client; it does not show that Bigtable's GoogleSQL accepts the statements or that a
real view holds and orders what the test puts in this one (see sql_standin.py).
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
from collections.abc import Iterator
from decimal import Decimal
from functools import partial
from typing import Any

import pytest

from ddb2bigtable.bigtable.emulator import EMULATOR_ENV, pointed_at, quiet_connection_warning
from ddb2bigtable.bigtable.table_admin import ensure_planned_table
from ddb2bigtable.plan.planner import plan_stage
from ddb2bigtable.plan.tables import view_id, view_query
from ddb2bigtable.serve.catalog import catalog
from ddb2bigtable.serve.errors import ServeError
from ddb2bigtable.serve.protocol.app import operation
from ddb2bigtable.serve.queries import prepared_views, view_reads
from ddb2bigtable.serve.session import Session
from ddb2bigtable.spec.reading import read_specs
from ddb2bigtable.spec.stage import load_stage

from ...conftest import write_project
from ..client_calls import pages
from ..sql_standin import SqlStandIn

PROJECT = "views-test"
SPEC = """
version: 1
instance: {id: views-inst, display_name: Views}
tables:
  - id: shirts
    source:
      table: Shirts
      region: us-west-2
      key:
        partition: {name: pk, type: S}
        sort: {name: sk, type: N}
      billing: provisioned
      reads: 10
      writes: 10
      item_size_kb: 1
      storage_gb: 0.001
      gsis:
        - name: by-size
          key: {partition: {name: color, type: S}, sort: {name: size, type: N}}
          projection: keys_only
          reads: 5
          writes: 5
        - name: by-name
          key: {partition: {name: color, type: S}, sort: {name: label, type: S}}
          projection: all
          reads: 5
          writes: 5
        - name: by-shop
          key: {partition: {name: shop, type: S}}
          projection: [price]
          reads: 5
          writes: 5
"""
# (sk, color, size, label, shop): sizes whose text sorts otherwise than their number; in "tie",
# sizes equal as FLOAT64 (1E16 + 1 rounds to 1E16, 38 digits apart in the 17th), sk against their order
SHIRTS = [(1, "red", 10, "b", "x"), (2, "red", 9, "a", "x"), (3, "red", 2, "c", None), (4, "blue", 10, "a", "y"),
          (5, None, None, None, "x"), (6, "red", 100, "ab", "x"),
          (7, "tie", 10**16 + 1, None, None), (8, "tie", 10**16, None, None), (9, "tie", 10**16 + 2, None, None),
          (10, "tie", 12345678901234567890123456789012345679, None, None),
          (11, "tie", 12345678901234567890123456789012345678, None, None), (12, "tie", 9999999999999999, None, None)]


class Harness:
    """Serve's operations on a cloud-stage catalog whose client talks to the stand-in."""

    def __init__(self, root: Any, standin: SqlStandIn):
        self.standin = standin
        built = catalog(root, "cloud", {}, PROJECT)
        self.table = built.tables["Shirts"]
        self.cloud = dataclasses.replace(built, emulator=False)
        self.loop = asyncio.new_event_loop()
        with pointed_at(standin.address), quiet_connection_warning():
            from google.cloud.bigtable.data import BigtableDataClientAsync
            self.client = self.loop.run_until_complete(self._client(BigtableDataClientAsync))
        self.session = Session(self.cloud, self.client)

    @staticmethod
    async def _client(kind: Any) -> Any:
        return kind(project=PROJECT)

    def run(self, operation: Any, body: dict[str, Any]) -> dict[str, Any]:
        return self.loop.run_until_complete(operation(self.session, body))

    def query(self, index: str, **body: Any) -> dict[str, Any]:
        return self.run(operation("Query"), {"TableName": "Shirts", "IndexName": index, **body})

    def refresh_views(self) -> None:
        """Each view as the plan's SQL (`view_query`) makes it from the table as it is now."""
        rows = self.loop.run_until_complete(self._rows())
        family = self.table.spec.mapping.default_family
        cells = [(row.row_key, _latest(row, family)) for row in rows]
        for gsi in self.table.spec.source.gsis:
            self.standin.materialize(view_id(self.table.spec.id, gsi.name), view_query(self.table.spec, gsi), family,
                                     cells)

    async def _rows(self) -> list[Any]:
        handle = self.client.get_table(self.table.instance_id, self.table.spec.id)
        from google.cloud.bigtable.data import ReadRowsQuery
        return await handle.read_rows(ReadRowsQuery())

    def close(self) -> None:
        self.loop.run_until_complete(self.client.close())
        self.loop.close()


def _latest(row: Any, family: str) -> dict[bytes, bytes]:
    """Each qualifier of the family to its newest value."""
    cells = sorted((c for c in row if c.family == family), key=lambda c: c.timestamp_micros)
    return {c.qualifier: c.value for c in cells}


@pytest.fixture(scope="module")
def cloud(bigtable_emulator, tmp_path_factory) -> Iterator[Harness]:
    root = tmp_path_factory.mktemp("views-project")
    write_project(root, {"shirts": SPEC}, {"emulator": True, "regions": "home", "deletion_protection": False,
                                           "autoscaling": False}, stage_name="cloud")
    stage = load_stage("cloud", root)
    plan = plan_stage(stage, read_specs([str(p) for p in stage.spec_paths(root)]))
    (instance,) = plan.instances
    ensure_planned_table(PROJECT, instance.id, instance.tables[0])
    standin = SqlStandIn(os.environ[EMULATOR_ENV])
    harness = Harness(root, standin)
    harness.session = Session(dataclasses.replace(harness.cloud, emulator=True), harness.client)  # writes
    for sk, color, size, label, shop in SHIRTS:
        item: dict[str, Any] = {"pk": {"S": "shirt"}, "sk": {"N": str(sk)}, "price": {"N": str(20 + sk)},
                                "note": {"S": f"n{sk}"}}
        for name, value in (("color", color), ("label", label), ("shop", shop)):
            if value is not None:
                item[name] = {"S": value}
        if size is not None:
            item["size"] = {"N": str(size)}
        harness.run(operation("PutItem"), {"TableName": "Shirts", "Item": item})
    harness.session = Session(harness.cloud, harness.client)
    harness.refresh_views()
    yield harness
    harness.close()
    standin.stop()


def _sks(answer: dict[str, Any]) -> list[int]:
    return [int(i["sk"]["N"]) for i in answer["Items"]]


def test_an_s_sort_key_query_is_pushed_into_the_sql_as_parameters(cloud):
    red = cloud.query("by-name", KeyConditionExpression="color = :c AND begins_with(label, :p)",
                      ExpressionAttributeValues={":c": {"S": "red"}, ":p": {"S": "a"}})
    assert _sks(red) == [2, 6]  # labels a, ab: in label order, not table order
    assert red["Items"][0]["note"] == {"S": "n2"}  # projection all: the whole item
    prepare, execute = cloud.standin.seen[-1]
    assert "'red'" not in prepare.query and "red" not in prepare.query  # values travel as parameters
    assert "`label` >= @sort_0" in prepare.query and "`label` < @sort_1" in prepare.query
    assert execute is not None and execute.app_profile_id == (cloud.table.serving_profile or "")
    assert {n: v.bytes_value for n, v in execute.params.items()} == {"partition": b"red", "sort_0": b"a",
                                                                     "sort_1": b"b"}


def test_a_numeric_sort_key_is_in_number_order_with_paging_both_ways(cloud):
    up = cloud.query("by-size", KeyConditionExpression="color = :c", ExpressionAttributeValues={":c": {"S": "red"}})
    assert [i["size"]["N"] for i in up["Items"]] == ["2", "9", "10", "100"]  # as text: 10, 100, 2, 9
    assert set(up["Items"][0]) == {"pk", "sk", "color", "size"}  # keys_only
    ask = {"KeyConditionExpression": "color = :c AND size >= :s", "ScanIndexForward": False, "Limit": 2,
           "ExpressionAttributeValues": {":c": {"S": "red"}, ":s": {"N": "9"}}}
    first = cloud.query("by-size", **ask)
    assert [i["size"]["N"] for i in first["Items"]] == ["100", "10"]
    assert first["LastEvaluatedKey"] == {"pk": {"S": "shirt"}, "sk": {"N": "1"}, "color": {"S": "red"},
                                         "size": {"N": "10"}}
    rest = cloud.query("by-size", **ask, ExclusiveStartKey=first["LastEvaluatedKey"])
    assert [i["size"]["N"] for i in rest["Items"]] == ["9"] and "LastEvaluatedKey" not in rest


def test_limit_pages_through_every_item_once_with_filter_and_count(cloud):
    answers = list(pages(partial(cloud.query, "by-name"), KeyConditionExpression="color = :c", Limit=1,
                         FilterExpression="price > :p", ExpressionAttributeValues={":c": {"S": "red"}, ":p": {"N": "21"}}))
    seen = [sk for got in answers for sk in _sks(got)]
    assert seen == [2, 6, 3] and len(answers) == 4  # labels a, ab, (b: price 21, filtered out), c
    count = cloud.query("by-name", KeyConditionExpression="color = :c", Select="COUNT",
                        ExpressionAttributeValues={":c": {"S": "red"}})
    assert count["Count"] == 4 and "Items" not in count


def test_a_scan_of_the_index_holds_only_items_with_its_key_and_its_projection(cloud):
    found = [i for got in pages(lambda **request: cloud.run(operation("Scan"), request),
                                TableName="Shirts", IndexName="by-shop", Limit=2) for i in got["Items"]]
    assert sorted(int(i["sk"]["N"]) for i in found) == [1, 2, 4, 5, 6]  # sk 3 has no shop
    assert all(set(i) == {"pk", "sk", "shop", "price"} for i in found)


def test_an_item_changed_since_the_view_was_written_is_left_out(cloud):
    cloud.session = Session(dataclasses.replace(cloud.cloud, emulator=True), cloud.client)
    cloud.run(operation("PutItem"), {"TableName": "Shirts", "Item": {
        "pk": {"S": "shirt"}, "sk": {"N": "4"}, "color": {"S": "green"}, "size": {"N": "10"}, "label": {"S": "a"}}})
    cloud.session = Session(cloud.cloud, cloud.client)
    blue = cloud.query("by-size", KeyConditionExpression="color = :c", ExpressionAttributeValues={":c": {"S": "blue"}})
    assert blue["Items"] == []  # the stale view row still says blue; the item no longer is
    cloud.refresh_views()  # the view catches up
    green = cloud.query("by-size", KeyConditionExpression="color = :c",
                        ExpressionAttributeValues={":c": {"S": "green"}})
    assert _sks(green) == [4]


def test_sql_text_in_a_value_is_only_a_value_and_consistent_reads_are_refused(cloud):
    sneaky = cloud.query("by-name", KeyConditionExpression="color = :c",
                         ExpressionAttributeValues={":c": {"S": "red` OR 1=1 --"}})
    assert sneaky["Items"] == []
    with pytest.raises(ServeError) as caught:
        cloud.query("by-name", KeyConditionExpression="color = :c", ConsistentRead=True,
                    ExpressionAttributeValues={":c": {"S": "red"}})
    assert caught.value.name == "ValidationException" and "Consistent reads" in caught.value.message


def test_backward_on_an_s_sort_key_and_a_partition_only_index(cloud):
    ask = {"KeyConditionExpression": "color = :c AND label BETWEEN :a AND :z", "ScanIndexForward": False,
           "Limit": 2, "ExpressionAttributeValues": {":c": {"S": "red"}, ":a": {"S": "a"}, ":z": {"S": "b"}}}
    first = cloud.query("by-name", **ask)
    assert [i["label"]["S"] for i in first["Items"]] == ["b", "ab"]
    rest = cloud.query("by-name", **ask, ExclusiveStartKey=first["LastEvaluatedKey"])
    assert [i["label"]["S"] for i in rest["Items"]] == ["a"] and "LastEvaluatedKey" not in rest
    shop = cloud.query("by-shop", KeyConditionExpression="shop = :s", ExpressionAttributeValues={":s": {"S": "x"}})
    assert _sks(shop) == [1, 2, 5, 6]  # one index partition, in the table's row-key order


def test_an_index_whose_view_is_not_made_yet_says_to_make_it(cloud):
    """Bigtable's answer for a view that does not exist is taken to be NOT_FOUND, as for a
    table (an assumption the stand-in mirrors; not seen on a real instance)."""
    cloud.standin.db.execute("ALTER TABLE `shirts-by-shop` RENAME TO `gone`")
    try:
        with pytest.raises(ServeError) as caught:
            cloud.query("by-shop", KeyConditionExpression="shop = :s", ExpressionAttributeValues={":s": {"S": "x"}})
    finally:
        cloud.standin.db.execute("ALTER TABLE `gone` RENAME TO `shirts-by-shop`")
    assert caught.value.name == "ValidationException"
    assert "no materialized view shirts-by-shop" in caught.value.message and "pulumi up" in caught.value.message


def test_a_parallel_scan_of_an_index_is_refused_before_any_sql(cloud):
    before = len(cloud.standin.seen)
    with pytest.raises(ServeError) as caught:
        cloud.run(operation("Scan"), {"TableName": "Shirts", "IndexName": "by-shop", "Segment": 0, "TotalSegments": 2})
    assert "parallel Scan of an index" in caught.value.message and len(cloud.standin.seen) == before


def test_a_numeric_sort_key_reads_only_its_page_from_the_view(cloud):
    """The view orders an N key by its FLOAT64: the condition, position and Limit are in
    the SQL, and a page reads its Limit of view rows (plus one to know more follow, plus one
    to close the last run of equal floats), not the partition."""
    before = len(cloud.standin.seen)
    first = cloud.query("by-size", KeyConditionExpression="color = :c", Limit=1,
                        ExpressionAttributeValues={":c": {"S": "red"}})
    assert [i["size"]["N"] for i in first["Items"]] == ["2"] and len(cloud.standin.seen) == before + 1
    assert cloud.standin.seen[-1][0].query.endswith(" LIMIT 3") and cloud.standin.sent[-1] == 3  # of red's four
    cloud.query("by-size", KeyConditionExpression="color = :c AND size > :s", Limit=1,
                ExpressionAttributeValues={":c": {"S": "red"}, ":s": {"N": "2"}})
    prepare, execute = cloud.standin.seen[-1]
    assert "`size_number` >= @sort_0" in prepare.query
    assert execute is not None and 1.9 < execute.params["sort_0"].float_value < 2.0  # 2 less an ulp; > 2 is exact here
    nxt = cloud.query("by-size", KeyConditionExpression="color = :c", Limit=1, ExclusiveStartKey=first["LastEvaluatedKey"],
                      ExpressionAttributeValues={":c": {"S": "red"}})
    assert [i["size"]["N"] for i in nxt["Items"]] == ["9"] and "`size_number` >= @start_0" in cloud.standin.seen[-1][0].query


def test_numbers_equal_as_float64_come_back_in_exact_order_page_by_page(cloud):
    exact = ["9999999999999999", "10000000000000000", "10000000000000001", "10000000000000002",
             "12345678901234567890123456789012345678", "12345678901234567890123456789012345679"]
    for backward in (False, True):
        seen = [i["size"]["N"] for got in pages(partial(cloud.query, "by-size"), KeyConditionExpression="color = :c",
                                                Limit=1, ScanIndexForward=not backward,
                                                ExpressionAttributeValues={":c": {"S": "tie"}}) for i in got["Items"]]
        assert seen == (exact[::-1] if backward else exact)
    whole = cloud.query("by-size", KeyConditionExpression="color = :c", ExpressionAttributeValues={":c": {"S": "tie"}})
    assert [i["size"]["N"] for i in whole["Items"]] == exact  # one page, no Limit
    between = cloud.query("by-size", KeyConditionExpression="color = :c AND size BETWEEN :a AND :b",
                          ExpressionAttributeValues={":c": {"S": "tie"}, ":a": {"N": "10000000000000001"},
                                                     ":b": {"N": "12345678901234567890123456789012345678"}})
    assert [i["size"]["N"] for i in between["Items"]] == exact[2:5]  # 1E16 and ...679 are equal as floats, left out
    below = cloud.query("by-size", KeyConditionExpression="color = :c AND size < :b",
                        ExpressionAttributeValues={":c": {"S": "tie"}, ":b": {"N": "10000000000000001"}})
    assert [i["size"]["N"] for i in below["Items"]] == exact[:2]


def test_a_backward_page_past_its_read_bound_is_refused_saying_how_to_narrow_it(cloud, monkeypatch):
    """An index without a sort key has nothing to halve: its backward page reads forward."""
    monkeypatch.setattr(view_reads, "BACKWARD_ROWS", 2)
    with pytest.raises(ServeError) as caught:
        cloud.query("by-shop", KeyConditionExpression="shop = :s", ScanIndexForward=False, Limit=1,
                    ExpressionAttributeValues={":s": {"S": "x"}})
    assert caught.value.name == "ValidationException"
    assert "bound the sort key from below" in caught.value.message and "only ascending" in caught.value.message


def test_a_statement_shape_is_prepared_once_and_again_when_it_expires(cloud, monkeypatch):
    ask = {"KeyConditionExpression": "color = :c", "Limit": 2, "ExpressionAttributeValues": {":c": {"S": "red"}}}
    cloud.query("by-name", **ask)
    prepared, executed = cloud.standin.prepares, len(cloud.standin.seen)
    assert _sks(cloud.query("by-name", **ask)) == [2, 6]
    assert _sks(cloud.query("by-name", **{**ask, "ExpressionAttributeValues": {":c": {"S": "tie"}}})) == []
    assert cloud.standin.prepares == prepared and len(cloud.standin.seen) == executed + 2  # one call a page
    cloud.standin.expired |= set(cloud.standin.prepared)  # the server no longer takes them
    assert _sks(cloud.query("by-name", **ask)) == [2, 6]
    assert cloud.standin.prepares == prepared + 1
    monkeypatch.setattr(cloud.standin, "valid_seconds", prepared_views.REFRESH_SECONDS / 2)  # too soon to keep
    cloud.standin.expired |= set(cloud.standin.prepared)
    for _ in range(3):
        assert _sks(cloud.query("by-name", **ask)) == [2, 6]
    assert cloud.standin.prepares == prepared + 1 + 3  # each prepared again: valid_until is within REFRESH_SECONDS


def test_a_long_backward_range_on_a_number_is_found_by_halving_not_read_from_its_start(cloud, monkeypatch):
    """With no range read whole (STREAMED_ROWS 0), a backward page halves the floats until
    4 x Limit + 1 rows or fewer lie above its floor: pages come back exact, last first, each
    ExecuteQuery answering a handful of rows, never the partition's 60."""
    sizes = [str(n) for n in range(-20, 20)] + ["0.5", "-0.25", "1E+20", "-1E+20", "1E-100"]
    sizes += [str(10**16 + n) for n in range(5)] + [f"1234567890123456789012345678901234567{n}" for n in range(10)]
    cloud.session = Session(dataclasses.replace(cloud.cloud, emulator=True), cloud.client)
    for n, size in enumerate(sizes):
        cloud.run(operation("PutItem"), {"TableName": "Shirts", "Item": {
            "pk": {"S": "shirt"}, "sk": {"N": str(100 + n)}, "color": {"S": "many"}, "size": {"N": size}}})
    cloud.session = Session(cloud.cloud, cloud.client)
    cloud.refresh_views()
    monkeypatch.setattr(view_reads, "STREAMED_ROWS", 0)
    exact = sorted(sizes, key=Decimal)
    for condition, values, wanted in (("color = :c", {}, exact[::-1]),
                                      ("color = :c AND size < :b", {":b": {"N": "10000000000000003"}},
                                       [s for s in exact[::-1] if Decimal(s) < 10**16 + 3])):
        before = len(cloud.standin.sent)
        seen = [i["size"]["N"] for got in pages(partial(cloud.query, "by-size"), KeyConditionExpression=condition,
                                                Limit=3, ScanIndexForward=False,
                                                ExpressionAttributeValues={":c": {"S": "many"}, **values})
                for i in got["Items"]]
        assert [Decimal(s) for s in seen] == [Decimal(s) for s in wanted]
        assert max(cloud.standin.sent[before:]) <= 4 * 4 + 2 < len(sizes)


def test_a_long_backward_range_on_a_string_is_found_by_halving_its_bytes(cloud, monkeypatch):
    labels = [f"{a}{b}" for a in ("", "a", "ab", "b", "\u00e9", "z\U0001f600") for b in ("", "a", "b", "\x00", "~", "zz")]
    labels = sorted(set(labels) - {""})
    cloud.session = Session(dataclasses.replace(cloud.cloud, emulator=True), cloud.client)
    for n, label in enumerate(labels):
        cloud.run(operation("PutItem"), {"TableName": "Shirts", "Item": {
            "pk": {"S": "shirt"}, "sk": {"N": str(200 + n)}, "color": {"S": "words"}, "label": {"S": label}}})
    cloud.session = Session(cloud.cloud, cloud.client)
    cloud.refresh_views()
    monkeypatch.setattr(view_reads, "STREAMED_ROWS", 0)
    exact = sorted(labels, key=str.encode)
    for condition, values, wanted in (
            ("color = :c", {}, exact[::-1]),
            ("color = :c AND begins_with(label, :p)", {":p": {"S": "a"}}, [x for x in exact[::-1] if x[0] == "a"]),
            ("color = :c AND label <= :b", {":b": {"S": "b~"}}, [x for x in exact[::-1] if x.encode() <= b"b~"])):
        before = len(cloud.standin.sent)
        seen = [i["label"]["S"] for got in pages(partial(cloud.query, "by-name"), KeyConditionExpression=condition,
                                                 Limit=3, ScanIndexForward=False,
                                                 ExpressionAttributeValues={":c": {"S": "words"}, **values})
                for i in got["Items"]]
        assert seen == wanted
        assert max(cloud.standin.sent[before:]) <= 4 * 4 + 2 < len(labels)
