"""What a transaction or batch answers besides its writes, as DynamoDB answers it: a
cancelled action's old item when it asked for it; one item named twice, or a table given
an empty list, refused."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

from ..client_calls import PARTITION_AND_SORT, created_table

TABLE = "TransactAnswers"
KEY = {"p": {"S": "a"}, "c": {"N": "1"}}


@pytest.fixture()
def client(served):
    with created_table(served, TABLE, PARTITION_AND_SORT) as client:
        client.put_item(TableName=TABLE, Item={**KEY, "v": {"S": "old"}})
        yield client


def test_a_cancelled_action_gives_back_its_old_item_when_asked(client):
    update = {"TableName": TABLE, "Key": KEY, "UpdateExpression": "SET v = :v", "ConditionExpression": "v = :w",
              "ExpressionAttributeValues": {":v": {"S": "new"}, ":w": {"S": "other"}}}
    for asked, item in (("ALL_OLD", {**KEY, "v": {"S": "old"}}), ("NONE", None)):
        with pytest.raises(ClientError) as caught:
            client.transact_write_items(TransactItems=[{"Update": {**update,
                                                                   "ReturnValuesOnConditionCheckFailure": asked}}])
        reason, = caught.value.response["CancellationReasons"]
        assert reason["Code"] == "ConditionalCheckFailed" and reason.get("Item") == item


def test_transact_get_items_naming_one_item_twice_is_refused(client):
    with pytest.raises(ClientError, match="Transaction request cannot include multiple operations on one item"):
        client.transact_get_items(TransactItems=[{"Get": {"TableName": TABLE, "Key": KEY}}] * 2)


def test_a_batch_with_an_empty_list_for_a_table_is_refused(client, served):
    """Both answered as if done, with nothing read or written, where DynamoDB refuses them."""
    client = served.client(parameter_validation=False)  # boto3 refuses them before sending
    with pytest.raises(ClientError, match=f"cannot be null or empty: {TABLE}"):
        client.batch_write_item(RequestItems={TABLE: []})
    with pytest.raises(ClientError, match=f"BatchGetItem is required: {TABLE} has empty list"):
        client.batch_get_item(RequestItems={TABLE: {"Keys": []}})
