"""UpdateTimeToLive and DescribeTimeToLive: a created table's TTL kept in the registry and
its expired items hidden from every read; a spec table's TTL is its spec's."""

from __future__ import annotations

import dataclasses
import time

import pytest

from ddb2bigtable.bigtable.emulator import stop_process
from ddb2bigtable.serve.tables.created_tables import REFRESH_SECONDS

from ..client_calls import PARTITION_AND_SORT, created_table, error_of
from ..conftest import STAGE, start_serve

TABLE = "TtlOrders"


@pytest.fixture()
def client(served):
    with created_table(served, TABLE, PARTITION_AND_SORT) as client:
        yield client


def _ttl(client, attribute: str, enabled: bool):
    return client.update_time_to_live(TableName=TABLE, TimeToLiveSpecification={"AttributeName": attribute,
                                                                                 "Enabled": enabled})


def test_ttl_on_a_created_table_hides_expired_items_until_disabled(client):
    now = int(time.time())
    past, future = {"N": str(now - 3600)}, {"N": str(now + 3600)}
    for c, expires in ((1, past), (2, future), (3, {"S": "not a time"})):
        client.put_item(TableName=TABLE, Item={"p": {"S": "a"}, "c": {"N": str(c)}, "expires": expires})
    assert client.describe_time_to_live(TableName=TABLE)["TimeToLiveDescription"] == {"TimeToLiveStatus": "DISABLED"}
    answer = _ttl(client, "expires", True)
    assert answer["TimeToLiveSpecification"] == {"AttributeName": "expires", "Enabled": True}
    assert client.describe_time_to_live(TableName=TABLE)["TimeToLiveDescription"] == {
        "TimeToLiveStatus": "ENABLED", "AttributeName": "expires"}
    query = {"TableName": TABLE, "KeyConditionExpression": "p = :p", "ExpressionAttributeValues": {":p": {"S": "a"}}}
    assert [i["c"]["N"] for i in client.query(**query)["Items"]] == ["2", "3"]  # the past one is gone
    assert "Item" not in client.get_item(TableName=TABLE, Key={"p": {"S": "a"}, "c": {"N": "1"}}, ConsistentRead=True)
    assert client.scan(TableName=TABLE)["Count"] == 2
    # a conditional create sees no item where an expired one is
    client.put_item(TableName=TABLE, Item={"p": {"S": "a"}, "c": {"N": "4"}, "expires": past})
    client.put_item(TableName=TABLE, Item={"p": {"S": "a"}, "c": {"N": "4"}}, ConditionExpression="attribute_not_exists(p)")
    assert error_of(lambda: _ttl(client, "expires", True)) == ("ValidationException", "TimeToLive is already enabled")
    assert error_of(lambda: _ttl(client, "other", True))[1] == "TimeToLive is active on a different AttributeName"
    assert error_of(lambda: _ttl(client, "other", False))[1] == "TimeToLive is active on a different AttributeName"
    _ttl(client, "expires", False)
    assert client.describe_time_to_live(TableName=TABLE)["TimeToLiveDescription"] == {"TimeToLiveStatus": "DISABLED"}
    shown = client.query(**query)["Items"]
    assert [i["c"]["N"] for i in shown] == ["1", "2", "3", "4"]  # nothing was deleted
    assert shown[3] == {"p": {"S": "a"}, "c": {"N": "4"}}  # the put replaced the expired item whole
    assert error_of(lambda: _ttl(client, "expires", False))[1] == "TimeToLive is already disabled"


def test_update_time_to_live_checks_its_request(served, client):
    code, message = error_of(lambda: _ttl(client, "x" * 256, True))
    assert code == "ValidationException" and "length less than or equal to 255" in message
    unchecked = served.client(parameter_validation=False)  # what boto3 would refuse before sending
    code, message = error_of(lambda: unchecked.update_time_to_live(TableName=TABLE, TimeToLiveSpecification={
        "AttributeName": "expires"}))
    assert code == "ValidationException" and "enabled" in message
    code, _ = error_of(lambda: unchecked.update_time_to_live(TableName=TABLE, TimeToLiveSpecification={
        "AttributeName": "expires", "Enabled": "dog"}))
    assert code == "SerializationException"
    code, _ = error_of(lambda: client.update_time_to_live(TableName="NoSuchTable", TimeToLiveSpecification={
        "AttributeName": "expires", "Enabled": True}))
    assert code == "ResourceNotFoundException"


def test_a_spec_tables_ttl_is_its_specs(served):
    client = served.client()
    assert client.describe_time_to_live(TableName="Scratch")["TimeToLiveDescription"] == {
        "TimeToLiveStatus": "ENABLED", "AttributeName": "expiresAt"}
    code, message = error_of(lambda: client.update_time_to_live(TableName="Scratch", TimeToLiveSpecification={
        "AttributeName": "expiresAt", "Enabled": False}))
    assert code == "ValidationException" and "spec owns its TTL" in message


def test_another_serve_sees_the_ttl_within_a_second(served, client):
    """A second serve on the same emulator (another worker: only the instance is shared)
    hides the expired items once its copy of the table is older than REFRESH_SECONDS."""
    process, endpoint = start_serve(served.root, STAGE)
    try:
        second = dataclasses.replace(served, endpoint=endpoint, process=process).client()
        key = {"p": {"S": "w"}, "c": {"N": "1"}}
        client.put_item(TableName=TABLE, Item=key | {"expires": {"N": str(int(time.time()) - 60)}})
        assert "Item" in second.get_item(TableName=TABLE, Key=key)  # the second worker now holds the table
        _ttl(client, "expires", True)
        time.sleep(REFRESH_SECONDS)
        assert "Item" not in second.get_item(TableName=TABLE, Key=key)
        assert second.describe_time_to_live(TableName=TABLE)["TimeToLiveDescription"]["AttributeName"] == "expires"
    finally:
        stop_process(process)
