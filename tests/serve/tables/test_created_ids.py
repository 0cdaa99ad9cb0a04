"""The Bigtable ids of created tables cannot collide (issue 50, finding 8): a table whose
name spells another's hashed id (`ddb_<29 characters>_<16 hex digits>`) got that table, and
CreateTable refused it, where DynamoDB Local creates both; tables created before keep the
ids their registry rows hold."""

from __future__ import annotations

import json
import time

import pytest

from ddb2bigtable.serve.tables.created_tables import _parsed
from ddb2bigtable.serve.tables.table_requests import ID_LENGTH, bigtable_id, legacy_bigtable_id

KEYS = {"KeySchema": [{"AttributeName": "p", "KeyType": "HASH"}],
        "AttributeDefinitions": [{"AttributeName": "p", "AttributeType": "S"}], "BillingMode": "PAY_PER_REQUEST"}


@pytest.mark.parametrize("long_first", [True, False])
def test_a_name_spelling_another_tables_hashed_id_gets_a_table_of_its_own(served, long_first):
    client = served.client()
    long = ("Ledger" if long_first else "Journal") + "-entries-of-every-account-kept-for-ten-years"
    spelled = legacy_bigtable_id(long).removeprefix("ddb_")  # the 46 characters that spelled long's id
    assert len(long) + 4 > ID_LENGTH and f"ddb_{spelled}" == legacy_bigtable_id(long)
    names = [long, spelled] if long_first else [spelled, long]
    try:
        for name in names:
            client.create_table(TableName=name, **KEYS)
        for name in names:
            client.put_item(TableName=name, Item={"p": {"S": "k"}, "owner": {"S": name}})
        for name in names:  # each table holds its own item
            item = client.get_item(TableName=name, Key={"p": {"S": "k"}}, ConsistentRead=True)["Item"]
            assert item["owner"] == {"S": name}
        assert set(names) <= set(client.list_tables(Limit=100)["TableNames"])
    finally:
        for name in names:
            try:
                client.delete_table(TableName=name)
            except client.exceptions.ResourceNotFoundException:
                pass


def test_ids_are_apart_and_older_tables_keep_theirs():
    long = "x" * 60
    spelled = legacy_bigtable_id(long).removeprefix("ddb_")
    assert bigtable_id(long) != bigtable_id(spelled) and bigtable_id(spelled) != legacy_bigtable_id(long)
    for name in ("Orders", "Orders.v2", "a" * 46, "ddb_movies"):  # every name that fits keeps its id
        assert bigtable_id(name) == legacy_bigtable_id(name) == f"ddb_{name}"
    assert all(len(bigtable_id(n)) <= ID_LENGTH for n in (long, spelled, "y" * 255))
    record = {"status": "ACTIVE", "definition": {"TableName": long, **KEYS}, "table_id": legacy_bigtable_id(long),
              "table_uuid": "u", "created": time.time(), "changed": time.time()}
    assert _parsed(long, json.dumps(record).encode())["table_id"] == legacy_bigtable_id(long)  # still served
