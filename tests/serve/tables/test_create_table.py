"""CreateTable and DeleteTable of an application's own tables on an emulator stage: the
table is made in Bigtable with the default mapping, kept in the instance's registry, so
another worker process finds it, and served like a planned table; cloud stages refuse."""

from __future__ import annotations

import asyncio
import dataclasses
import time

import pytest
from google.cloud.bigtable import Client

from ddb2bigtable.bigtable.emulator import stop_process
from ddb2bigtable.serve.catalog import catalog
from ddb2bigtable.serve.errors import ServeError
from ddb2bigtable.serve.protocol.app import operation
from ddb2bigtable.serve.session import Session
from ddb2bigtable.serve.tables.created_tables import REFRESH_SECONDS

from ..client_calls import error_of
from ..conftest import STAGE, start_serve

KEYS = {"KeySchema": [{"AttributeName": "p", "KeyType": "HASH"}, {"AttributeName": "c", "KeyType": "RANGE"}],
        "AttributeDefinitions": [{"AttributeName": "p", "AttributeType": "S"}, {"AttributeName": "c", "AttributeType": "N"},
                                 {"AttributeName": "x", "AttributeType": "S"}],
        "BillingMode": "PAY_PER_REQUEST"}
BASE = KEYS | {"AttributeDefinitions": KEYS["AttributeDefinitions"][:2]}  # no index, so no x
INDEXES = {"GlobalSecondaryIndexes": [{"IndexName": "by-x", "KeySchema": [{"AttributeName": "x", "KeyType": "HASH"}],
                                       "Projection": {"ProjectionType": "KEYS_ONLY"}}],
           "LocalSecondaryIndexes": [{"IndexName": "p-by-x", "KeySchema": [{"AttributeName": "p", "KeyType": "HASH"},
                                                                           {"AttributeName": "x", "KeyType": "RANGE"}],
                                      "Projection": {"ProjectionType": "ALL"}}]}


def _bigtable_tables(served) -> set[str]:
    """The Bigtable tables of the instance serve creates tables in (the stage's project: test-project)."""
    admin = Client(project="test-project", admin=True).table_admin_client
    instance = catalog(served.root, STAGE, {}, "test-project").home.instance_id  # type: ignore[union-attr]
    return {t.name.rsplit("/", 1)[1] for t in admin.list_tables(parent=f"projects/test-project/instances/{instance}")}


def test_a_created_table_is_served_described_listed_and_deleted(served):
    client = served.client()
    made = client.create_table(TableName="Orders.v2", **KEYS, **INDEXES)["TableDescription"]
    assert made["TableStatus"] == "ACTIVE" and made["TableName"] == "Orders.v2"
    assert made["KeySchema"] == KEYS["KeySchema"]
    assert "ddb_Orders.v2" in _bigtable_tables(served)  # the Bigtable table, families and GC made at once
    client.get_waiter("table_exists").wait(TableName="Orders.v2", WaiterConfig={"Delay": 1, "MaxAttempts": 3})
    for c, x in ((1, "b"), (2, "a"), (3, None)):
        item = {"p": {"S": "alice"}, "c": {"N": str(c)}, "tags": {"SS": ["new"]}, "blob": {"B": b"\x00\xff"}}
        client.put_item(TableName="Orders.v2", Item=item | ({"x": {"S": x}} if x else {}))
    got = client.get_item(TableName="Orders.v2", Key={"p": {"S": "alice"}, "c": {"N": "1"}})["Item"]
    assert got == {"p": {"S": "alice"}, "c": {"N": "1"}, "x": {"S": "b"}, "tags": {"SS": ["new"]},
                   "blob": {"B": b"\x00\xff"}}
    found = client.query(TableName="Orders.v2", KeyConditionExpression="p = :p AND c > :c",
                         ExpressionAttributeValues={":p": {"S": "alice"}, ":c": {"N": "1"}})
    assert [i["c"]["N"] for i in found["Items"]] == ["2", "3"]
    local = client.query(TableName="Orders.v2", IndexName="p-by-x", KeyConditionExpression="p = :p",
                         ExpressionAttributeValues={":p": {"S": "alice"}}, ConsistentRead=True)
    assert [i["x"]["S"] for i in local["Items"]] == ["a", "b"]  # by the local index's sort key, sparse
    by_x = client.query(TableName="Orders.v2", IndexName="by-x", KeyConditionExpression="x = :x",
                        ExpressionAttributeValues={":x": {"S": "a"}})["Items"]
    assert by_x == [{"p": {"S": "alice"}, "c": {"N": "2"}, "x": {"S": "a"}}]  # KEYS_ONLY
    described = client.describe_table(TableName="Orders.v2")["Table"]
    assert described["TableId"] == made["TableId"] and described["CreationDateTime"] == made["CreationDateTime"]
    assert [g["IndexName"] for g in described["GlobalSecondaryIndexes"]] == ["by-x"]
    assert [s["IndexName"] for s in described["LocalSecondaryIndexes"]] == ["p-by-x"]
    assert described["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
    assert {"Orders.v2", "Movies"} <= set(client.list_tables()["TableNames"])
    gone = client.delete_table(TableName="Orders.v2")["TableDescription"]
    assert gone["TableStatus"] == "DELETING" and "KeySchema" not in gone and gone["TableId"] == made["TableId"]
    assert "ddb_Orders.v2" not in _bigtable_tables(served)
    assert error_of(lambda: client.describe_table(TableName="Orders.v2"))[0] == "ResourceNotFoundException"
    assert error_of(lambda: client.get_item(TableName="Orders.v2", Key={"p": {"S": "alice"}, "c": {"N": "1"}})
                  )[0] == "ResourceNotFoundException"
    assert "Orders.v2" not in client.list_tables()["TableNames"]
    assert error_of(lambda: client.delete_table(TableName="Orders.v2"))[0] == "ResourceNotFoundException"


def test_another_worker_process_sees_a_created_table_and_its_deletion(served):
    first = served.client()
    process, endpoint = start_serve(served.root, STAGE)  # a second serve, started after: only the instance is shared
    try:
        second = dataclasses.replace(served, endpoint=endpoint, process=process).client()
        first.create_table(TableName="shared_t", **BASE)
        first.put_item(TableName="shared_t", Item={"p": {"S": "k"}, "c": {"N": "7"}, "v": {"BOOL": True}})
        assert second.get_item(TableName="shared_t", Key={"p": {"S": "k"}, "c": {"N": "7"}})["Item"]["v"] == {
            "BOOL": True}
        assert "shared_t" in second.list_tables()["TableNames"]
        assert error_of(lambda: second.create_table(TableName="shared_t", **BASE)) == (
            "ResourceInUseException", "Table already exists: shared_t")
        second.delete_table(TableName="shared_t")
        assert error_of(lambda: first.describe_table(TableName="shared_t"))[0] == "ResourceNotFoundException"
        time.sleep(REFRESH_SECONDS)  # how long a worker's copy of a created table is trusted
        assert error_of(lambda: first.get_item(TableName="shared_t", Key={"p": {"S": "k"}, "c": {"N": "7"}})
                      )[0] == "ResourceNotFoundException"
    finally:
        stop_process(process)


@pytest.mark.parametrize(("request_", "message"), [
    ({"TableName": "nn"}, "Member must have length greater than or equal to 3"),
    ({"TableName": "nyh@test"}, "Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+"),
    ({"KeySchema": [{"AttributeName": "p", "KeyType": "HASH"}, {"AttributeName": "c", "KeyType": "HASH"}]},
     "Too many hash keys specified"),
    ({"KeySchema": [{"AttributeName": "c", "KeyType": "RANGE"}]}, "No Hash Key specified in schema"),
    ({"AttributeDefinitions": [{"AttributeName": "p", "AttributeType": "S"}, {"AttributeName": "p",
                                                                             "AttributeType": "N"}]},
     "Attribute Name is duplicated: p"),
    ({"AttributeDefinitions": [{"AttributeName": "p", "AttributeType": "S"}]},
     "Some index key attributes are not defined in AttributeDefinitions. Keys: [c]"),
    ({"AttributeDefinitions": KEYS["AttributeDefinitions"] + [{"AttributeName": "z", "AttributeType": "S"}]},
     "Number of attributes in KeySchema does not exactly match number of attributes defined in AttributeDefinitions"),
    ({"BillingMode": "PROVISIONED"}, "ReadCapacityUnits and WriteCapacityUnits must both be specified"),
    ({"LocalSecondaryIndexes": [{"IndexName": "bad", "KeySchema": [{"AttributeName": "x", "KeyType": "HASH"},
                                                                   {"AttributeName": "c", "KeyType": "RANGE"}],
                                 "Projection": {"ProjectionType": "ALL"}}]},
     "Index KeySchema does not have the same leading hash key as table KeySchema for index: bad"),
])
def test_a_request_dynamodb_refuses_is_refused_in_its_words(served, request_, message):
    client = served.client(parameter_validation=False)
    body = {"TableName": "refused_t", **BASE} | request_
    code, text = error_of(lambda: client.create_table(**body))
    assert code == "ValidationException" and message in text
    assert "refused_t" not in client.list_tables()["TableNames"]


def test_a_spec_table_exists_and_cannot_be_deleted(served):
    client = served.client()
    assert error_of(lambda: client.create_table(TableName="Movies", **BASE)) == (
        "ResourceInUseException", "Table already exists: Movies")
    code, text = error_of(lambda: client.delete_table(TableName="Movies"))
    assert code == "ValidationException" and "the plan owns the tables of the stage's specs" in text
    assert client.get_item(TableName="Movies", Key={"year": {"N": "2013"}, "title": {"S": "Rush"}})["Item"]


def test_a_cloud_stage_refuses_both_before_any_bigtable_call(served):
    cloud = Session(dataclasses.replace(catalog(served.root, STAGE, {}, "p"), emulator=False), client=None)
    for call, body in ((operation("CreateTable"), {"TableName": "new_table", **BASE}),
                       (operation("DeleteTable"), {"TableName": "new_table"})):
        with pytest.raises(ServeError) as caught:
            asyncio.run(call(cloud, body))
        assert caught.value.name == "ValidationException" and "`pulumi up`" in caught.value.message


def test_a_write_giving_an_index_key_another_type_or_nothing_is_refused_whole(served):
    client = served.client()
    client.create_table(TableName="indexed_t", **KEYS, **INDEXES)
    fine = {"p": {"S": "ok"}, "c": {"N": "2"}, "x": {"S": "fine"}}
    try:
        for x, words in (({"N": "3"}, "Type mismatch for Index Key x Expected: S Actual: N"),
                         ({"S": ""}, "cannot contain an empty string value"), ({"NULL": True}, "Actual: NULL")):
            item = {"p": {"S": "bob"}, "c": {"N": "1"}, "x": x}
            for call in (lambda item=item: client.put_item(TableName="indexed_t", Item=item),
                         lambda item=item: client.batch_write_item(RequestItems={"indexed_t": [
                             {"PutRequest": {"Item": fine}}, {"PutRequest": {"Item": item}}]})):
                code, text = error_of(call)
                assert code == "ValidationException" and words in text
        assert client.scan(TableName="indexed_t")["Items"] == []  # nothing of either write
    finally:
        client.delete_table(TableName="indexed_t")


def test_an_index_gives_what_its_projection_holds_and_a_local_one_the_rest_when_asked(served):
    client = served.client()
    local_keys_only = {"LocalSecondaryIndexes": [INDEXES["LocalSecondaryIndexes"][0] | {
        "Projection": {"ProjectionType": "KEYS_ONLY"}}]}
    client.create_table(TableName="projected_t", **KEYS, **local_keys_only,
                        GlobalSecondaryIndexes=INDEXES["GlobalSecondaryIndexes"])
    try:
        client.put_item(TableName="projected_t", Item={"p": {"S": "a"}, "c": {"N": "1"}, "x": {"S": "m"},
                                                       "note": {"S": "kept"}})
        query = {"TableName": "projected_t", "KeyConditionExpression": "p = :p",
                 "ExpressionAttributeValues": {":p": {"S": "a"}}, "IndexName": "p-by-x"}
        assert "note" not in client.query(**query)["Items"][0]  # the index holds keys only
        assert client.query(**query, Select="ALL_ATTRIBUTES")["Items"][0]["note"] == {"S": "kept"}
        assert client.query(**query, ProjectionExpression="note")["Items"] == [{"note": {"S": "kept"}}]
        code, text = error_of(lambda: client.query(TableName="projected_t", IndexName="by-x", Select="ALL_ATTRIBUTES",
                                                 KeyConditionExpression="x = :x",
                                                 ExpressionAttributeValues={":x": {"S": "m"}}))
        assert code == "ValidationException" and "Select type ALL_ATTRIBUTES is not supported" in text
        (index,) = client.describe_table(TableName="projected_t")["Table"]["GlobalSecondaryIndexes"]
        # the one item holds x: its keys-only entry p, c, x is (1 + 1) + (1 + 2) + (1 + 1) bytes (table_counts.py)
        assert index["ItemCount"] == 1 and index["IndexSizeBytes"] == 7
    finally:
        client.delete_table(TableName="projected_t")


def test_a_bigtable_table_the_registry_does_not_know_is_not_taken_over(served):
    """A table `ddb_<name>` left by something else keeps its rows: CreateTable refuses, saying what to do."""
    instance = catalog(served.root, STAGE, {}, "test-project").home.instance_id  # type: ignore[union-attr]
    stray = Client(project="test-project", admin=True).instance(instance).table("ddb_orphan_t")
    stray.create()
    try:
        code, text = error_of(lambda: served.client().create_table(TableName="orphan_t", **BASE))
        assert code == "ResourceInUseException" and "cbt deletetable ddb_orphan_t" in text
        assert "orphan_t" not in served.client().list_tables()["TableNames"]
        assert stray.exists()
    finally:
        stray.delete()


def test_update_table_of_a_spec_table_is_refused_after_the_table_is_found(served):
    client = served.client()
    assert error_of(lambda: client.update_table(TableName="no_such_t", BillingMode="PAY_PER_REQUEST"))[0] == (
        "ResourceNotFoundException")
    code, text = error_of(lambda: client.update_table(TableName="Movies", BillingMode="PAY_PER_REQUEST"))
    assert code == "ValidationException" and "change its spec and deploy" in text
