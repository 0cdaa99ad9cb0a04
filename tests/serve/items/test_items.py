"""GetItem, PutItem, DeleteItem and UpdateItem through `serve`, with a real boto3 client."""

from __future__ import annotations

import time

import pytest
from botocore.exceptions import ClientError

from ..client_calls import error_of

T = "Scratch"


def key(pk: str, sk: int = 1) -> dict:
    return {"pk": {"S": pk}, "sk": {"N": str(sk)}}


def test_put_then_get_returns_the_item_with_every_type(served):
    c = served.client()
    item = {**key("types"), "s": {"S": "héllo"}, "n": {"N": "1.50"}, "b": {"B": b"\x00\xff"},
            "t": {"BOOL": True}, "z": {"NULL": True}, "ss": {"SS": ["a", "b"]}, "ns": {"NS": ["1", "2.5"]},
            "bs": {"BS": [b"\x01", b"\x02"]}, "m": {"M": {"x": {"L": [{"N": "1"}, {"S": "y"}]}}}}
    c.put_item(TableName=T, Item=item)
    got = c.get_item(TableName=T, Key=key("types"))["Item"]
    assert got["n"] == {"N": "1.5"}  # DynamoDB normalises numbers the same way
    assert got["b"] == {"B": b"\x00\xff"} and set(got["bs"]["BS"]) == {b"\x01", b"\x02"}
    assert set(got["ss"]["SS"]) == {"a", "b"} and set(got["ns"]["NS"]) == {"1", "2.5"}
    assert {k: v for k, v in got.items() if k not in ("n", "ss", "ns", "bs")} == \
        {k: v for k, v in item.items() if k not in ("n", "ss", "ns", "bs")}
    assert "Item" not in c.get_item(TableName=T, Key=key("types", 2))


def test_put_replaces_the_whole_item_and_returns_the_old_one(served):
    c = served.client()
    c.put_item(TableName=T, Item={**key("replace"), "a": {"S": "1"}, "b": {"S": "2"}})
    old = c.put_item(TableName=T, Item={**key("replace"), "a": {"S": "3"}}, ReturnValues="ALL_OLD")["Attributes"]
    assert old == {**key("replace"), "a": {"S": "1"}, "b": {"S": "2"}}
    assert c.get_item(TableName=T, Key=key("replace"))["Item"] == {**key("replace"), "a": {"S": "3"}}


def test_a_failed_condition_writes_nothing_and_can_return_the_item(served):
    c = served.client()
    c.put_item(TableName=T, Item={**key("cond"), "v": {"N": "1"}})
    with pytest.raises(ClientError) as caught:
        c.put_item(TableName=T, Item={**key("cond"), "v": {"N": "2"}}, ConditionExpression="attribute_not_exists(pk)",
                   ReturnValuesOnConditionCheckFailure="ALL_OLD")
    assert caught.value.response["Error"]["Code"] == "ConditionalCheckFailedException"
    assert caught.value.response["Item"] == {**key("cond"), "v": {"N": "1"}}
    c.put_item(TableName=T, Item={**key("cond"), "v": {"N": "2"}}, ConditionExpression="v = :one",
               ExpressionAttributeValues={":one": {"N": "1"}})
    assert c.get_item(TableName=T, Key=key("cond"))["Item"]["v"] == {"N": "2"}


def test_delete_with_condition_and_return_values(served):
    c = served.client()
    c.put_item(TableName=T, Item={**key("del"), "state": {"S": "open"}})
    code, _ = error_of(c.delete_item, TableName=T, Key=key("del"), ConditionExpression="#s = :c",
                       ExpressionAttributeNames={"#s": "state"}, ExpressionAttributeValues={":c": {"S": "closed"}})
    assert code == "ConditionalCheckFailedException"
    old = c.delete_item(TableName=T, Key=key("del"), ReturnValues="ALL_OLD")["Attributes"]
    assert old["state"] == {"S": "open"}
    assert "Item" not in c.get_item(TableName=T, Key=key("del"), ConsistentRead=True)
    assert "Attributes" not in c.delete_item(TableName=T, Key=key("del"), ReturnValues="ALL_OLD")


def test_update_set_remove_add_delete_and_return_values(served):
    c = served.client()
    c.put_item(TableName=T, Item={**key("upd"), "gone": {"S": "x"}, "tags": {"SS": ["a", "b"]},
                                  "doc": {"M": {"n": {"N": "1"}}}})
    out = c.update_item(TableName=T, Key=key("upd"),
                        UpdateExpression="SET doc.n = doc.n + :one, #l = list_append(if_not_exists(#l, :e), :l) "
                                         "REMOVE gone ADD visits :one DELETE tags :a",
                        ExpressionAttributeNames={"#l": "log"},
                        ExpressionAttributeValues={":one": {"N": "1"}, ":e": {"L": []}, ":l": {"L": [{"S": "v"}]},
                                                   ":a": {"SS": ["a"]}},
                        ReturnValues="ALL_NEW")["Attributes"]
    assert out == {**key("upd"), "tags": {"SS": ["b"]}, "doc": {"M": {"n": {"N": "2"}}}, "log": {"L": [{"S": "v"}]},
                   "visits": {"N": "1"}}
    assert c.get_item(TableName=T, Key=key("upd"))["Item"] == out
    updated = c.update_item(TableName=T, Key=key("upd"), UpdateExpression="ADD visits :one",
                            ExpressionAttributeValues={":one": {"N": "1"}}, ReturnValues="UPDATED_OLD")
    assert updated["Attributes"] == {"visits": {"N": "1"}}


def test_update_creates_a_missing_item_unless_the_condition_says_no(served):
    c = served.client()
    c.update_item(TableName=T, Key=key("new"), UpdateExpression="SET a = :a", ExpressionAttributeValues={":a": {"S": "1"}})
    assert c.get_item(TableName=T, Key=key("new"))["Item"] == {**key("new"), "a": {"S": "1"}}
    code, _ = error_of(c.update_item, TableName=T, Key=key("new2"), UpdateExpression="SET a = :a",
                       ConditionExpression="attribute_exists(pk)", ExpressionAttributeValues={":a": {"S": "1"}})
    assert code == "ConditionalCheckFailedException"
    assert "Item" not in c.get_item(TableName=T, Key=key("new2"))


def test_a_counter_attribute_adds_as_an_int64_cell(served):
    """ADD on a counter with nothing returned is AddToCell in its aggregate family (no read):
    additions from concurrent clients all count and the item's other attributes stay; with
    ReturnValues it is a read-check-write on the same cell."""
    from concurrent.futures import ThreadPoolExecutor

    c = served.client()
    c.put_item(TableName=T, Item={**key("counter"), "name": {"S": "page"}, "hits": {"N": "100"}})

    def add(_: int) -> None:
        mine = served.client()
        for _ in range(10):
            mine.update_item(TableName=T, Key=key("counter"), UpdateExpression="ADD #h :n",
                             ExpressionAttributeNames={"#h": "hits"}, ExpressionAttributeValues={":n": {"N": "5"}})

    with ThreadPoolExecutor(6) as pool:
        list(pool.map(add, range(6)))
    assert c.get_item(TableName=T, Key=key("counter"))["Item"] == {**key("counter"), "name": {"S": "page"},
                                                                   "hits": {"N": "400"}}
    out = c.update_item(TableName=T, Key=key("counter"), UpdateExpression="ADD hits :n",
                        ExpressionAttributeValues={":n": {"N": "-1"}}, ReturnValues="UPDATED_NEW")
    assert out["Attributes"] == {"hits": {"N": "399"}}
    c.update_item(TableName=T, Key=key("fresh-counter"), UpdateExpression="ADD hits :n",
                  ExpressionAttributeValues={":n": {"N": "7"}})
    assert c.get_item(TableName=T, Key=key("fresh-counter"))["Item"] == {**key("fresh-counter"), "hits": {"N": "7"}}
    code, message = error_of(c.update_item, TableName=T, Key=key("counter"), UpdateExpression="SET hits = :x",
                             ExpressionAttributeValues={":x": {"N": "1.5"}})
    assert code == "ValidationException" and "int64" in message


def test_concurrent_conditional_writes_are_atomic(served):
    """Eight clients add 1 to one attribute 10 times each: no update is lost (each is a
    read-check-write guarded by CheckAndMutateRow), and exactly one of eight conditional
    creates wins."""
    from concurrent.futures import ThreadPoolExecutor

    def add(_: int) -> None:
        c = served.client(retries={"max_attempts": 20, "mode": "standard"})
        for _ in range(10):
            c.update_item(TableName=T, Key=key("race"), UpdateExpression="ADD n :one",
                          ExpressionAttributeValues={":one": {"N": "1"}})

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(add, range(8)))
    assert served.client().get_item(TableName=T, Key=key("race"))["Item"]["n"] == {"N": "80"}

    def create(i: int) -> bool:
        try:
            served.client(retries={"max_attempts": 20, "mode": "standard"}).put_item(
                TableName=T, Item={**key("first"), "who": {"N": str(i)}}, ConditionExpression="attribute_not_exists(pk)")
            return True
        except ClientError as error:
            assert error.response["Error"]["Code"] == "ConditionalCheckFailedException"
            return False

    with ThreadPoolExecutor(8) as pool:
        assert sum(pool.map(create, range(8))) == 1


def test_numbers_keep_38_digits_and_refuse_more(served):
    c = served.client()
    big = "1234567890123456789012345678901234567.8"
    c.put_item(TableName=T, Item={**key("num"), "n": {"N": big}})
    assert c.get_item(TableName=T, Key=key("num"))["Item"]["n"] == {"N": big}
    code, message = error_of(c.put_item, TableName=T, Item={**key("num"), "n": {"N": "1" * 39}})
    assert code == "ValidationException" and "38 significant digits" in message


def test_an_item_past_its_ttl_is_not_returned(served):
    c = served.client()
    c.put_item(TableName=T, Item={**key("ttl"), "expiresAt": {"N": str(int(time.time()) + 2)}})
    assert "Item" in c.get_item(TableName=T, Key=key("ttl"))
    time.sleep(3)
    assert "Item" not in c.get_item(TableName=T, Key=key("ttl"))


def test_bad_requests_get_dynamodbs_errors_and_write_nothing(served):
    c = served.client()
    assert error_of(c.get_item, TableName="Nope", Key=key("x"))[0] == "ResourceNotFoundException"
    assert error_of(c.get_item, TableName=T, Key={"pk": {"S": "x"}})[0] == "ValidationException"
    code, message = error_of(c.update_item, TableName=T, Key=key("bad"), UpdateExpression="SET = oops")
    assert code == "ValidationException" and "Syntax error" in message
    code, message = error_of(c.update_item, TableName=T, Key=key("bad"), UpdateExpression="SET pk = :v",
                             ExpressionAttributeValues={":v": {"S": "other"}})
    assert code == "ValidationException" and "key" in message.lower()
    code, message = error_of(c.get_item, TableName=T, Key=key("bad"), AttributesToGet=["a"], ProjectionExpression="a")
    assert code == "ValidationException" and "Can not use both expression and non-expression" in message
    assert "Item" not in c.get_item(TableName=T, Key=key("bad"))


def test_arithmetic_keeps_38_digits(served):
    c = served.client()
    c.put_item(TableName=T, Item={**key("sum"), "n": {"N": "1234567890123456789012345678901234567"}})
    out = c.update_item(TableName=T, Key=key("sum"), UpdateExpression="SET n = n + :one",
                        ExpressionAttributeValues={":one": {"N": "1"}}, ReturnValues="UPDATED_NEW")
    assert out["Attributes"]["n"] == {"N": "1234567890123456789012345678901234568"}


def test_key_limits_are_dynamodbs(served):
    c = served.client()
    code, message = error_of(c.put_item, TableName=T, Item={"pk": {"S": "x" * 2049}, "sk": {"N": "1"}})
    assert code == "ValidationException" and "2048" in message
    code, message = error_of(c.put_item, TableName=T, Item={"pk": {"S": ""}, "sk": {"N": "1"}})
    assert code == "ValidationException" and "empty" in message
    c.put_item(TableName=T, Item={"pk": {"S": "é" * 1024}, "sk": {"N": "1"}})  # 2048 bytes: the limit itself
    code, message = error_of(c.put_item, TableName=T, Item={**key("big"), "blob": {"B": b"\0" * (400 * 1024)}})
    assert code == "ValidationException" and "size" in message


def test_a_put_past_its_ttl_removes_the_previous_item(served):
    c = served.client()
    c.put_item(TableName=T, Item={**key("late"), "v": {"S": "1"}})
    c.put_item(TableName=T, Item={**key("late"), "expiresAt": {"N": str(int(time.time()) - 60)}})
    assert "Item" not in c.get_item(TableName=T, Key=key("late"), ConsistentRead=True)
    c.put_item(TableName=T, Item={**key("late"), "v": {"S": "2"}}, ReturnValues="ALL_OLD")
    old = c.put_item(TableName=T, Item={**key("late"), "expiresAt": {"N": str(int(time.time()) - 60)}},
                     ReturnValues="ALL_OLD")
    assert old["Attributes"]["v"] == {"S": "2"}
    assert "Item" not in c.get_item(TableName=T, Key=key("late"), ConsistentRead=True)


def test_the_write_guard_of_a_wide_row_stays_inside_bigtables_filter_limit():
    """The seeds' video row keeps up to 500 comments as versions of one column: the check
    that such a row did not change still fits in one filter (its values left out), and a row
    no filter can cover is refused in DynamoDB's shape instead of failing in Bigtable."""
    from ddb2bigtable.codec.mutations import Cell
    from ddb2bigtable.serve.errors import ServeError
    from ddb2bigtable.serve.guards import FILTER_BYTES, unchanged_filter

    comments = [Cell("UserComments", b"Content", b"x" * 100, 1_700_000_000_000_000 + i * 1000) for i in range(500)]
    message = unchanged_filter(comments)._to_pb()
    assert type(message).pb(message).ByteSize() <= FILTER_BYTES
    with pytest.raises(ServeError) as caught:
        unchanged_filter([Cell("f", b"q%d" % i, b"", i * 1000) for i in range(3000)])
    assert caught.value.name == "ValidationException" and "20 KB" in caught.value.message


@pytest.mark.parametrize("write", ["put", "update", "delete"])
def test_a_write_keeps_the_record_of_a_transaction_token_on_its_row(served, write):
    """A TransactWriteItems retried under its ClientRequestToken changes nothing, even after
    a plain write of its item (DynamoDB Local 1.25.1 answers so, checked 2026-11-29): a
    PutItem or DeleteItem (one CheckAndMutateRow, no read) or an UpdateItem (read-check-
    write) deletes the item's cells family by family, not the row, whose reserved family
    holds the token's record; a deleted item stays gone for every read."""
    c = served.client()
    token = f"write-keeps-token-{write}"
    put = [{"Put": {"TableName": T, "Item": {**key(token), "v": {"S": "transaction"}}}}]
    c.transact_write_items(TransactItems=put, ClientRequestToken=token)
    if write == "put":
        c.put_item(TableName=T, Item={**key(token), "v": {"S": "plain"}})
    elif write == "update":
        c.update_item(TableName=T, Key=key(token), UpdateExpression="SET v = :v",
                      ExpressionAttributeValues={":v": {"S": "plain"}})
    else:
        c.delete_item(TableName=T, Key=key(token))
    c.transact_write_items(TransactItems=put, ClientRequestToken=token)
    expected = [{**key(token), "v": {"S": "plain"}}] if write != "delete" else []
    assert [c.get_item(TableName=T, Key=key(token), ConsistentRead=True).get("Item")] == (expected or [None])
    assert c.query(TableName=T, KeyConditionExpression="pk = :p", ExpressionAttributeValues={":p": {"S": token}},
                   ConsistentRead=True)["Items"] == expected
