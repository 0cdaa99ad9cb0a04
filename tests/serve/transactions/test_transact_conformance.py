"""TransactWriteItems and TransactGetItems across rows and tables, serve beside DynamoDB
Local: each case runs the same calls on both, from empty tables, and must get the same
answers (HTTP status, error code, CancellationReasons with their items, the items returned)
and leave the same items behind."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from botocore.exceptions import ClientError

from .conftest import TABLES, Side, empty

A, L = "TxAccounts", "TxLedger"


def acct(name: str) -> dict[str, Any]:
    return {"id": {"S": name}}


def entry(name: str, seq: int) -> dict[str, Any]:
    return {"account": {"S": name}, "seq": {"N": str(seq)}}


def put(table: str, item: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"Put": {"TableName": table, "Item": item, **extra}}


def update(table: str, key: dict[str, Any], expression: str, values: dict[str, Any] | None = None,
           condition: str | None = None, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"TableName": table, "Key": key, "UpdateExpression": expression, **extra}
    if values:
        body["ExpressionAttributeValues"] = values
    if condition:
        body["ConditionExpression"] = condition
    return {"Update": body}


def check(table: str, key: dict[str, Any], condition: str, values: dict[str, Any] | None = None,
          **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"TableName": table, "Key": key, "ConditionExpression": condition, **extra}
    if values:
        body["ExpressionAttributeValues"] = values
    return {"ConditionCheck": body}


def delete(table: str, key: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"Delete": {"TableName": table, "Key": key, **extra}}


def get(table: str, key: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"Get": {"TableName": table, "Key": key, **extra}}


def n(value: int) -> dict[str, str]:
    return {"N": str(value)}


SEED = [put(A, {**acct("alice"), "balance": n(100)}), put(A, {**acct("bob"), "balance": n(20)}),
        put(L, {**entry("alice", 1), "note": {"S": "opening"}})]


def transfer(src: str, dst: str, amount: int, seq: int, **extra: Any) -> list[dict[str, Any]]:
    return [update(A, acct(src), "SET balance = balance - :a", {":a": n(amount)}, "balance >= :a", **extra),
            update(A, acct(dst), "SET balance = balance + :a", {":a": n(amount)}),
            put(L, {**entry(src, seq), "amount": n(amount)}, ConditionExpression="attribute_not_exists(seq)")]


WRITES: dict[str, list[dict[str, Any]]] = {
    "puts in two tables": [put(A, {**acct("carol"), "balance": n(5)}), put(L, {**entry("carol", 1)})],
    "a transfer with its ledger entry": transfer("alice", "bob", 30, 2),
    "a transfer beyond the balance": transfer("bob", "alice", 50, 2),
    "a transfer whose ledger entry exists": transfer("alice", "bob", 10, 1),
    "a failed check with the old item asked": [
        check(A, acct("bob"), "balance > :x", {":x": n(1000)}, ReturnValuesOnConditionCheckFailure="ALL_OLD"),
        put(A, {**acct("dave"), "balance": n(1)})],
    "a failed check on a missing item with the old item asked": [
        check(A, acct("nobody"), "attribute_exists(id)", ReturnValuesOnConditionCheckFailure="ALL_OLD"),
        put(L, {**entry("x", 9)})],
    "two failed conditions": [check(A, acct("alice"), "balance < :x", {":x": n(0)}),
                              put(L, {**entry("z", 1)}),
                              delete(L, entry("alice", 1), ConditionExpression="attribute_not_exists(note)")],
    "checks that all hold write nothing": [check(A, acct("alice"), "attribute_exists(id)"),
                                          check(L, entry("alice", 1), "note = :o", {":o": {"S": "opening"}})],
    "a delete and an update creating an item": [delete(A, acct("bob")), update(A, acct("erin"), "SET balance = :b",
                                                                                {":b": n(7)})],
    "a delete of a missing item": [delete(A, acct("ghost")), put(L, {**entry("ghost", 1)})],
    "an update adding to a missing attribute": [update(A, acct("alice"), "ADD visits :one", {":one": n(1)}),
                                                update(L, entry("alice", 1), "REMOVE note")],
    "one item twice": [put(A, {**acct("alice")}), delete(A, acct("alice"))],
    "one item twice, a check and an update": [check(A, acct("bob"), "attribute_exists(id)"),
                                             update(A, acct("bob"), "SET x = :x", {":x": n(1)})],
    "101 actions": [put(L, {**entry("many", i)}) for i in range(101)],
    "100 actions": [put(L, {**entry("many", i)}) for i in range(100)],
    "a missing table": [put("TxNoSuchTable", acct("a")), put(A, acct("b"))],
    "an item without its sort key": [put(L, {"account": {"S": "a"}}), put(A, acct("b"))],
    "an update of a key attribute": [update(A, acct("alice"), "SET id = :i", {":i": {"S": "x"}}),
                                     put(L, entry("q", 1))],
    "a wrongly typed key": [put(A, {"id": n(1)}), put(L, entry("q", 1))],
    "an item over 400 KB": [put(A, {**acct("big"), "blob": {"S": "x" * 410_000}}), put(L, entry("q", 1))],
    "capacity counted twice": [put(A, {**acct("cap"), "balance": n(1)}), put(L, entry("cap", 1)),
                               check(A, acct("alice"), "attribute_exists(id)")],
    "a condition with a syntax error": [put(L, entry("s", 1)), put(A, acct("s"), ConditionExpression="id === :a",
                                                                     ExpressionAttributeValues={":a": n(1)})],
    "a condition naming an undefined value": [put(A, acct("u"), ConditionExpression="id = :b"), put(L, entry("u", 1))],
    "a value no expression uses": [put(A, acct("v"), ExpressionAttributeValues={":a": n(1)}), put(L, entry("v", 1))],
    "a name no expression uses": [check(A, acct("alice"), "attribute_exists(id)", ExpressionAttributeNames={"#n": "x"})],
    "one item twice before a missing table": [put(A, acct("d")), put(A, acct("d")), put("TxNoSuchTable", acct("d"))],
    "a table name DynamoDB cannot hold": [put("ab", acct("d")), put(L, entry("d", 1))],
    # an update that cannot apply to the item as it is: the whole request is refused, not cancelled
    "an ADD to a string": [put(L, entry("t", 1)), update(A, acct("alice"), "ADD note :one", {":one": n(1)}),
                           update(L, entry("alice", 1), "ADD note :one", {":one": n(1)})],
    "arithmetic on a string after a failed condition": [
        check(A, acct("alice"), "attribute_not_exists(id)"),
        update(L, entry("alice", 1), "SET note = note + :one", {":one": n(1)})],
    "arithmetic on a missing attribute": [update(A, acct("bob"), "SET gone = gone + :one", {":one": n(1)}),
                                          put(L, entry("t", 2))],
    "an update past 400 KB": [put(L, entry("t", 3)), update(A, acct("alice"), "SET blob = :b",
                                                            {":b": {"S": "x" * 410_000}})],
    "an update of a key attribute after a failed condition": [
        check(A, acct("alice"), "attribute_not_exists(id)"), update(A, acct("bob"), "SET id = :i", {":i": {"S": "x"}})],
    "an ADD to a string after an update of a key attribute": [
        update(A, acct("bob"), "SET id = :i", {":i": {"S": "x"}}),
        update(L, entry("alice", 1), "ADD note :one", {":one": n(1)})],
    # keys that do not fit the table
    "a key over 2048 bytes": [put(L, entry("t", 4)), delete(A, {"id": {"S": "k" * 2049}})],
    "a key without its sort key in a delete": [delete(L, {"account": {"S": "alice"}}), put(A, acct("t"))],
    "a key of a type no key has": [put(A, {"id": {"NULL": True}}), put(L, entry("t", 5))],
    "an index key of the wrong type before a failed condition": [
        put("TxIndexed", {"id": {"S": "i"}, "tag": n(1)}), put(L, entry("t", 6)),
        check(A, acct("alice"), "attribute_not_exists(id)")],
    # what DynamoDB Local reads of every action before it looks up a table: an update's grammar and
    # placeholders, a condition, an item's size (a reserved word is met at the item)
    "an update's syntax error after a missing table": [put("TxNoSuchTable", acct("a")),
                                                      update(A, acct("alice"), "SET x = = :a", {":a": n(1)})],
    "an update's undefined value after a missing table": [put("TxNoSuchTable", acct("a")),
                                                         update(A, acct("alice"), "SET x = :a, y = :b", {":a": n(1)})],
    "an update's undefined name before an undefined value": [put("TxNoSuchTable", acct("a")),
                                                            update(A, acct("alice"), "SET x = :b, m.#q = :a",
                                                                   {":a": n(1)})],
    "an update's syntax error after an update of a key attribute": [
        update(A, acct("bob"), "SET id = :i", {":i": {"S": "x"}}),
        update(L, entry("alice", 1), "SET x = = :a", {":a": n(1)})],
    "an update's syntax error before an item over 400 KB": [
        update(L, entry("alice", 1), "SET x = = :a", {":a": n(1)}),
        put(A, {**acct("big"), "blob": {"S": "x" * 410_000}})],
    "a reserved word in an update after a missing table": [put("TxNoSuchTable", acct("a")),
                                                          update(A, acct("alice"), "SET size = :a", {":a": n(1)})],
    "a condition's syntax error after a missing table": [
        put("TxNoSuchTable", acct("a")), put(A, acct("s"), ConditionExpression="id === :a",
                                             ExpressionAttributeValues={":a": n(1)})],
    "an item over 400 KB after a missing table": [put("TxNoSuchTable", acct("a")),
                                                 put(A, {**acct("big"), "blob": {"S": "x" * 410_000}})],
    # a key that does not fit its table is its action's reason, decided with the others' at the items
    "a wrongly typed key before an ADD to a string": [put(A, {"id": n(1)}),
                                                      update(L, entry("alice", 1), "ADD note :one", {":one": n(1)})],
    "a wrongly typed key before an update of a key attribute": [
        put(A, {"id": n(1)}), update(A, acct("bob"), "SET id = :i", {":i": {"S": "x"}})],
    "a wrongly typed key before a failed condition": [put(A, {"id": n(1)}),
                                                      check(A, acct("alice"), "attribute_not_exists(id)")],
    "two wrongly typed keys": [put(A, {"id": n(1)}), delete(A, {"id": n(2)})],
}
# cases whose error message must also be DynamoDB Local's
WORDED = {"an update's syntax error after a missing table", "an update's undefined value after a missing table",
          "an update's undefined name before an undefined value",
          "an update's syntax error after an update of a key attribute", "an update's syntax error before an item over 400 KB",
          "a wrongly typed key before an update of a key attribute", "two wrongly typed keys",
          "an ADD to a string", "arithmetic on a missing attribute", "an update past 400 KB",
          "an update of a key attribute after a failed condition", "a key over 2048 bytes",
          "a key without its sort key in a delete", "a key of a type no key has", "a wrongly typed key",
          "a wrongly typed sort key", "a key without its sort key", "a key with an extra attribute",
          "a wrongly typed key before one item twice", "an item without its sort key", "an update of a key attribute"}


def outcome(call: Callable[[], dict[str, Any]], worded: bool = False) -> dict[str, Any]:
    """What the caller sees: status and answer, or status, code and CancellationReasons (their
    messages and the error's own too if `worded`)."""
    try:
        answer = call()
    except ClientError as error:
        response = error.response
        reasons = [{k: v for k, v in r.items() if worded or k != "Message"}
                   for r in response.get("CancellationReasons", [])]
        return {"status": response["ResponseMetadata"]["HTTPStatusCode"], "code": response["Error"]["Code"],
                "reasons": reasons, **({"message": response["Error"]["Message"]} if worded else {})}
    answer.pop("ResponseMetadata", None)
    if "ConsumedCapacity" in answer:  # one entry per table, in no order that means anything
        answer["ConsumedCapacity"].sort(key=lambda c: c["TableName"])
    return {"status": 200, "answer": answer}


def contents(side: Side) -> dict[str, list[Any]]:
    return {name: sorted(side.client.scan(TableName=name, ConsistentRead=True)["Items"],
                         key=lambda item: json.dumps(item, sort_keys=True)) for name in TABLES}


def run_writes(side: Side, actions: list[dict[str, Any]], worded: bool = False) -> dict[str, Any]:
    empty(side)
    side.client.transact_write_items(TransactItems=SEED)
    capacity = {"ReturnConsumedCapacity": "TOTAL"} if "capacity" in repr(actions) else {}
    answer = outcome(lambda: side.client.transact_write_items(TransactItems=actions, **capacity), worded)
    return {"answer": answer, "after": contents(side)}


@pytest.mark.slow
@pytest.mark.parametrize("case", list(WRITES))
def test_transact_write_items_answers_as_dynamodb_local(sides: list[Side], case: str) -> None:
    serve, oracle = (run_writes(side, WRITES[case], case in WORDED) for side in sides)
    assert serve == oracle


GETS: dict[str, list[dict[str, Any]]] = {
    "items of two tables and a missing one": [get(A, acct("alice")), get(L, entry("alice", 1)), get(A, acct("zed"))],
    "a projection": [get(A, acct("bob"), ProjectionExpression="balance"), get(L, entry("alice", 1))],
    "one item twice": [get(A, acct("bob")), get(A, acct("bob"))],
    "101 gets": [get(L, entry("alice", i)) for i in range(101)],
    "capacity counted twice": [get(A, acct("alice")), get(L, entry("alice", 1))],
    "one item twice before a missing table": [get(A, acct("bob")), get(A, acct("bob")), get("TxNoSuchTable", acct("a"))],
    "a missing table before one item twice": [get("TxNoSuchTable", acct("a")), get(A, acct("bob")), get(A, acct("bob"))],
    "a name no expression uses": [get(A, acct("bob"), ExpressionAttributeNames={"#n": "x"})],
    "a table name DynamoDB cannot hold": [get("ab", acct("bob"))],
    "a wrongly typed key": [get(A, acct("alice")), get(A, {"id": n(1)}), get("TxNoSuchTable", acct("a"))],
    "a wrongly typed sort key": [get(L, {"account": {"S": "alice"}, "seq": {"S": "1"}})],
    "a key without its sort key": [get(L, {"account": {"S": "alice"}}), get(A, acct("alice"))],
    "a key with an extra attribute": [get(A, {**acct("alice"), "balance": n(100)})],
    "a wrongly typed key before one item twice": [get(A, {"id": {"B": b"x"}}), get(A, acct("bob")),
                                                  get(A, acct("bob"))],
    "a key over 2048 bytes": [get(A, {"id": {"S": "k" * 2049}}), get(A, {"id": n(1)})],
    "a key of a type no key has": [get(A, {"id": {"L": []}}), get("TxNoSuchTable", acct("a"))],
}


@pytest.mark.slow
@pytest.mark.parametrize("case", list(GETS))
def test_transact_get_items_answers_as_dynamodb_local(sides: list[Side], case: str) -> None:
    def answers(side: Side) -> dict[str, Any]:
        empty(side)
        side.client.transact_write_items(TransactItems=SEED)
        capacity = {"ReturnConsumedCapacity": "TOTAL"} if case.startswith("capacity") else {}
        return outcome(lambda: side.client.transact_get_items(TransactItems=GETS[case], **capacity), case in WORDED)
    serve, oracle = (answers(side) for side in sides)
    assert serve == oracle


@pytest.mark.slow
def test_a_client_request_token_applies_a_retry_once_and_refuses_another_request(sides: list[Side]) -> None:
    def answers(side: Side) -> list[Any]:
        empty(side)
        side.client.transact_write_items(TransactItems=SEED)
        pay = [update(A, acct("alice"), "SET balance = balance - :a", {":a": n(10)}), put(L, entry("alice", 5))]
        first, again = (outcome(lambda: side.client.transact_write_items(TransactItems=pay,
                                                                          ClientRequestToken="pay-5"))
                        for _ in range(2))
        other = outcome(lambda: side.client.transact_write_items(TransactItems=pay[:1], ClientRequestToken="pay-5"))
        return [first, again, other, contents(side)]
    serve, oracle = (answers(side) for side in sides)
    assert serve == oracle
    assert [i["balance"] for i in serve[3][A] if i["id"] == {"S": "alice"}] == [n(90)]  # applied once


@pytest.mark.slow
def test_a_client_request_token_is_found_whatever_items_the_other_request_names(sides: list[Side]) -> None:
    """The token alone decides: another request under it naming none of the first's items is a
    mismatch, and a retry after the items were deleted (a read-check-write DeleteItem, which
    deletes the whole row) is answered from the token's record, not applied again."""
    def answers(side: Side) -> list[Any]:
        empty(side)
        side.client.transact_write_items(TransactItems=SEED)
        pay = [update(A, acct("alice"), "SET balance = balance - :a", {":a": n(10)}), put(L, entry("alice", 6))]
        first = outcome(lambda: side.client.transact_write_items(TransactItems=pay, ClientRequestToken="pay-6"))
        other = outcome(lambda: side.client.transact_write_items(TransactItems=[put(L, entry("bob", 7))],
                                                                 ClientRequestToken="pay-6"))
        for key in (acct("alice"), entry("alice", 6)):
            side.client.delete_item(TableName=A if "id" in key else L, Key=key,
                                    ConditionExpression="attribute_exists(#k)",
                                    ExpressionAttributeNames={"#k": next(iter(key))})
        again = outcome(lambda: side.client.transact_write_items(TransactItems=pay, ClientRequestToken="pay-6"))
        return [first, other, again, contents(side)]
    serve, oracle = (answers(side) for side in sides)
    assert serve == oracle
    assert serve[1]["code"] == "IdempotentParameterMismatchException"
    assert not [i for i in serve[3][A] if i["id"] == {"S": "alice"}]  # the retry applied nothing
