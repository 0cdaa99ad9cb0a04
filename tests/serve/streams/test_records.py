"""The record encoder against DynamoDB Local 1.25.1: one scripted sequence of writes on a
table per view type, each write's record as DynamoDB Local's stream gives it and as
`records.record` makes it from the item before and after (what the write path will have)."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from ddb2bigtable.serve.streams import records
from ddb2bigtable.serve.wire import item_to_wire

from .conftest import oracle_client

KEY = {"pk": {"S": "a"}, "sk": {"N": "1"}}
OTHER = {"pk": {"S": "b"}, "sk": {"N": "2"}}
SCHEMA = {"KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
          "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"},
                                   {"AttributeName": "sk", "AttributeType": "N"}],
          "BillingMode": "PAY_PER_REQUEST"}


def _script(table: str) -> list[tuple[str, dict[str, Any]]]:
    """New item, overwrite, update, no-op update, identical put, delete, delete of nothing,
    an item of every type, a set rewritten in another order, a transaction of two items."""
    t = {"TableName": table}
    every = {**OTHER, "bin": {"B": b"\x00\x01"}, "m": {"M": {"x": {"L": [{"N": "15"}, {"NULL": True}]}}},
             "ss": {"SS": ["x", "y"]}, "ns": {"NS": ["1", "2"]}, "ok": {"BOOL": False}, "e": {"S": ""}}
    return [
        ("put_item", t | {"Item": KEY | {"v": {"S": "x"}}}),
        ("put_item", t | {"Item": KEY | {"v": {"S": "y"}}}),
        ("update_item", t | {"Key": KEY, "UpdateExpression": "SET w = :w", "ExpressionAttributeValues": {":w": {"N": "5"}}}),
        ("update_item", t | {"Key": KEY, "UpdateExpression": "SET w = :w", "ExpressionAttributeValues": {":w": {"N": "5"}}}),
        ("put_item", t | {"Item": KEY | {"v": {"S": "y"}, "w": {"N": "5"}}}),
        ("delete_item", t | {"Key": KEY}),
        ("delete_item", t | {"Key": KEY}),
        ("put_item", t | {"Item": every}),
        ("put_item", t | {"Item": every | {"ss": {"SS": ["y", "x"]}}}),
        ("update_item", t | {"Key": KEY, "UpdateExpression": "SET n = :n", "ExpressionAttributeValues": {":n": {"N": "7"}}}),
        ("transact_write_items", {"TransactItems": [
            {"Put": t | {"Item": KEY | {"n": {"N": "8"}}}},
            {"Update": t | {"Key": OTHER, "UpdateExpression": "REMOVE ok"}}]}),
    ]


def _keys_of(kwargs: dict[str, Any]) -> list[dict[str, Any]]:
    if "TransactItems" in kwargs:
        return [next(iter(a.values())).get("Key") or {k: next(iter(a.values()))["Item"][k] for k in ("pk", "sk")}
                for a in kwargs["TransactItems"]]
    return [kwargs.get("Key") or {k: kwargs["Item"][k] for k in ("pk", "sk")}]


def _stream_records(streams: Any, arn: str) -> list[dict[str, Any]]:
    shard = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"][0]["ShardId"]
    position = streams.get_shard_iterator(StreamArn=arn, ShardId=shard, ShardIteratorType="TRIM_HORIZON")
    return streams.get_records(ShardIterator=position["ShardIterator"])["Records"]


@pytest.mark.parametrize("view", records.VIEWS)
def test_each_write_makes_the_record_dynamodb_local_makes(oracle, view: str) -> None:
    client, streams = oracle_client(oracle, "dynamodb"), oracle_client(oracle, "dynamodbstreams")
    table = f"Records{view.title().replace('_', '')}"
    arn = client.create_table(TableName=table, **SCHEMA, StreamSpecification={
        "StreamEnabled": True, "StreamViewType": view})["TableDescription"]["LatestStreamArn"]
    expected = []
    try:
        for operation, kwargs in _script(table):
            keys = _keys_of(kwargs)
            before = [client.get_item(TableName=table, Key=k, ConsistentRead=True).get("Item") for k in keys]
            getattr(client, operation)(**kwargs)
            after = [client.get_item(TableName=table, Key=k, ConsistentRead=True).get("Item") for k in keys]
            for key, old, new in zip(keys, before, after, strict=True):
                made = records.record(key, old, new, view, region="ddblocal", sequence="0" * 37, commit_micros=0)
                if made is not None:
                    expected.append(made)
        got = _stream_records(streams, arn)
    finally:
        client.delete_table(TableName=table)
    # the no-op update, the identical put, the second delete and the reordered set make none
    assert [r["eventName"] for r in got] == ["INSERT", "MODIFY", "MODIFY", "REMOVE", "INSERT", "INSERT", "MODIFY",
                                             "MODIFY"]
    assert len(got) == len(expected)
    for theirs, ours in zip(got, expected, strict=True):
        shown = {k: item_to_wire(v) if k in ("Keys", "NewImage", "OldImage") else v
                 for k, v in theirs["dynamodb"].items() if k not in ("SequenceNumber", "ApproximateCreationDateTime")}
        assert shown == {k: v for k, v in ours["dynamodb"].items()
                         if k not in ("SequenceNumber", "ApproximateCreationDateTime")}
        assert {k: theirs[k] for k in ("eventName", "eventVersion", "eventSource", "awsRegion")} == \
               {k: ours[k] for k in ("eventName", "eventVersion", "eventSource", "awsRegion")}


def test_a_ttl_deletion_says_dynamodb_removed_it() -> None:
    """DynamoDB's TTL REMOVE carries userIdentity (Service, dynamodb.amazonaws.com); a user's
    delete carries none; a TTL flag on anything but a REMOVE is dropped."""
    item = KEY | {"v": {"S": "x"}}
    by_ttl = records.record(KEY, item, None, "KEYS_ONLY", region="us-west-2", sequence="1" * 37,
                            commit_micros=1_796_646_375_747_123, by_ttl=True)
    assert by_ttl is not None
    assert by_ttl["userIdentity"] == {"Type": "Service", "PrincipalId": "dynamodb.amazonaws.com"}
    assert by_ttl["dynamodb"] == {"ApproximateCreationDateTime": 1_796_646_375, "Keys": KEY,
                                  "SequenceNumber": "1" * 37, "SizeBytes": 7, "StreamViewType": "KEYS_ONLY"}
    by_user = records.record(KEY, item, None, "KEYS_ONLY", region="us-west-2", sequence="1" * 37, commit_micros=0)
    assert by_user is not None and "userIdentity" not in by_user
    change = records.change(KEY, None, item, by_ttl=True)
    assert change is not None and not change.by_ttl


def test_the_stored_cell_is_the_write_paths_one_cell() -> None:
    """What the write path adds to its row mutation: the stream family, the change number
    inverted (the newest record first in the row), Bigtable's server time."""
    change = records.change(KEY, None, KEY | {"v": {"S": "x"}})
    assert change is not None
    first, second = records.stored_cell(change, "NEW_IMAGE", 1), records.stored_cell(change, "NEW_IMAGE", 2)
    assert (first.family, first.timestamp_micros) == (records.FAMILY, -1)
    assert second.qualifier < first.qualifier
    assert records.number_of(second.qualifier) == 2
    back = records.parsed(first.value)
    assert back is not None and back.old is None  # the image as stored (orjson.Fragment), written out as it is
    assert orjson.loads(orjson.dumps(back.new)) == {"pk": {"S": "a"}, "sk": {"N": "1"}, "v": {"S": "x"}}
    assert records.parsed(b"not json") is None and records.parsed(b'{"v": 99}') is None
    from ddb2bigtable.codec.mutations import Cell

    row = [Cell("cf", b"v", b"x", 5), Cell(records.FAMILY, second.qualifier, second.value, 9),
           Cell(records.FAMILY, first.qualifier, first.value, 7)]
    assert records.next_number(row) == 3 and records.next_number(row[:1]) == 1
