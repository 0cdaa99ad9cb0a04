"""TransactGetItems' 4 MB of items read, serve beside DynamoDB Local 1.25.1 (issue 50,
finding 8: serve answered 10 MB where DynamoDB refuses past 4 MB)."""

from __future__ import annotations

from typing import Any

from botocore.exceptions import ClientError

from .conftest import Side, empty

BIG = "x" * 390_000  # ten such items are 3.9 MB, eleven 4.29 MB


def _gets(side: Side, count: int) -> dict[str, Any]:
    try:
        answer = side.client.transact_get_items(TransactItems=[{"Get": {"TableName": "TxAccounts",
                                                                        "Key": {"id": {"S": f"big-{n}"}}}}
                                                               for n in range(count)])
    except ClientError as error:
        return {"code": error.response["Error"]["Code"], "status": error.response["ResponseMetadata"]["HTTPStatusCode"],
                "words": error.response["Error"]["Message"].rstrip("0123456789")}  # DynamoDB Local adds its count
    return {"items": len([r for r in answer["Responses"] if "Item" in r])}


def test_transact_get_items_refuses_past_4_mb_of_items_as_dynamodb_local(sides: list[Side]) -> None:
    answers = []
    for side in sides:
        empty(side)
        for n in range(11):
            side.client.put_item(TableName="TxAccounts", Item={"id": {"S": f"big-{n}"}, "v": {"S": BIG}})
        answers.append([_gets(side, 10), _gets(side, 11)])
        empty(side)
    serve, oracle = answers
    assert oracle == [{"items": 10}, {"code": "ValidationException", "status": 400,
                                      "words": "Payload in response is too large."}]
    assert serve == oracle
