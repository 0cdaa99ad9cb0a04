"""Key conditions parsed once per shape (serve/expressions/parsed_keys.py): a later request of the same
shape gets its own values, and the checks that read values, as on its first request."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

from ddb2bigtable.serve.errors import ServeError
from ddb2bigtable.serve.expressions import parsed_keys
from ddb2bigtable.serve.expressions import parsing as expressions

KEYS = ("pk", "sk")
BETWEEN = "pk = :p AND sk BETWEEN :a AND :b"


def both(expression: str, values: dict, names: dict | None = None):
    """(the shape's answer, a full parse's answer): equal, or the same error."""
    answers = []
    for parse in (parsed_keys.key_condition, expressions.key_condition):
        try:
            answers.append(parse(expression, names, values, KEYS))
        except ServeError as error:
            answers.append((error.name, error.message))
    return answers


@pytest.mark.parametrize("expression", ["pk = :p", "pk = :p AND sk > :a", "#k = :p AND begins_with(sk, :a)", BETWEEN,
                                        ":p = pk AND :a <= sk"])
def test_later_requests_of_a_shape_get_their_own_values(expression):
    names = {"#k": "pk"} if "#k" in expression else None
    for n in range(4):
        values = {":p": {"S": f"user-{n}"}, **({":a": {"S": f"{n:03d}"}} if ":a" in expression else {}),
                  **({":b": {"S": f"{n + 10:03d}"}} if ":b" in expression else {})}
        cached, parsed = both(expression, values, names)
        assert cached == parsed and cached.partition[1] == {"S": f"user-{n}"}


def test_between_bounds_out_of_order_are_refused_on_a_known_shape():
    both(BETWEEN, {":p": {"S": "x"}, ":a": {"N": "1"}, ":b": {"N": "2"}})  # the shape is now known
    cached, parsed = both(BETWEEN, {":p": {"S": "x"}, ":a": {"N": "3"}, ":b": {"N": "2"}})
    assert cached == parsed and "upper bound to be greater than or equal to lower bound" in cached[1]


def test_a_shape_whose_placeholders_held_equal_values_is_parsed_each_time():
    equal = {":p": {"S": "x"}, ":a": {"N": "5"}, ":b": {"N": "5"}}
    shape_count = len(parsed_keys._parses)
    both("pk = :p AND sk BETWEEN :a AND :b ", equal)
    assert len(parsed_keys._parses) == shape_count
    cached, parsed = both("pk = :p AND sk BETWEEN :a AND :b ", {":p": {"S": "x"}, ":a": {"N": "1"}, ":b": {"N": "9"}})
    assert cached == parsed and cached.sort[2] == [{"N": "1"}, {"N": "9"}]


def test_the_kept_shapes_are_bounded(monkeypatch):
    monkeypatch.setattr(parsed_keys, "KEY_CONDITIONS", 3)
    for n in range(10):
        parsed_keys.key_condition(f"pk = :p{n}", None, {f":p{n}": {"S": "x"}}, KEYS)
    assert len(parsed_keys._parses) == 3


def test_through_serve_each_query_of_one_shape_reads_its_own_partition(served):
    c = served.client()
    for year in (2013, 2012, 2013, 1800):
        found = c.query(TableName="Movies", KeyConditionExpression="#y = :y", ExpressionAttributeNames={"#y": "year"},
                        ExpressionAttributeValues={":y": {"N": str(year)}}, Limit=5)["Items"]
        assert {i["year"]["N"] for i in found} == ({str(year)} if year > 1800 else set())
    between = {"TableName": "Movies", "KeyConditionExpression": "#y = :y AND title BETWEEN :a AND :b",
               "ExpressionAttributeNames": {"#y": "year"}}
    assert c.query(**between, ExpressionAttributeValues={":y": {"N": "2013"}, ":a": {"S": "A"}, ":b": {"S": "C"}})
    with pytest.raises(ClientError, match="upper bound to be greater than or equal to lower bound"):
        c.query(**between, ExpressionAttributeValues={":y": {"N": "2013"}, ":a": {"S": "C"}, ":b": {"S": "A"}})


def test_an_empty_key_value_is_refused_on_a_known_shape_and_on_an_index(served):
    """`c > :e` with :e empty answered every item (and `p = :e` none) where DynamoDB refuses
    the request: no key holds an empty string."""
    c = served.client()
    c.create_table(TableName="EmptyKeys", BillingMode="PAY_PER_REQUEST",
                   KeySchema=[{"AttributeName": "p", "KeyType": "HASH"}, {"AttributeName": "c", "KeyType": "RANGE"}],
                   AttributeDefinitions=[{"AttributeName": n, "AttributeType": "S"} for n in ("p", "c", "g")],
                   GlobalSecondaryIndexes=[{"IndexName": "by-g", "Projection": {"ProjectionType": "ALL"},
                                            "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}]}])
    try:
        c.put_item(TableName="EmptyKeys", Item={"p": {"S": "a"}, "c": {"S": "x"}, "g": {"S": "a"}})
        after = {"TableName": "EmptyKeys", "KeyConditionExpression": "p = :a AND c > :e"}
        assert c.query(**after, ExpressionAttributeValues={":a": {"S": "a"}, ":e": {"S": "w"}})["Count"] == 1
        for values in ({":a": {"S": "a"}, ":e": {"S": ""}}, {":a": {"S": ""}, ":e": {"S": "w"}}):
            with pytest.raises(ClientError, match="cannot contain an empty string value. Key: "):
                c.query(**after, ExpressionAttributeValues=values)
        with pytest.raises(ClientError, match="empty string value. IndexName: by-g, IndexKey: g"):
            c.query(TableName="EmptyKeys", IndexName="by-g", KeyConditionExpression="g = :e",
                    ExpressionAttributeValues={":e": {"S": ""}})
    finally:
        c.delete_table(TableName="EmptyKeys")
