"""The loader's rows read back through `serve`: every item of the Movies export and of the
seeds' single-table (videos) and adjacency (invoices) designs equals, as boto3 returns it,
the item the codec says the export item becomes (the export item itself, except what the
mapping documents as lossy: the comments' reverse-time sort keys)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from ddb2bigtable.codec.codec import Codec
from ddb2bigtable.codec.type_inference import infer_types
from ddb2bigtable.exports.manifests import open_export
from ddb2bigtable.load.run import all_items
from ddb2bigtable.serve.wire import item_to_codec, item_to_wire
from ddb2bigtable.spec.reading import read_specs

from ..conftest import ROOT
from .client_calls import pages


def canonical(value):
    """Equal as DynamoDB sees it: numbers by value, sets unordered."""
    if isinstance(value, dict):
        if len(value) == 1:
            (tag, inner), = value.items()
            if tag == "N":
                return ("N", Decimal(inner))
            if tag in ("SS", "NS", "BS"):
                return (tag, frozenset(Decimal(x) if tag == "NS" else x for x in inner))
        return {k: canonical(v) for k, v in value.items()}
    if isinstance(value, list):
        return [canonical(v) for v in value]
    return value


def expected_items(spec: str, export: str) -> tuple[str, list[dict]]:
    (parsed,) = read_specs([ROOT / "specs" / f"{spec}.yaml"])
    (table,) = parsed.tables
    items = list(all_items(open_export(str(ROOT / "exports" / export))))
    codec = Codec(table, infer_types(items, table))
    return table.source.table, [codec.expected(i, now_micros=0) for i in items]


def scan_all(client, table: str, **extra) -> list[dict]:
    return [item for page in pages(client.scan, TableName=table, **extra) for item in page["Items"]]


@pytest.mark.slow
def test_every_movie_reads_back_equal_to_the_export(served):
    name, expected = expected_items("movies", "movies")
    client = served.client()
    got = scan_all(client, name, Limit=700)
    assert len(got) == len(expected) == 4609
    key = lambda i: (i["year"], i["title"]["S"])  # noqa: E731
    assert sorted(map(canonical, got), key=key) == sorted((canonical(item_to_wire(i)) for i in expected), key=key), \
        "an item read through serve differs from the export"


@pytest.mark.slow
def test_four_parallel_segments_cover_the_movies_once(served):
    client = served.client()
    segments = [scan_all(client, "Movies", Segment=s, TotalSegments=4, ProjectionExpression="#y, title",
                         ExpressionAttributeNames={"#y": "year"}) for s in range(4)]
    keys = [(i["year"]["N"], i["title"]["S"]) for part in segments for i in part]
    # segments are row ranges cut without looking at the data (serve/queries/key_ranges.py): Movies'
    # keys all start with "d" (a year's ordered form), so one segment holds them all
    assert len(keys) == len(set(keys)) == 4609


@pytest.mark.parametrize(("spec", "export"), [("video-single-table", "videos"), ("invoices-adjacency", "invoices")])
def test_the_seeds_wide_row_designs_read_back_item_by_item(served, spec, export):
    name, expected = expected_items(spec, export)
    client = served.client()
    pk = "VideoId" if export == "videos" else "PK"
    for partition in sorted({i[pk]["S"] for i in expected}):
        want = sorted((canonical(item_to_wire(i)) for i in expected if i[pk]["S"] == partition), key=repr)
        got = client.query(TableName=name, KeyConditionExpression="#p = :p", ExpressionAttributeNames={"#p": pk},
                           ExpressionAttributeValues={":p": {"S": partition}}, ConsistentRead=True)["Items"]
        assert sorted(map(canonical, got), key=repr) == want
        assert all(item_to_codec(i) for i in got)


def test_an_invoice_and_its_payments_through_get_and_query(served):
    client = served.client()
    invoice = client.get_item(TableName="Invoices", Key={"PK": {"S": "Invoice-0123"}, "SK": {"S": "Invoice-0123"}})
    assert invoice["Item"]["Details"]["M"]["due_date"] == {"S": "2023-10-03"}
    payments = client.query(TableName="Invoices", KeyConditionExpression="PK = :p AND begins_with(SK, :s)",
                            ExpressionAttributeValues={":p": {"S": "Invoice-0123"}, ":s": {"S": "Payment-"}})
    assert [i["SK"]["S"] for i in payments["Items"]] == ["Payment-0680", "Payment-0789"]
    newest_first = client.query(TableName="Invoices", KeyConditionExpression="PK = :p",
                                ExpressionAttributeValues={":p": {"S": "Invoice-0123"}}, ScanIndexForward=False,
                                Limit=1)
    assert [i["SK"]["S"] for i in newest_first["Items"]] == ["Payment-0789"]
    assert newest_first["LastEvaluatedKey"] == {"PK": {"S": "Invoice-0123"}, "SK": {"S": "Payment-0789"}}


def test_a_payment_written_through_serve_is_a_column_of_the_invoice_row(served):
    """The adjacency design's write path: a new payment becomes column Payment:0999 of row
    0123, next to the loaded ones, and reads back like them."""
    client = served.client()
    payment = {"PK": {"S": "Invoice-0123"}, "SK": {"S": "Payment-0999"}, "DateCreated": {"S": "2023-09-11T10:00:00"},
               "Details": {"M": {"amount_usd": {"N": "5"}, "bill_to": {"S": "Ann Lee"}}}}
    client.put_item(TableName="Invoices", Item=payment, ConditionExpression="attribute_not_exists(SK)")
    assert client.get_item(TableName="Invoices", Key={k: payment[k] for k in ("PK", "SK")})["Item"] == payment
    found = client.query(TableName="Invoices", KeyConditionExpression="PK = :p AND SK > :s",
                         ExpressionAttributeValues={":p": {"S": "Invoice-0123"}, ":s": {"S": "Payment-0789"}})
    assert [i["SK"]["S"] for i in found["Items"]] == ["Payment-0999"]
    client.delete_item(TableName="Invoices", Key={k: payment[k] for k in ("PK", "SK")})
    assert len(client.query(TableName="Invoices", KeyConditionExpression="PK = :p",
                            ExpressionAttributeValues={":p": {"S": "Invoice-0123"}})["Items"]) == 3


@pytest.mark.slow
def test_a_video_row_with_hundreds_of_comments_takes_conditional_writes(served):
    """The single-table design's wide row: 300 comments written through serve become
    versions of UserComments:Content in row 0999, and a conditional write to the video's
    own item still checks the whole row in one CheckAndMutateRow."""
    client = served.client()
    for n in range(300):
        client.put_item(TableName="Videos", Item={
            "VideoId": {"S": "0999"}, "SK": {"S": f"VideoComment#{99999 - n}"},  # reverse time, as the seed
            "Content": {"S": f"comment {n} " + "x" * 60},
            "PostedAt": {"S": f"2024-01-01T00:{n // 60:02d}:{n % 60:02d}"}})
    video = {"VideoId": {"S": "0999"}, "SK": {"S": "Video"}, "UploadDate": {"S": "2024-01-01T00:00:00"},
             "Formats": {"M": {"480": {"S": "https://example.com/0999/480.mp4"}}}}
    client.put_item(TableName="Videos", Item=video, ConditionExpression="attribute_not_exists(SK)")
    found = client.query(TableName="Videos", KeyConditionExpression="VideoId = :v",
                         ExpressionAttributeValues={":v": {"S": "0999"}})["Items"]
    assert sum(1 for i in found if i["SK"]["S"] == "VideoComment#") == 300  # the mapping keeps the prefix only
    assert [i for i in found if i["SK"]["S"] == "Video"] == [video]


def test_a_video_like_is_an_addition_to_the_loaded_counter(served):
    """The single-table design's counter: the export's Likes (3) and an ADD through serve sum
    in the Stats family's one cell, read back as the item's Count."""
    client = served.client()
    likes = {"VideoId": {"S": "0123"}, "SK": {"S": "VideoStatsLikes"}}
    before = int(client.get_item(TableName="Videos", Key=likes)["Item"]["Count"]["N"])
    client.update_item(TableName="Videos", Key=likes, UpdateExpression="ADD #c :one",
                       ExpressionAttributeNames={"#c": "Count"}, ExpressionAttributeValues={":one": {"N": "1"}})
    assert client.get_item(TableName="Videos", Key=likes)["Item"]["Count"] == {"N": str(before + 1)}
    client.update_item(TableName="Videos", Key=likes, UpdateExpression="ADD #c :one",
                       ExpressionAttributeNames={"#c": "Count"}, ExpressionAttributeValues={":one": {"N": "-1"}})


def test_the_product_catalog_by_key_and_by_sku_prefix(served):
    """The seeds' product catalog (rows hats#fedoras#brandA, family SKU): every product read by
    its key equals the export's, and a sort-key prefix that itself holds the delimiter
    (`fedoras#`) finds exactly the products whose SKU starts with it, in order."""
    name, expected = expected_items("product-catalog", "products")
    client = served.client()
    for item in expected:
        key = {"category": item["category"], "sku": item["sku"]}
        assert canonical(client.get_item(TableName=name, Key=item_to_wire(key))["Item"]) == \
            canonical(item_to_wire(item))
    for category in sorted({i["category"]["S"] for i in expected}):
        want = sorted(i["sku"]["S"] for i in expected if i["category"]["S"] == category
                      and i["sku"]["S"].startswith("fedoras#"))
        got = client.query(TableName=name, KeyConditionExpression="category = :c AND begins_with(sku, :p)",
                           ExpressionAttributeValues={":c": {"S": category}, ":p": {"S": "fedoras#"}})["Items"]
        assert [i["sku"]["S"] for i in got] == want
