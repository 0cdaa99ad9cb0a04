"""UpdateTable of a created table (billing, global indexes added and deleted, DynamoDB's
checks) and DescribeTable's counted ItemCount and TableSizeBytes."""

from __future__ import annotations

import pytest

from ..client_calls import PARTITION_ONLY, created_table, error_of

TABLE = "UpdatedOrders"
CREATE_X = {"AttributeDefinitions": [{"AttributeName": "x", "AttributeType": "S"}],
            "GlobalSecondaryIndexUpdates": [{"Create": {"IndexName": "by-x", "Projection": {"ProjectionType": "ALL"},
                                                        "KeySchema": [{"AttributeName": "x", "KeyType": "HASH"}]}}]}


@pytest.fixture()
def client(served):
    with created_table(served, TABLE, PARTITION_ONLY) as client:
        yield client


def test_billing_is_recorded_and_described(client):
    answer = client.update_table(TableName=TABLE, BillingMode="PROVISIONED",
                                 ProvisionedThroughput={"ReadCapacityUnits": 5, "WriteCapacityUnits": 6})
    assert answer["TableDescription"]["BillingModeSummary"]["BillingMode"] == "PROVISIONED"
    described = client.describe_table(TableName=TABLE)["Table"]
    assert described["ProvisionedThroughput"]["ReadCapacityUnits"] == 5
    assert described["ProvisionedThroughput"]["WriteCapacityUnits"] == 6
    client.update_table(TableName=TABLE, BillingMode="PAY_PER_REQUEST")
    assert client.describe_table(TableName=TABLE)["Table"]["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
    code, text = error_of(lambda: client.update_table(TableName=TABLE))
    assert code == "ValidationException" and "At least one of" in text


def test_a_global_index_added_holds_the_items_already_there_and_deleted_is_gone(client):
    items = [{"p": {"S": f"k{n}"}, "x": {"S": f"x{n % 2}"}} for n in range(4)] + [
        {"p": {"S": "n"}, "x": {"N": "3"}}, {"p": {"S": "e"}, "x": {"S": ""}}]  # neither can be in the index
    for item in items:
        client.put_item(TableName=TABLE, Item=item)
    described = client.update_table(TableName=TABLE, **CREATE_X)["TableDescription"]
    (index,) = described["GlobalSecondaryIndexes"]
    assert index["IndexName"] == "by-x" and index["IndexStatus"] == "ACTIVE"
    found = client.query(TableName=TABLE, IndexName="by-x", KeyConditionExpression="x = :x",
                         ExpressionAttributeValues={":x": {"S": "x1"}})["Items"]
    assert sorted(i["p"]["S"] for i in found) == ["k1", "k3"]  # the number-typed x is not in the index
    code, text = error_of(lambda: client.put_item(TableName=TABLE, Item={"p": {"S": "m"}, "x": {"N": "1"}}))
    assert code == "ValidationException" and "Type mismatch for Index Key x" in text
    counts = client.describe_table(TableName=TABLE)["Table"]
    assert counts["ItemCount"] == 6 and counts["GlobalSecondaryIndexes"][0]["ItemCount"] == 4
    assert len(client.scan(TableName=TABLE, IndexName="by-x")["Items"]) == 4
    code, text = error_of(lambda: client.update_table(TableName=TABLE, **CREATE_X))
    assert code == "ValidationException" and "already exists" in text
    client.update_table(TableName=TABLE, GlobalSecondaryIndexUpdates=[{"Delete": {"IndexName": "by-x"}}])
    assert "GlobalSecondaryIndexes" not in client.describe_table(TableName=TABLE)["Table"]
    code, _ = error_of(lambda: client.query(TableName=TABLE, IndexName="by-x", KeyConditionExpression="x = :x",
                                          ExpressionAttributeValues={":x": {"S": "x1"}}))
    assert code == "ValidationException"
    client.put_item(TableName=TABLE, Item={"p": {"S": "m"}, "x": {"N": "1"}})  # x takes any type again


def test_index_updates_are_checked_as_dynamodb_checks_them(client):
    create = CREATE_X["GlobalSecondaryIndexUpdates"][0]
    two = [create, {"Create": create["Create"] | {"IndexName": "by-x2"}}]
    code, _ = error_of(lambda: client.update_table(TableName=TABLE, AttributeDefinitions=CREATE_X["AttributeDefinitions"],
                                                 GlobalSecondaryIndexUpdates=two))
    assert code == "LimitExceededException"
    code, _ = error_of(lambda: client.update_table(TableName=TABLE, GlobalSecondaryIndexUpdates=[
        {"Delete": {"IndexName": "nonexistent"}}]))
    assert code == "ResourceNotFoundException"
    code, text = error_of(lambda: client.update_table(TableName=TABLE, GlobalSecondaryIndexUpdates=[create]))
    assert code == "ValidationException" and "AttributeDefinitions" in text
    code, text = error_of(lambda: client.update_table(
        TableName=TABLE, AttributeDefinitions=[{"AttributeName": "p", "AttributeType": "N"}],
        GlobalSecondaryIndexUpdates=[{"Create": create["Create"] | {"KeySchema": [
            {"AttributeName": "p", "KeyType": "HASH"}]}}]))
    assert code == "ValidationException" and "redefined" in text


def test_an_index_made_with_the_table_can_be_deleted_and_its_items_still_read(served):
    client = served.client()
    client.create_table(TableName="IndexedFirst", KeySchema=PARTITION_ONLY["KeySchema"], BillingMode="PAY_PER_REQUEST",
                        AttributeDefinitions=PARTITION_ONLY["AttributeDefinitions"] + CREATE_X["AttributeDefinitions"],
                        GlobalSecondaryIndexes=[CREATE_X["GlobalSecondaryIndexUpdates"][0]["Create"]])
    try:
        client.put_item(TableName="IndexedFirst", Item={"p": {"S": "a"}, "x": {"S": "kept"}})
        client.update_table(TableName="IndexedFirst", GlobalSecondaryIndexUpdates=[{"Delete": {"IndexName": "by-x"}}])
        assert client.scan(TableName="IndexedFirst")["Items"] == [{"p": {"S": "a"}, "x": {"S": "kept"}}]
        client.put_item(TableName="IndexedFirst", Item={"p": {"S": "b"}, "x": {"N": "7"}})
        assert client.get_item(TableName="IndexedFirst", Key={"p": {"S": "b"}})["Item"]["x"] == {"N": "7"}
    finally:
        client.delete_table(TableName="IndexedFirst")


def test_a_switch_to_provisioned_names_the_index_without_throughput(client):
    """With an index, a switch giving the table's throughput was refused saying the table's
    ReadCapacityUnits and WriteCapacityUnits 'must both be specified', though both were."""
    client.update_table(TableName=TABLE, **CREATE_X)
    throughput = {"ReadCapacityUnits": 5, "WriteCapacityUnits": 6}
    assert error_of(lambda: client.update_table(TableName=TABLE, BillingMode="PROVISIONED",
                                              ProvisionedThroughput=throughput)) == (
        "ValidationException", "One or more parameter values were invalid: ProvisionedThroughput is not specified "
        "for index: by-x")
    client.update_table(TableName=TABLE, BillingMode="PROVISIONED", ProvisionedThroughput=throughput,
                        GlobalSecondaryIndexUpdates=[{"Update": {"IndexName": "by-x",
                                                                 "ProvisionedThroughput": throughput}}])
    index, = client.describe_table(TableName=TABLE)["Table"]["GlobalSecondaryIndexes"]
    assert index["ProvisionedThroughput"]["ReadCapacityUnits"] == 5
