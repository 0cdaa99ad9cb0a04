"""Numbers are exact to DynamoDB's 38 significant digits, side by side with DynamoDB Local
1.25.1, through boto3 (docs/serve.md, "Numbers"): an UpdateExpression's `+`, `-` and ADD
keep a result that fits to its last digit (moto's arithmetic, which both the direct path
and moto's executor use, ran in Python's default decimal context of 28 digits and rounded
it silently) and refuse one that does not, the item unchanged; a number written with more
digits than normalising keeps (wire.EXACT's 76) is refused, not rounded to fit. Numbers are
compared as values: DynamoDB Local keeps a number as written (`1.50`), serve DynamoDB's
normalised form."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from .conftest import Served

ORACLE_TABLE = "ExactArithmetic"
DECIMALS = "1234567890.1234567890123456789012345678"  # 38 significant digits
SMALL = "0.1234567890123456789012345678901234567"
CASES = [  # (the item's attributes, UpdateExpression, values)
    ({"n": {"N": DECIMALS}}, "SET n = n + :d", {":d": {"N": "1"}}),  # the direct path
    ({"n": {"N": DECIMALS}}, "SET n = :d - n", {":d": {"N": "1"}}),
    ({"n": {"N": SMALL}}, "ADD n :d", {":d": {"N": "1E-37"}}),
    ({"m": {"M": {"a": {"N": DECIMALS}}}}, "SET m.a = m.a + :d", {":d": {"N": "0.5"}}),  # moto's executor
    ({"n": {"N": "1"}}, "SET n = n + :d", {":d": {"N": "1E-130"}}),  # 131 digits: refused
    ({"n": {"N": "9" * 38}}, "ADD n :d", {":d": {"N": "0.1"}}),  # 39 digits: refused
]


def _oracle(dynamodb_oracle: Any) -> Any:
    import boto3

    db = boto3.client("dynamodb", endpoint_url=dynamodb_oracle.endpoint, region_name="us-west-2",
                      aws_access_key_id="local", aws_secret_access_key="local",
                      config=Config(retries={"max_attempts": 1, "mode": "standard"}))
    if ORACLE_TABLE not in db.list_tables()["TableNames"]:
        db.create_table(TableName=ORACLE_TABLE, BillingMode="PAY_PER_REQUEST",
                        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
                        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                                              {"AttributeName": "sk", "AttributeType": "N"}])
    return db


def _values(value: Any) -> Any:
    """Numbers as Decimals, the rest as given."""
    if isinstance(value, dict):
        return {k: Decimal(v) if k == "N" else _values(v) for k, v in value.items()}
    return value


def _answer(db: Any, table: str, n: int, case: tuple[dict[str, Any], str, dict[str, Any]]) -> Any:
    attributes, expression, values = case
    key = {"pk": {"S": f"exact-{n}"}, "sk": {"N": "1"}}
    db.put_item(TableName=table, Item=key | attributes)
    try:
        answer: Any = db.update_item(TableName=table, Key=key, UpdateExpression=expression,
                                     ExpressionAttributeValues=values, ReturnValues="ALL_NEW")["Attributes"]
    except ClientError as error:
        answer = error.response["Error"]["Code"]
    return _values(answer), _values(db.get_item(TableName=table, Key=key, ConsistentRead=True)["Item"])


@pytest.mark.parametrize("n", range(len(CASES)))
def test_number_arithmetic_is_exact_to_38_digits_as_dynamodb_locals(served: Served, dynamodb_oracle, n) -> None:
    mine = _answer(served.client(), "Scratch", n, CASES[n])
    theirs = _answer(_oracle(dynamodb_oracle), ORACLE_TABLE, n, CASES[n])
    assert mine == theirs


def _put(db: Any, table: str, number: str) -> Any:
    key = {"pk": {"S": "exact-put"}, "sk": {"N": "1"}}
    db.put_item(TableName=table, Item=key | {"n": {"N": "1"}})
    try:
        db.put_item(TableName=table, Item=key | {"n": {"N": number}})
    except ClientError as error:
        return error.response["Error"]["Code"], _values(db.get_item(TableName=table, Key=key)["Item"])
    return "written", _values(db.get_item(TableName=table, Key=key)["Item"])


@pytest.mark.parametrize("number", ["1." + "0" * 90 + "1", "9" * 38 + "." + "0" * 60 + "1"])
def test_a_number_of_too_many_digits_is_refused_not_rounded(served: Served, dynamodb_oracle, number) -> None:
    mine = _put(served.client(), "Scratch", number)
    assert mine == _put(_oracle(dynamodb_oracle), ORACLE_TABLE, number)
    assert mine[0] == "ValidationException"  # before: written as 1, and as 38 nines
