"""Hostile CreateTable/DeleteTable requests and a hostile registry (#29's rules on serve's
tables an application creates): every one is answered in DynamoDB's shape (4xx, or a
one-line 5xx for a fault of Bigtable), in seconds; nothing is left half-made and serve never
takes over or deletes a Bigtable table it did not create."""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import os
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest
from botocore.exceptions import ClientError
from google.cloud.bigtable import Client
from google.cloud.bigtable.data import BigtableDataClientAsync, mutations

from ddb2bigtable.bigtable.emulator import stop_process
from ddb2bigtable.serve.catalog import catalog
from ddb2bigtable.serve.tables.created_tables import FAMILY, QUALIFIER, REGISTRY_ID, STALE_SECONDS

from ...tcp_proxy import TcpProxy
from ..conftest import STAGE, Served, start_serve

BASE = {"KeySchema": [{"AttributeName": "p", "KeyType": "HASH"}],
        "AttributeDefinitions": [{"AttributeName": "p", "AttributeType": "S"}], "BillingMode": "PAY_PER_REQUEST"}


def _error(call) -> tuple[str, str, int]:
    with pytest.raises(ClientError) as caught:
        call()
    response = caught.value.response
    return response["Error"]["Code"], response["Error"]["Message"], response["ResponseMetadata"]["HTTPStatusCode"]


def _post(served, operation: str, body: dict) -> tuple[int, dict]:
    """One request as any client could send it (types boto3 would not serialize): status, JSON body."""
    request = urllib.request.Request(served.endpoint, data=json.dumps(body).encode(), headers={
        "X-Amz-Target": f"DynamoDB_20120810.{operation}", "Content-Type": "application/x-amz-json-1.0"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def _instance(served):
    instance_id = catalog(served.root, STAGE, {}, "test-project").home.instance_id  # type: ignore[union-attr]
    return Client(project="test-project", admin=True).instance(instance_id)


def _tables(served) -> set[str]:
    return {t.table_id for t in _instance(served).list_tables()}


def _gsi(name: str, **extra) -> dict:
    return {"IndexName": name, "KeySchema": [{"AttributeName": "p", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "KEYS_ONLY"}} | extra


@pytest.mark.parametrize(("request_", "words"), [
    ({"GlobalSecondaryIndexes": [_gsi(f"g{i:03}") for i in range(300)]},
     "GlobalSecondaryIndex count exceeds the per-table limit of 20"),
    ({"KeySchema": [{"AttributeName": "p", "KeyType": "HASH"}, {"AttributeName": "s", "KeyType": "RANGE"}],
      "AttributeDefinitions": BASE["AttributeDefinitions"] + [{"AttributeName": "s", "AttributeType": "S"}],
      "LocalSecondaryIndexes": [_gsi(f"l{i:03}", KeySchema=[{"AttributeName": "p", "KeyType": "HASH"},
                                                            {"AttributeName": "s", "KeyType": "RANGE"}])
                                for i in range(6)]},
     "Cannot have more than 5 local secondary indexes per table"),
    ({"GlobalSecondaryIndexes": [_gsi("gix", Projection={"ProjectionType": "INCLUDE",
                                                       "NonKeyAttributes": [{"a": 1}, ["b"]]})]},
     "Names of key attributes and attributes projected into an index must be between 1 and 255"),
    ({"GlobalSecondaryIndexes": [_gsi("gix", Projection={"ProjectionType": "INCLUDE",
                                                       "NonKeyAttributes": [f"a{i}" for i in range(101)]})]},
     "No more than 100 attributes per table can be projected"),
    ({"KeySchema": [{"AttributeName": "p" * 1_000_000, "KeyType": "HASH"}],
      "AttributeDefinitions": [{"AttributeName": "p" * 1_000_000, "AttributeType": "S"}]},
     "Names of key attributes and attributes projected into an index must be between 1 and 255"),
    ({"KeySchema": [{"AttributeName": "", "KeyType": "HASH"}],
      "AttributeDefinitions": [{"AttributeName": "", "AttributeType": "S"}]},
     "Names of key attributes and attributes projected into an index must be between 1 and 255"),
    ({"BillingMode": "PROVISIONED", "ProvisionedThroughput": {"ReadCapacityUnits": True, "WriteCapacityUnits": 1}},
     "ReadCapacityUnits and WriteCapacityUnits must both be specified"),
    ({"BillingMode": "PROVISIONED", "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": -5}},
     "Table read and write throughput must be at least 1"),
    ({"GlobalSecondaryIndexes": [_gsi("gix", KeySchema="p")]}, "No defined key schema"),
    ({"GlobalSecondaryIndexes": "everything"}, "GlobalSecondaryIndexes"),
    ({"GlobalSecondaryIndexes": [_gsi("gix", ProvisionedThroughput=[1])]}, "Neither ReadCapacityUnits nor"),
    ({"AttributeDefinitions": [{"AttributeName": "p", "AttributeType": ["S"]}]}, "attributeType"),
    ({"KeySchema": {"p": "HASH"}}, "No defined key schema"),
    ({"TableName": "t" * 1_000_000}, "Member must have length less than or equal to 255"),
    ({"TableName": "t\u00e4ble"}, "Member must satisfy regular expression pattern"),
    ({"TableName": "t\u0000x\U0001f4a5"}, "Member must satisfy regular expression pattern"),
])
def test_a_malformed_or_huge_definition_is_a_short_validation_error_and_nothing_is_made(served, request_, words):
    before = _tables(served)
    name = "hostile_" + hashlib.sha256(words.encode() + json.dumps(request_)[:200].encode()).hexdigest()[:8]
    started = time.monotonic()
    status, answer = _post(served, "CreateTable", {"TableName": name} | BASE | request_)
    assert (status, answer["__type"].rsplit("#")[-1]) == (400, "ValidationException"), answer
    assert words in answer["message"] and len(answer["message"]) < 2000  # a huge value cut, never echoed whole
    assert time.monotonic() - started < 10
    assert _tables(served) == before and name not in served.client().list_tables()["TableNames"]


def _registry_row(served, name: str, value: bytes) -> None:
    """A registry row written by hand, as a damaged or forged record would be: one cell,
    stamped in milliseconds as serve stamps its own."""
    instance_id = _instance(served).instance_id

    async def write() -> None:
        async with BigtableDataClientAsync(project="test-project") as client:
            table = client.get_table(instance_id, REGISTRY_ID)
            await table.mutate_row(name.encode(), [mutations.DeleteAllFromRow(), mutations.SetCell(
                FAMILY, QUALIFIER, value, time.time_ns() // 1_000_000 * 1000)])
    asyncio.run(write())


def _delete_registry_row(served, name: str) -> None:
    row = _instance(served).table(REGISTRY_ID).direct_row(name.encode())
    row.delete()
    row.commit()


def _record(name: str, table_id: str, status: str = "ACTIVE", age: float = 0.0) -> bytes:
    definition = {"TableName": name, **BASE}
    return json.dumps({"status": status, "definition": definition, "table_id": table_id, "table_uuid": "u",
                       "created": 1.0, "changed": time.time() - age, "mapping": {}}).encode()


@pytest.mark.parametrize("value", [b"\xff\x00garbage", b"[]", b'{"status": "ACTIVE"}', b"1e999999",
                                   b'{"status": "ACTIVE", "definition": "x", "table_id": 5, "changed": "soon"}'])
def test_a_damaged_registry_row_is_one_line_refusal_and_lists_and_deletes_nothing(served, value):
    client = served.client()
    client.create_table(TableName="kept_t", **BASE)  # the registry exists, with a good row beside the damaged one
    _registry_row(served, "damaged_t", value)
    before = _tables(served)
    try:
        assert "kept_t" in client.list_tables()["TableNames"]  # one damaged row does not break ListTables
        assert "damaged_t" not in client.list_tables()["TableNames"]
        for call in (lambda: client.describe_table(TableName="damaged_t"),
                     lambda: client.delete_table(TableName="damaged_t"),
                     lambda: client.get_item(TableName="damaged_t", Key={"p": {"S": "a"}})):
            code, text, status = _error(call)
            assert (code, status) == ("ValidationException", 400), text
            assert "registry" in text and "damaged_t" in text and "\n" not in text
        assert _tables(served) == before
    finally:
        _delete_registry_row(served, "damaged_t")
        client.delete_table(TableName="kept_t")


def test_a_registry_row_naming_another_bigtable_table_never_reaches_it(served):
    """A forged row pointing at the spec table Movies' Bigtable table (`movies`): neither served nor deleted."""
    client = served.client()
    client.create_table(TableName="forged_warm_t", **BASE)  # the registry exists
    client.delete_table(TableName="forged_warm_t")
    _registry_row(served, "forged_t", _record("forged_t", "movies"))
    try:
        for call in (lambda: client.delete_table(TableName="forged_t"),
                     lambda: client.put_item(TableName="forged_t", Item={"p": {"S": "a"}})):
            code, text, status = _error(call)
            assert (code, status) == ("ValidationException", 400) and "registry" in text, text
        assert "movies" in _tables(served)
    finally:
        _delete_registry_row(served, "forged_t")


def test_names_colliding_after_the_mapping_get_two_tables_or_a_refusal_never_one_shared(served):
    """A long name is cut and hashed; a short name spelling the cut-and-hash it had before
    issue 50 gets a table of its own (tests/serve/tables/test_created_ids.py; it was
    refused), and the long name's rows stay its own."""
    client = served.client()
    long_name = "L" * 255
    short = "L" * 29 + "_" + hashlib.sha256(long_name.encode()).hexdigest()[:16]
    client.create_table(TableName=long_name, **BASE)
    try:
        client.put_item(TableName=long_name, Item={"p": {"S": "mine"}})
        client.create_table(TableName=short, **BASE)
        client.put_item(TableName=short, Item={"p": {"S": "short's"}})
        client.delete_table(TableName=short)
        assert client.scan(TableName=long_name)["Items"] == [{"p": {"S": "mine"}}]
        assert client.create_table(TableName="L" * 254, **BASE)  # one character apart: its own table
        client.delete_table(TableName="L" * 254)
    finally:
        client.delete_table(TableName=long_name)


@pytest.mark.slow
def test_create_and_delete_racing_in_two_serves_leave_the_table_with_its_row_or_neither(served):
    process, endpoint = start_serve(served.root, STAGE)
    try:
        clients = (served.client(), dataclasses.replace(served, endpoint=endpoint, process=process).client())

        def race(i: int) -> str:
            client = clients[i % 2]
            call = client.create_table if i % 3 else client.delete_table
            try:
                call(TableName="raced_t", **(BASE if i % 3 else {}))
                return "ok"
            except ClientError as error:
                return error.response["Error"]["Code"]

        with ThreadPoolExecutor(6) as pool:
            answers = set(pool.map(race, range(36)))
        assert answers <= {"ok", "ResourceInUseException", "ResourceNotFoundException"}, answers
        listed = "raced_t" in clients[0].list_tables()["TableNames"]
        assert listed == ("ddb_raced_t" in _tables(served))
        if listed:
            clients[1].delete_table(TableName="raced_t")
        assert "ddb_raced_t" not in _tables(served)
    finally:
        stop_process(process)


def _until_answered(call, seconds: float = 30.0):
    """`call` once Bigtable answers again (the clients reconnect on their own)."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            return call()
        except ClientError as error:
            if error.response["Error"]["Code"] != "InternalServerError" or time.monotonic() > deadline:
                raise
            time.sleep(1)


@pytest.mark.slow
@pytest.mark.parametrize("cut", ["new connections", "every connection"])
def test_create_table_with_bigtable_gone_mid_way_leaves_nothing_and_a_retry_creates_it(served, monkeypatch, cut):
    """Refusing new connections lets serve's open data connection write the registry row and
    fails the table admin's new one: Bigtable gone between the two steps of CreateTable."""
    host, port = os.environ["BIGTABLE_EMULATOR_HOST"].rsplit(":", 1)
    proxy = TcpProxy(host, int(port))
    monkeypatch.setenv("BIGTABLE_EMULATOR_HOST", proxy.address)
    process, endpoint = start_serve(served.root, STAGE)
    name = "midway_" + cut.split()[0]
    try:
        client = Served(served.root, endpoint, process).client()
        client.create_table(TableName="warm_t", **BASE)  # the registry exists and serve's connection is open
        proxy.refuse = True
        if cut == "every connection":
            proxy.drop()
        started = time.monotonic()
        code, text, status = _error(lambda: client.create_table(TableName=name, **BASE))
        assert (code, status) == ("InternalServerError", 500) and "Bigtable" in text and "\n" not in text
        assert time.monotonic() - started < 40
        proxy.refuse = False
        assert _until_answered(lambda: client.create_table(TableName=name, **BASE))["TableDescription"][
            "TableStatus"] == "ACTIVE"
        client.put_item(TableName=name, Item={"p": {"S": "after"}})
        client.delete_table(TableName=name)
        client.delete_table(TableName="warm_t")
        assert {f"ddb_{name}", "ddb_warm_t"}.isdisjoint(_tables(served))
    finally:
        stop_process(process)
        proxy.close()


def test_names_of_the_registry_or_of_a_spec_table_s_bigtable_table_get_tables_of_their_own(served):
    client = served.client()
    before = _tables(served)
    for name in (REGISTRY_ID, "movies", "ddb_movies"):  # the registry's id, Movies' Bigtable id, a prefixed one
        client.create_table(TableName=name, **BASE)
        client.put_item(TableName=name, Item={"p": {"S": name}})
    try:
        assert _tables(served) - before == {f"ddb_{REGISTRY_ID}", "ddb_movies", "ddb_ddb_movies"}
        assert client.get_item(TableName="Movies", Key={"year": {"N": "2013"}, "title": {"S": "Rush"}})["Item"]
        assert client.scan(TableName="movies")["Items"] == [{"p": {"S": "movies"}}]
    finally:
        for name in (REGISTRY_ID, "movies", "ddb_movies"):
            client.delete_table(TableName=name)
    assert _tables(served) == before


@pytest.mark.parametrize("operation", ["DescribeTable", "DeleteTable", "UpdateTable", "GetItem", "Query", "Scan"])
@pytest.mark.parametrize("name", ["x" * 5_000, "x" * 1_000_000, "no_such_t\u00e9"])
def test_a_table_name_no_table_can_have_is_a_short_4xx_on_every_table_operation(served, operation, name):
    status, answer = _post(served, operation, {"TableName": name})
    assert status == 400 and answer["__type"].rsplit("#")[-1] in ("ValidationException",
                                                                   "ResourceNotFoundException"), answer
    assert len(answer["message"]) < 2_000


def test_a_create_table_left_half_way_is_retried_once_stale_and_never_takes_a_table_over(served):
    """A row CREATING (Bigtable went away between CreateTable's writes): in use for 2 minutes,
    then a retried CreateTable recovers it; had the table been made, it is still not taken over."""
    client = served.client()
    client.create_table(TableName="halfway_warm_t", **BASE)  # the registry exists
    client.delete_table(TableName="halfway_warm_t")
    _registry_row(served, "halfway_t", _record("halfway_t", "ddb_halfway_t", "CREATING"))
    assert _error(lambda: client.create_table(TableName="halfway_t", **BASE))[0] == "ResourceInUseException"
    _registry_row(served, "halfway_t", _record("halfway_t", "ddb_halfway_t", "CREATING", age=STALE_SECONDS + 1))
    assert client.create_table(TableName="halfway_t", **BASE)["TableDescription"]["TableStatus"] == "ACTIVE"
    client.put_item(TableName="halfway_t", Item={"p": {"S": "kept"}})
    _registry_row(served, "halfway_t", _record("halfway_t", "ddb_halfway_t", "CREATING", age=STALE_SECONDS + 1))
    code, text, _ = _error(lambda: client.create_table(TableName="halfway_t", **BASE))
    assert code == "ResourceInUseException" and "cbt deletetable ddb_halfway_t" in text
    assert "ddb_halfway_t" in _tables(served)  # its rows are still there for whoever made them
    _registry_row(served, "halfway_t", _record("halfway_t", "ddb_halfway_t", "ACTIVE"))
    client.delete_table(TableName="halfway_t")
