"""ReturnConsumedCapacity: DynamoDB's unit rules (the worked examples of AWS's pages, cited
in serve/capacity.py) and serve's answers to boto3 on the emulator, TOTAL and INDEXES,
for item, batch, query/scan and transaction operations."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

from ddb2bigtable.serve.capacity import read_units, write_units
from ddb2bigtable.serve.wire import item_bytes, to_codec

from .client_calls import created_table

KB = 1024
TABLE = "CapacityUnits"
SCHEMA = {"KeySchema": [{"AttributeName": "p", "KeyType": "HASH"}, {"AttributeName": "c", "KeyType": "RANGE"}],
          "AttributeDefinitions": [{"AttributeName": "p", "AttributeType": "S"},
                                   {"AttributeName": "c", "AttributeType": "S"},
                                   {"AttributeName": "g", "AttributeType": "S"}],
          "BillingMode": "PAY_PER_REQUEST",
          "GlobalSecondaryIndexes": [{"IndexName": "by-g", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                                      "Projection": {"ProjectionType": "KEYS_ONLY"}}]}


def test_read_units_follow_the_worked_examples_of_aws():
    # "reading a 3,500-byte item consumes the same throughput as reading a 4 KB item"
    assert read_units(3500, consistent=True) == 1
    # "an item of 8 KB requires 2 read units for a strongly consistent read, 1 eventually consistent"
    assert read_units(8 * KB, consistent=True) == 2 and read_units(8 * KB, consistent=False) == 1
    # "If you read a 10 KB item, DynamoDB rounds the item size to 12 KB"
    assert read_units(10 * KB, consistent=True) == 3
    # a missing item still costs a read; a Query that read nothing costs nothing
    assert read_units(0, consistent=True) == 1 and read_units(0, consistent=False) == 0.5
    assert read_units(0, consistent=False, least=0) == 0


def test_write_units_and_item_sizes():
    assert write_units(KB) == 1 and write_units(KB + 1) == 2 and write_units(0) == 1
    item = {"p": to_codec({"S": "abc"}, "p"), "n": to_codec({"N": "-12345.6700"}, "n"),
            "m": to_codec({"M": {"k": {"BOOL": True}}}, "m"), "l": to_codec({"L": [{"NULL": True}]}, "l")}
    # names in UTF-8 bytes plus values: "abc" 3; 1234567 (7 significant digits) 4 + 1;
    # a map 3 + (name 1 + value 1 + 1); a list 3 + (1 + 1)
    assert item_bytes(item) == (1 + 3) + (1 + 5) + (1 + 3 + 3) + (1 + 3 + 2)


@pytest.fixture(scope="module")
def client(served):
    with created_table(served, TABLE, SCHEMA) as client:
        yield client


def _units(answer) -> object:
    return answer["ConsumedCapacity"]["CapacityUnits"]


def test_single_item_operations_answer_dynamodb_units(client):
    filler = "a" * (4 * KB - len("pcv") - 2)  # names and values: exactly 4 KB
    item = {"p": {"S": "x"}, "c": {"S": "y"}, "v": {"S": filler}}
    assert _units(client.put_item(TableName=TABLE, Item=item, ReturnConsumedCapacity="TOTAL")) == 4
    key = {"p": {"S": "x"}, "c": {"S": "y"}}
    assert _units(client.get_item(TableName=TABLE, Key=key, ConsistentRead=True, ReturnConsumedCapacity="TOTAL")) == 1
    assert _units(client.get_item(TableName=TABLE, Key=key, ReturnConsumedCapacity="TOTAL")) == 0.5
    bigger = item | {"v": {"S": filler + "a"}}  # one byte over 4 KB: two read units
    client.put_item(TableName=TABLE, Item=bigger)
    answer = client.get_item(TableName=TABLE, Key=key, ConsistentRead=True, ProjectionExpression="p",
                             ReturnConsumedCapacity="TOTAL")
    assert answer["ConsumedCapacity"] == {"TableName": TABLE, "CapacityUnits": 2.0, "ReadCapacityUnits": 2.0}
    # an update is charged for the larger of the item before and after: 5 KB before, 1 KB after
    small = client.update_item(TableName=TABLE, Key=key, UpdateExpression="REMOVE v", ReturnConsumedCapacity="TOTAL")
    assert _units(small) == 5
    assert _units(client.delete_item(TableName=TABLE, Key=key, ReturnConsumedCapacity="TOTAL")) == 1
    assert "ConsumedCapacity" not in client.get_item(TableName=TABLE, Key=key)
    with pytest.raises(ClientError, match="returnConsumedCapacity"):
        client.get_item(TableName=TABLE, Key=key, ReturnConsumedCapacity="DUMMY")


def test_indexes_mode_names_the_table_and_each_index(client):
    item = {"p": {"S": "i"}, "c": {"S": "1"}, "g": {"S": "blue"}, "v": {"S": "b" * 1500}}
    answer = client.put_item(TableName=TABLE, Item=item, ReturnConsumedCapacity="INDEXES")["ConsumedCapacity"]
    # the table 2 units (1.5 KB); the keys-only index entry (p, c, g) 1
    assert answer["CapacityUnits"] == 3 and answer["Table"]["CapacityUnits"] == 2
    assert answer["GlobalSecondaryIndexes"] == {"by-g": {"CapacityUnits": 1.0, "WriteCapacityUnits": 1.0}}
    moved = client.update_item(TableName=TABLE, Key={"p": {"S": "i"}, "c": {"S": "1"}}, UpdateExpression="SET g = :g",
                               ExpressionAttributeValues={":g": {"S": "red"}}, ReturnConsumedCapacity="INDEXES")
    assert moved["ConsumedCapacity"]["GlobalSecondaryIndexes"]["by-g"]["CapacityUnits"] == 2  # old entry out, new in
    same = client.update_item(TableName=TABLE, Key={"p": {"S": "i"}, "c": {"S": "1"}}, UpdateExpression="SET w = :w",
                              ExpressionAttributeValues={":w": {"S": "z"}}, ReturnConsumedCapacity="INDEXES")
    assert "GlobalSecondaryIndexes" not in same["ConsumedCapacity"]  # the keys-only entry did not change
    query = client.query(TableName=TABLE, IndexName="by-g", KeyConditionExpression="g = :g",
                         ExpressionAttributeValues={":g": {"S": "red"}}, ReturnConsumedCapacity="INDEXES")
    assert query["ConsumedCapacity"]["GlobalSecondaryIndexes"]["by-g"]["CapacityUnits"] == 0.5
    assert query["ConsumedCapacity"]["Table"]["CapacityUnits"] == 0


def test_query_and_scan_sum_the_items_read_before_the_filter(client):
    for n in range(10):
        client.put_item(TableName=TABLE, Item={"p": {"S": "q"}, "c": {"S": str(n)}, "v": {"S": "x" * 1000}})
    asked = {"TableName": TABLE, "KeyConditionExpression": "p = :p", "ReturnConsumedCapacity": "TOTAL"}
    values = {":p": {"S": "q"}}
    # ten items of 1,007 bytes: 10,070 bytes, rounded up once to 12 KB: 3 units, 1.5 eventually consistent
    assert _units(client.query(**asked, ExpressionAttributeValues=values)) == 1.5
    assert _units(client.query(**asked, ExpressionAttributeValues=values, ConsistentRead=True)) == 3
    filtered = client.query(**asked, FilterExpression="v = :v", ExpressionAttributeValues=values | {":v": {"S": "-"}})
    assert filtered["Count"] == 0 and _units(filtered) == 1.5
    assert _units(client.query(**asked, ExpressionAttributeValues={":p": {"S": "none"}})) == 0
    scan = client.scan(TableName=TABLE, Limit=3, ReturnConsumedCapacity="TOTAL")
    assert scan["ScannedCount"] == 3 and _units(scan) == 0.5


def test_batches_and_transactions_answer_a_list_per_table(client):
    puts = [{"PutRequest": {"Item": {"p": {"S": "b"}, "c": {"S": str(n)}, "v": {"S": "x" * 1500}}}} for n in range(2)]
    written = client.batch_write_item(RequestItems={TABLE: puts + [{"DeleteRequest": {"Key": {
        "p": {"S": "b"}, "c": {"S": "gone"}}}}]}, ReturnConsumedCapacity="TOTAL")
    assert written["ConsumedCapacity"] == [{"TableName": TABLE, "CapacityUnits": 5.0, "WriteCapacityUnits": 5.0}]
    keys = [{"p": {"S": "b"}, "c": {"S": str(n)}} for n in range(2)]
    got = client.batch_get_item(RequestItems={TABLE: {"Keys": keys, "ConsistentRead": True}},
                                ReturnConsumedCapacity="TOTAL")
    assert got["ConsumedCapacity"][0]["CapacityUnits"] == 2
    one = [{"Get": {"TableName": TABLE, "Key": keys[0]}}]  # one row: transactions are served within one
    assert client.transact_get_items(TransactItems=one, ReturnConsumedCapacity="TOTAL")[
        "ConsumedCapacity"][0]["CapacityUnits"] == 2  # a transactional read: twice a consistent one
    check = {"ConditionCheck": {"TableName": TABLE, "Key": {"p": {"S": "t"}, "c": {"S": "1"}},
                                "ConditionExpression": "attribute_not_exists(p)"}}
    put = {"Put": {"TableName": TABLE, "Item": {"p": {"S": "t"}, "c": {"S": "2"}, "v": {"S": "x" * 1500}}}}
    for action, units in ((check, 2), (put, 4)):
        assert client.transact_write_items(TransactItems=[action], ReturnConsumedCapacity="TOTAL")[
            "ConsumedCapacity"][0]["CapacityUnits"] == units


def test_a_counter_addition_asked_for_its_capacity_still_adds(served):
    """An ADD to a counter goes through the read-check-write when its capacity is asked (the
    figure needs the old item), and still counts every addition."""
    client = served.client()
    key = {"pk": {"S": "capacity-counter"}, "sk": {"N": "1"}}
    for _ in range(2):
        answer = client.update_item(TableName="Scratch", Key=key, UpdateExpression="ADD hits :one",
                                    ExpressionAttributeValues={":one": {"N": "1"}}, ReturnConsumedCapacity="TOTAL")
        assert answer["ConsumedCapacity"]["CapacityUnits"] == 1
    assert client.get_item(TableName="Scratch", Key=key, ConsistentRead=True)["Item"]["hits"] == {"N": "2"}
    client.delete_item(TableName="Scratch", Key=key)
