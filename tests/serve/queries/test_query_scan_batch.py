"""Query, Scan, BatchGetItem, BatchWriteItem, TransactGetItems and TransactWriteItems
through `serve` (the loaded Movies for reads, the Scratch table for writes)."""

from __future__ import annotations

from functools import partial

import pytest
from botocore.exceptions import ClientError

from ..client_calls import pages

YEAR = {"#y": "year"}


def movies_of(client, year: int, **extra) -> dict:
    return client.query(TableName="Movies", KeyConditionExpression="#y = :y" + extra.pop("and_", ""),
                        ExpressionAttributeNames=YEAR,
                        ExpressionAttributeValues={":y": {"N": str(year)}, **extra.pop("values", {})}, **extra)


def test_query_key_conditions_order_and_paging(served):
    c = served.client()
    everything = movies_of(c, 2013)["Items"]
    titles = [i["title"]["S"] for i in everything]
    assert len(titles) > 100 and titles == sorted(titles, key=str.encode)
    assert [i["title"]["S"] for i in movies_of(c, 2013, ScanIndexForward=False)["Items"]] == titles[::-1]
    paged = []
    for page in pages(partial(movies_of, c, 2013), Limit=25):
        assert page["Count"] <= 25
        paged += [i["title"]["S"] for i in page["Items"]]
    assert paged == titles
    between = movies_of(c, 2013, and_=" AND title BETWEEN :a AND :b", values={":a": {"S": "R"}, ":b": {"S": "S"}})
    assert [i["title"]["S"] for i in between["Items"]] == [t for t in titles if "R" <= t <= "S"]
    assert "Rush" in [i["title"]["S"] for i in between["Items"]]


def test_query_filter_projection_and_count(served):
    c = served.client()
    good = movies_of(c, 2013, FilterExpression="info.rating >= :r", values={":r": {"N": "8"}},
                     ProjectionExpression="title, info.rating")
    assert good["ScannedCount"] > good["Count"] > 0
    assert all(set(i) == {"title", "info"} and set(i["info"]["M"]) == {"rating"} for i in good["Items"])
    assert all(float(i["info"]["M"]["rating"]["N"]) >= 8 for i in good["Items"])
    counted = movies_of(c, 2013, Select="COUNT", FilterExpression="info.rating >= :r", values={":r": {"N": "8"}})
    assert counted["Count"] == good["Count"] and "Items" not in counted
    assert movies_of(c, 1800)["Items"] == []


def test_scan_filter_and_paging(served):
    c = served.client()
    answers = list(pages(c.scan, TableName="Movies", FilterExpression="#y = :y", ExpressionAttributeNames=YEAR,
                         ExpressionAttributeValues={":y": {"N": "1999"}}, Limit=1000))
    found = [i for page in answers for i in page["Items"]]
    assert len(answers) >= 5 and {i["year"]["N"] for i in found} == {"1999"}
    assert len(found) == len(movies_of(c, 1999)["Items"])


def test_batch_write_then_batch_get(served):
    c = served.client()
    puts = [{"PutRequest": {"Item": {"pk": {"S": "batch"}, "sk": {"N": str(n)}, "v": {"S": f"v{n}"}}}}
            for n in range(20)]
    assert c.batch_write_item(RequestItems={"Scratch": puts})["UnprocessedItems"] == {}
    keys = [{"pk": {"S": "batch"}, "sk": {"N": str(n)}} for n in (0, 5, 19, 99)]
    got = c.batch_get_item(RequestItems={"Scratch": {"Keys": keys, "ProjectionExpression": "v"},
                                         "Movies": {"Keys": [{"year": {"N": "2013"}, "title": {"S": "Rush"}}]}})
    assert sorted(i["v"]["S"] for i in got["Responses"]["Scratch"]) == ["v0", "v19", "v5"]
    assert got["Responses"]["Movies"][0]["title"] == {"S": "Rush"} and got["UnprocessedKeys"] == {}
    deletes = [{"DeleteRequest": {"Key": {"pk": {"S": "batch"}, "sk": {"N": str(n)}}}} for n in range(20)]
    c.batch_write_item(RequestItems={"Scratch": deletes})
    assert c.query(TableName="Scratch", KeyConditionExpression="pk = :p",
                   ExpressionAttributeValues={":p": {"S": "batch"}})["Count"] == 0
    with pytest.raises(ClientError) as caught:
        c.batch_write_item(RequestItems={"Scratch": puts + puts[:6]})
    assert caught.value.response["Error"]["Code"] == "ValidationException"


def test_transactions_within_one_row_and_across_rows(served):
    c = served.client()
    invoice = {"PK": {"S": "Invoice-0777"}, "SK": {"S": "Invoice-0777"}, "DateCreated": {"S": "2023-09-12T10:00:00"},
               "Details": {"M": {"due_date": {"S": "2023-10-12"}}}}
    payment = {"PK": {"S": "Invoice-0777"}, "SK": {"S": "Payment-0001"}, "DateCreated": {"S": "2023-09-12T11:00:00"},
               "Details": {"M": {"amount_usd": {"N": "10"}}}}
    c.transact_write_items(TransactItems=[
        {"Put": {"TableName": "Invoices", "Item": invoice, "ConditionExpression": "attribute_not_exists(PK)"}},
        {"Put": {"TableName": "Invoices", "Item": payment, "ConditionExpression": "attribute_not_exists(PK)"}}])
    keys = [{k: item[k] for k in ("PK", "SK")} for item in (invoice, payment)]
    got = c.transact_get_items(TransactItems=[{"Get": {"TableName": "Invoices", "Key": k}} for k in keys])
    assert [r["Item"] for r in got["Responses"]] == [invoice, payment]
    with pytest.raises(ClientError) as caught:  # the payment exists: the whole transaction is cancelled
        c.transact_write_items(TransactItems=[
            {"Delete": {"TableName": "Invoices", "Key": keys[0]}},
            {"Put": {"TableName": "Invoices", "Item": payment, "ConditionExpression": "attribute_not_exists(PK)"}}])
    assert caught.value.response["Error"]["Code"] == "TransactionCanceledException"
    assert [r["Code"] for r in caught.value.response["CancellationReasons"]] == ["None", "ConditionalCheckFailed"]
    assert "Item" in c.get_item(TableName="Invoices", Key=keys[0])
    scratch = [{"pk": {"S": p}, "sk": {"N": "1"}} for p in ("t1", "t2")]  # two rows: a cross-row transaction
    c.transact_write_items(TransactItems=[{"Put": {"TableName": "Scratch", "Item": k}} for k in scratch])
    assert c.scan(TableName="Scratch", FilterExpression="pk IN (:a, :b)",
                  ExpressionAttributeValues={":a": {"S": "t1"}, ":b": {"S": "t2"}})["Count"] == 2
    c.transact_write_items(TransactItems=[{"Delete": {"TableName": "Scratch", "Key": k}} for k in scratch])


def test_binary_values_compare_and_size_as_bytes(served):
    """A filter on binary compares the bytes, not their base64 text (0xF8 is `+A==`, which
    sorts below 0x00's `AA==`), and size() counts bytes."""
    c = served.client()
    c.put_item(TableName="Scratch", Item={"pk": {"S": "bin"}, "sk": {"N": "1"}, "b": {"B": b"\xf8"}})
    c.put_item(TableName="Scratch", Item={"pk": {"S": "bin"}, "sk": {"N": "2"}, "b": {"B": b"\x00\x01\x02"}})

    def matching(expression: str, values: dict) -> list[str]:
        found = c.query(TableName="Scratch", KeyConditionExpression="pk = :p", FilterExpression=expression,
                        ExpressionAttributeValues={":p": {"S": "bin"}, **values})
        return [i["sk"]["N"] for i in found["Items"]]

    assert matching("b > :x", {":x": {"B": b"\x00"}}) == ["1", "2"]
    assert matching("b < :x", {":x": {"B": b"\x80"}}) == ["2"]
    assert matching("size(b) = :n", {":n": {"N": "3"}}) == ["2"]
    assert matching("b = :x", {":x": {"B": b"\xf8"}}) == ["1"]
