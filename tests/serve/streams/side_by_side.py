"""One scripted sequence of writes and its stream read back through the clients applications
use (issue #52, point 4): boto3's `dynamodbstreams` and the JavaScript SDK v3's
`DynamoDBStreamsClient` (read_stream.cjs), so serve's records can be compared with DynamoDB
Local's record for record.

The sequence covers every way DynamoDB writes or withholds a record: a new item, an
overwrite, an update, an update that changes nothing, a delete and a delete of nothing, a
put refused by its condition, a batch, a transaction over two tables (and one cancelled),
and a TTL expiry. What is compared per item (its records in stream order): the event name,
Keys, NewImage, OldImage and userIdentity; per record: eventSource, eventVersion and
StreamViewType. What is not, because DynamoDB Local 1.25.1 differs from DynamoDB and serve
follows DynamoDB (docs/streams.md, "Every way it differs"): awsRegion (`ddblocal`),
ApproximateCreationDateTime (DynamoDB Local rounds to the minute), SequenceNumber (21
digits counting from 1 there, 37 of commit time here), eventID (random on both), shard ids,
and SizeBytes of fractional numbers (the sequence uses whole numbers, so it is compared).
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import time
from collections.abc import Callable
from typing import Any

from botocore.exceptions import ClientError

from ...conftest import ROOT

MAIN, PEER = "SideOrders", "SidePeers"
TTL_ATTRIBUTE = "expires"
VIEW = "NEW_AND_OLD_IMAGES"
TABLES = {
    MAIN: {"KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
           "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"},
                                    {"AttributeName": "sk", "AttributeType": "N"}]},
    PEER: {"KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
           "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}]},
}
JS_CLIENT = ROOT / ".tools" / "js-streams-client" / "node_modules"
JS_READER = ROOT / "tests" / "serve" / "streams" / "read_stream.cjs"


def create_tables(db: Any) -> dict[str, str]:
    """Both tables with a NEW_AND_OLD_IMAGES stream, TTL on the first; their stream ARNs."""
    arns = {}
    for name, schema in TABLES.items():
        made = db.create_table(TableName=name, **schema, BillingMode="PAY_PER_REQUEST",
                               StreamSpecification={"StreamEnabled": True, "StreamViewType": VIEW})
        arns[name] = made["TableDescription"]["LatestStreamArn"]
    db.update_time_to_live(TableName=MAIN, TimeToLiveSpecification={"Enabled": True,
                                                                     "AttributeName": TTL_ATTRIBUTE})
    return arns


def key(pk: str, sk: int) -> dict[str, Any]:
    return {"pk": {"S": pk}, "sk": {"N": str(sk)}}


def _refused(call: Callable[..., Any], **kwargs: Any) -> str:
    try:
        call(**kwargs)
    except ClientError as error:
        return error.response["Error"]["Code"]
    raise AssertionError(f"{call.__name__} was meant to be refused: {kwargs}")


def run_sequence(db: Any, expired_at: int) -> None:
    """The scripted writes, the same on both sides (boto3 on its defaults: TransactWriteItems
    sends a ClientRequestToken). `expired_at` is the TTL value of the item that expires."""
    put = db.put_item
    put(TableName=MAIN, Item=key("a", 1) | {"v": {"S": "one"}, "tags": {"SS": ["x", "y"]}})     # INSERT
    put(TableName=MAIN, Item=key("a", 1) | {"v": {"S": "two"}, "n": {"N": "5"},
                                            "raw": {"B": b"\x00\xff"}})                          # MODIFY
    db.update_item(TableName=MAIN, Key=key("a", 1), UpdateExpression="SET n = n + :one",
                   ExpressionAttributeValues={":one": {"N": "1"}})                                # MODIFY
    db.update_item(TableName=MAIN, Key=key("a", 1), UpdateExpression="SET v = :v",
                   ExpressionAttributeValues={":v": {"S": "two"}})                                # no record
    put(TableName=MAIN, Item=key("a", 1) | {"v": {"S": "two"}, "n": {"N": "6"},
                                            "raw": {"B": b"\x00\xff"}})                          # identical: none
    put(TableName=MAIN, Item=key("b", 1) | {"v": {"S": "gone soon"}})                             # INSERT
    db.delete_item(TableName=MAIN, Key=key("b", 1))                                               # REMOVE
    db.delete_item(TableName=MAIN, Key=key("b", 1))                                               # no record
    assert _refused(put, TableName=MAIN, Item=key("a", 1) | {"v": {"S": "never"}},
                    ConditionExpression="attribute_not_exists(pk)") == "ConditionalCheckFailedException"
    db.batch_write_item(RequestItems={MAIN: [
        {"PutRequest": {"Item": key("c", 1) | {"v": {"S": "batch"}}}},
        {"PutRequest": {"Item": key("c", 2) | {"v": {"S": "batch"}, "m": {"M": {"deep": {"L": [{"N": "1"}]}}}}}},
        {"DeleteRequest": {"Key": key("a", 1)}},                                                  # REMOVE
    ]})
    db.transact_write_items(TransactItems=[
        {"Put": {"TableName": MAIN, "Item": key("d", 1) | {"v": {"S": "in a transaction"}}}},
        {"Update": {"TableName": PEER, "Key": {"id": {"S": "p1"}}, "UpdateExpression": "SET w = :w",
                    "ExpressionAttributeValues": {":w": {"N": "7"}}}},
        {"ConditionCheck": {"TableName": MAIN, "Key": key("c", 1), "ConditionExpression": "attribute_exists(pk)"}},
    ])
    assert _refused(db.transact_write_items, TransactItems=[
        {"Put": {"TableName": MAIN, "Item": key("d", 2) | {"v": {"S": "cancelled"}}}},
        {"Delete": {"TableName": PEER, "Key": {"id": {"S": "p1"}}, "ConditionExpression": "w = :other",
                    "ExpressionAttributeValues": {":other": {"N": "8"}}}},
    ]) == "TransactionCanceledException"
    put(TableName=MAIN, Item=key("e", 1) | {"v": {"S": "expires"}, TTL_ATTRIBUTE: {"N": str(expired_at)}})


def expired_gone(db: Any, timeout: float) -> bool:
    """Whether the expired item was gone within `timeout` seconds, then a DeleteItem of it,
    which writes no record of its own (there is no item). DynamoDB deletes an expired item in
    the background, days later at most, and writes the REMOVE then (DynamoDB Local within a
    second); serve hides it from reads at once and writes that REMOVE when a write meets the
    expired item (docs/streams.md, TTL): the delete is that write, so both sides end with the
    same records."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if "Item" not in db.get_item(TableName=MAIN, Key=key("e", 1), ConsistentRead=True):
            db.delete_item(TableName=MAIN, Key=key("e", 1))
            return True
        time.sleep(0.5)
    return False


def read_boto3(streams: Any, arn: str) -> list[dict[str, Any]]:
    """Every record of the stream through boto3, shards parents first, each from TRIM_HORIZON
    until it ends or two pages in a row bring nothing."""
    shards, after = [], None
    while True:
        page = streams.describe_stream(StreamArn=arn, **({"ExclusiveStartShardId": after} if after else {}))
        shards.extend(page["StreamDescription"]["Shards"])
        after = page["StreamDescription"].get("LastEvaluatedShardId")
        if not after:
            break
    ids, done, ordered = {s["ShardId"] for s in shards}, set(), []
    while len(ordered) < len(shards):
        for shard in shards:
            parent = shard.get("ParentShardId")
            if shard["ShardId"] not in done and (not parent or parent not in ids or parent in done):
                ordered.append(shard)
                done.add(shard["ShardId"])
    found = []
    for shard in ordered:
        iterator = streams.get_shard_iterator(StreamArn=arn, ShardId=shard["ShardId"],
                                              ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
        empty = 0
        while iterator and empty < 2:
            page = streams.get_records(ShardIterator=iterator, Limit=1000)
            found.extend(page["Records"])
            empty = 0 if page["Records"] else empty + 1
            iterator = page.get("NextShardIterator")
    return found


def read_javascript(endpoint: str, region: str, arn: str) -> list[dict[str, Any]]:
    """Every record of the stream through the JavaScript SDK v3 (read_stream.cjs, node)."""
    done = subprocess.run(["node", str(JS_READER), endpoint, region, arn], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "NODE_PATH": str(JS_CLIENT)})
    assert done.returncode == 0, done.stderr
    return [entry["record"] for entry in json.loads(done.stdout)]


def _plain(value: Any) -> Any:
    """A value as both clients can be compared: binary as base64 (boto3 gives bytes, the
    JavaScript SDK a Uint8Array, which JSON writes as an object of bytes), sets sorted (no
    order is promised)."""
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(value).decode()
    if isinstance(value, dict):
        if set(value) == {"B"} and isinstance(value["B"], dict):  # a Uint8Array through JSON
            return {"B": base64.b64encode(bytes(value["B"][str(i)] for i in range(len(value["B"])))).decode()}
        if set(value) == {"BS"}:
            return {"BS": sorted(_plain({"B": b})["B"] for b in value["BS"])}
        if set(value) & {"SS", "NS"}:
            return {k: sorted(v) for k, v in value.items()}
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def by_item(streams: dict[str, list[dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    """Each item's records in stream order ("<table> <keys>": [record, ...]), as compared."""
    out: dict[str, list[dict[str, Any]]] = {}
    for table, records in streams.items():
        for record in records:
            change = record["dynamodb"]
            keys = _plain(change["Keys"])
            compared = {"eventName": record["eventName"], "eventSource": record["eventSource"],
                        "eventVersion": record["eventVersion"], "Keys": keys,
                        "StreamViewType": change["StreamViewType"], "SizeBytes": change["SizeBytes"]}
            for part in ("NewImage", "OldImage"):
                if part in change:
                    compared[part] = _plain(change[part])
            if "userIdentity" in record:
                compared["userIdentity"] = record["userIdentity"]
            out.setdefault(f"{table} {json.dumps(keys, sort_keys=True)}", []).append(compared)
    return out


def events(items: dict[str, list[dict[str, Any]]]) -> dict[str, list[str]]:
    """Each item's event names (a TTL deletion as REMOVE by TTL), for a readable first check."""
    return {item: [r["eventName"] + (" by TTL" if "userIdentity" in r else "") for r in records]
            for item, records in items.items()}
