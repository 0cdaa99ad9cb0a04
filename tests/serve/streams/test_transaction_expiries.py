"""A TransactWriteItems that meets TTL on a table with a stream records it as a PutItem or
UpdateItem does (docs/streams.md, "TTL"): an item whose expiry passed before the transaction
(hidden from reads, not yet deleted for good) gets its REMOVE by the service first, then
the transaction's INSERT; an item the transaction writes already expired gets its record
and its REMOVE by the service, and is deleted with them, so no later write removes it
again. On serve's stage of the stream tests, records read back through boto3's
`dynamodbstreams`, each item's in stream order."""

from __future__ import annotations

import time
from typing import Any

from . import side_by_side
from .conftest import Streamed

TABLE = "TransactExpiries"


def _table(streamed: Streamed) -> tuple[Any, str]:
    db = streamed.client("dynamodb")
    made = db.create_table(TableName=TABLE, BillingMode="PAY_PER_REQUEST", **side_by_side.TABLES[side_by_side.MAIN],
                           StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"})
    db.update_time_to_live(TableName=TABLE, TimeToLiveSpecification={"Enabled": True, "AttributeName": "expires"})
    return db, made["TableDescription"]["LatestStreamArn"]


def _chains(streamed: Streamed, arn: str) -> dict[str, list[tuple[str, Any, Any]]]:
    """Each item's records: (event, by TTL), the OldImage's `v` and the NewImage's `v`."""
    time.sleep(0.01)  # serve's reader sees a record from the next GetRecords after its commit
    found = side_by_side.by_item({TABLE: side_by_side.read_boto3(streamed.client(), arn)})
    return {item.split(" ", 1)[1]: [(r["eventName"] + (" by TTL" if "userIdentity" in r else ""),
                                     r.get("OldImage", {}).get("v"), r.get("NewImage", {}).get("v"))
                                    for r in records] for item, records in found.items()}


def _key(pk: str) -> dict[str, Any]:
    return side_by_side.key(pk, 1)


def _name(pk: str) -> str:
    return f'{{"pk": {{"S": "{pk}"}}, "sk": {{"N": "1"}}}}'


def test_transactions_meeting_ttl_record_each_expiry_once(streamed) -> None:
    db, arn = _table(streamed)
    soon = {"N": str(int(time.time()) + 1)}
    for pk in ("lapsed-put", "lapsed-update"):
        db.put_item(TableName=TABLE, Item=_key(pk) | {"v": {"S": "1"}, "expires": soon})
    db.put_item(TableName=TABLE, Item=_key("expired-over") | {"v": {"S": "1"}})
    deadline = time.monotonic() + 10
    while any(db.get_item(TableName=TABLE, Key=_key(pk), ConsistentRead=True).get("Item")
              for pk in ("lapsed-put", "lapsed-update")):  # hidden once expired; no sweep in this worker yet
        assert time.monotonic() < deadline, "the items did not expire"
        time.sleep(0.2)
    past = {"N": str(int(time.time()) - 60)}
    db.transact_write_items(TransactItems=[
        {"Put": {"TableName": TABLE, "Item": _key("lapsed-put") | {"v": {"S": "2"}}}},
        {"Update": {"TableName": TABLE, "Key": _key("lapsed-update"), "UpdateExpression": "SET v = :v",
                    "ExpressionAttributeValues": {":v": {"S": "2"}}}},
        {"Put": {"TableName": TABLE, "Item": _key("expired-over") | {"v": {"S": "2"}, "expires": past}}},
        {"Put": {"TableName": TABLE, "Item": _key("expired-new") | {"v": {"S": "2"}, "expires": past}}}])
    for pk in ("expired-over", "expired-new"):
        assert "Item" not in db.get_item(TableName=TABLE, Key=_key(pk), ConsistentRead=True)
        db.put_item(TableName=TABLE, Item=_key(pk) | {"v": {"S": "3"}})
    one, two, three = {"S": "1"}, {"S": "2"}, {"S": "3"}
    # before: the lapsed items' REMOVE was never written (INSERT after INSERT), and the items
    # written expired stayed stored, so the PutItem after removed them by TTL a second time
    assert _chains(streamed, arn) == {
        _name("lapsed-put"): [("INSERT", None, one), ("REMOVE by TTL", one, None), ("INSERT", None, two)],
        _name("lapsed-update"): [("INSERT", None, one), ("REMOVE by TTL", one, None), ("INSERT", None, two)],
        _name("expired-over"): [("INSERT", None, one), ("MODIFY", one, two), ("REMOVE by TTL", two, None),
                                ("INSERT", None, three)],
        _name("expired-new"): [("INSERT", None, two), ("REMOVE by TTL", two, None), ("INSERT", None, three)]}
