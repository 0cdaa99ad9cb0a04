"""An expression refused names the parameter it came in, as DynamoDB names it: moto's
redundant-parentheses check said ConditionExpression for a FilterExpression or a
KeyConditionExpression too."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

QUERY = {"TableName": "Movies", "ExpressionAttributeNames": {"#y": "year"},
         "ExpressionAttributeValues": {":y": {"N": "2013"}}}


@pytest.mark.parametrize(("field", "extra"), [
    ("KeyConditionExpression", {"KeyConditionExpression": "((#y = :y))"}),
    ("FilterExpression", {"KeyConditionExpression": "#y = :y", "FilterExpression": "((attribute_exists(title)))"}),
])
def test_redundant_parentheses_name_their_field(served, field, extra):
    with pytest.raises(ClientError) as caught:
        served.client().query(**QUERY, **extra)
    assert caught.value.response["Error"]["Message"] == f"Invalid {field}: The expression has redundant parentheses;"


def test_an_empty_or_too_long_attribute_name_is_refused(served):
    """Both were taken: an UpdateExpression wrote an attribute named "" that reads never gave
    back, and a PutItem's "" attribute was dropped without a word."""
    client = served.client()
    key = {"pk": {"S": "h9-names"}, "sk": {"N": "1"}}
    for name, message in (("", "Empty attribute name for key #n"),
                          ("é" * 32768, "Attribute name is too large, must be less than 65536 bytes for key #n")):
        with pytest.raises(ClientError, match=message):
            client.update_item(TableName="Scratch", Key=key, UpdateExpression="SET #n = :v",
                               ExpressionAttributeNames={"#n": name}, ExpressionAttributeValues={":v": {"N": "1"}})
    with pytest.raises(ClientError, match="Empty attribute name"):
        client.put_item(TableName="Scratch", Item={**key, "": {"N": "1"}})
    assert "Item" not in client.get_item(TableName="Scratch", Key=key)
