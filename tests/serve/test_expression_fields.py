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
