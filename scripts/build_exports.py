"""Regenerate `exports/`: DynamoDB exports to S3, laid out as AWS writes them, of the
tables the example specs describe. `uv run python scripts/build_exports.py`

- `movies/`: AWS's Movies sample (`exports/sources/moviedata.json.gz`, 4,609
  items), full export, DynamoDB JSON. The `local` stage loads it.
- `other/movies-ion/`: the same items, ION.
- `other/movies-incremental/`: an incremental export (NEW_AND_OLD_IMAGES) covering the day after
  the movies export: 2 inserts ((2019, Parasite), (2019, Joker)), 2 updates ((2013, Rush)
  rating 8.3 -> 8.1; (2013, Thor: The Dark World) gains a rating) and 2 deletes
  ((2010, Frozen), (2018, Halloween III)), each with its write time.
- `products/`, `videos/`, `invoices/`: the seeds' example tables ("Bigtable for DynamoDB
  users"), with exactly the attributes `specs/product-catalog.yaml`,
  `specs/video-single-table.yaml` and `specs/invoices-adjacency.yaml` map. The seeds cut
  values short ("https://storage…", "John…"); they are completed plausibly here.
- `other/orders-sharded/`: the seeds' write-sharding example, one logical key over `orders#1` ..
  `orders#10` (`advise` reports it as `write-sharding`).

`other/` holds the exports no shipped stage loads: `up` loads `<exports>/<table id>/` and
names every other export folder beside those, so these live one level down.

Output is deterministic: running the script again rewrites identical files.
"""

from __future__ import annotations

import copy
import gzip
import hashlib
import json
import shutil
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

from ddb2bigtable.codec.items import Item
from ddb2bigtable.exports.writer import IncrementalChange, item_from_plain, write_export, write_incremental_export

ROOT = Path(__file__).resolve().parents[1]
EXPORTS = ROOT / "exports"
MOVIES = EXPORTS / "sources" / "moviedata.json.gz"  # origin and licence: exports/sources/README.md
ACCOUNT = "123456789012"  # AWS's documentation account
EXPORT_TIME = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
INCREMENTAL_TO = datetime(2026, 11, 21, 8, 0, tzinfo=UTC)  # a window under AWS's 24 h maximum


def table_arn(region: str, table: str) -> str:
    return f"arn:aws:dynamodb:{region}:{ACCOUNT}:table/{table}"


def movies() -> list[Item]:
    """moviedata.json as typed items; numbers keep their exact decimal text."""
    with gzip.open(MOVIES, "rt", encoding="utf-8") as f:
        plain = json.load(f, parse_float=Decimal, parse_int=Decimal)
    return [item_from_plain(movie) for movie in plain]


def movie_changes(items: list[Item]) -> list[IncrementalChange]:
    """The incremental export's changes on top of the movies export (see the docstring)."""
    by_key = {(i["year"]["N"], i["title"]["S"]): i for i in items}

    def micros(hour: int, minute: int, second: int) -> int:
        moment = datetime(2026, 11, 20, hour, minute, second, 250_000, tzinfo=UTC)
        return (moment - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(microseconds=1)

    def keys(year: str, title: str) -> Item:
        return {"year": {"N": year}, "title": {"S": title}}

    def inserted(year: str, title: str, info: dict[str, object]) -> Item:
        return item_from_plain({"year": Decimal(year), "title": title, "info": info})

    rush = copy.deepcopy(by_key["2013", "Rush"])
    rush["info"]["M"]["rating"] = {"N": "8.1"}
    thor = copy.deepcopy(by_key["2013", "Thor: The Dark World"])
    thor["info"]["M"]["rating"] = {"N": "6.9"}
    parasite = inserted("2019", "Parasite", {
        "directors": ["Bong Joon Ho"], "genres": ["Comedy", "Drama", "Thriller"],
        "release_date": "2019-05-30T00:00:00Z", "rating": Decimal("8.6"), "rank": Decimal("1"),
        "running_time_secs": Decimal("7920"),
        "plot": "Greed and class discrimination threaten the newly formed symbiotic "
                "relationship between the wealthy Park family and the destitute Kim clan."})
    joker = inserted("2019", "Joker", {
        "directors": ["Todd Phillips"], "genres": ["Crime", "Drama", "Thriller"],
        "release_date": "2019-10-04T00:00:00Z", "rating": Decimal("8.4"), "rank": Decimal("2"),
        "running_time_secs": Decimal("7320")})
    return [
        IncrementalChange(keys("2019", "Parasite"), micros(10, 15, 3), new_image=parasite),
        IncrementalChange(keys("2013", "Rush"), micros(11, 2, 41), new_image=rush,
                          old_image=by_key["2013", "Rush"]),
        IncrementalChange(keys("2010", "Frozen"), micros(12, 30, 0), old_image=by_key["2010", "Frozen"]),
        IncrementalChange(keys("2019", "Joker"), micros(14, 45, 17), new_image=joker),
        IncrementalChange(keys("2013", "Thor: The Dark World"), micros(16, 8, 55), new_image=thor,
                          old_image=by_key["2013", "Thor: The Dark World"]),
        IncrementalChange(keys("2018", "Halloween III"), micros(20, 59, 30),
                          old_image=by_key["2018", "Halloween III"]),
    ]


def products() -> list[Item]:
    """ProductCatalog: key (category, sku); Description, Price (N), Thumbnail."""
    rows = [
        ("hats", "fedoras#brandA", "Crafted from premium wool for a timeless silhouette.", "30"),
        ("hats", "fedoras#brandB", "Durable, water-resistant canvas designed for the outdoors.", "28"),
        ("hats", "newsboy#brandB", "Add a touch of vintage charm to your everyday style.", "25"),
        ("shoes", "sneakers#brandA", "Step out in style and comfort with cushioned soles.", "40"),
        ("shoes", "sneakers#brandB", "Classic features with contemporary materials.", "50"),
    ]
    return [{
        "category": {"S": category}, "sku": {"S": sku}, "Description": {"S": description},
        "Price": {"N": price},
        "Thumbnail": {"S": f"https://storage.googleapis.com/catalog/{category}/{sku.replace('#', '-')}.jpg"},
    } for category, sku, description, price in rows]


def videos() -> list[Item]:
    """Videos (single table): key (VideoId, SK). `Video` items carry UploadDate and the
    Formats map, comments Content and PostedAt (the spec's comment timestamp), stats a
    Count. The seed draws video 0124's views as SK `VideoStats` with `ViewCount`; it is
    written `VideoStatsViews`/`Count` like 0123's, the shape the spec's rules map. The
    time of the comment "I shared this..." is not in the seed and is made up."""
    def formats(video: str, *heights: str) -> Item:
        return {"M": {h: {"S": f"https://storage.googleapis.com/videos/{video}/{h}.mp4"} for h in heights}}

    def comment(video: str, reverse: str, text: str, posted: str) -> Item:
        return {"VideoId": {"S": video}, "SK": {"S": f"VideoComment#{reverse}"},
                "Content": {"S": text}, "PostedAt": {"S": posted}}

    def stat(video: str, sk: str, count: str) -> Item:
        return {"VideoId": {"S": video}, "SK": {"S": sk}, "Count": {"N": count}}

    return [
        {"VideoId": {"S": "0123"}, "SK": {"S": "Video"}, "UploadDate": {"S": "2023-09-10T15:21:48"},
         "Formats": formats("0123", "480", "720", "1080p")},
        comment("0123", "98765481", "I really like this. The special effects are amazing.", "2023-09-10T19:01:15"),
        comment("0123", "86751345", "There seems to be an audio glitch at 1:05.", "2023-09-10T16:30:42"),
        stat("0123", "VideoStatsLikes", "3"),
        stat("0123", "VideoStatsViews", "156"),
        {"VideoId": {"S": "0124"}, "SK": {"S": "Video"}, "UploadDate": {"S": "2023-09-10T17:03:21"},
         "Formats": formats("0124", "480", "720")},
        comment("0124", "97531849", "I shared this with all my friends.", "2023-09-12T20:45:10"),
        comment("0124", "87616471", "The style reminds me of a film director, but I can't put my finger on who.",
                "2023-10-12T07:08:51"),
        stat("0124", "VideoStatsViews", "45"),
    ]


def invoices() -> list[Item]:
    """Invoices (adjacency list): key (PK, SK); DateCreated (S) and the Details map."""
    def row(pk: str, sk: str, created: str, details: dict[str, object]) -> Item:
        return item_from_plain({"PK": pk, "SK": sk, "DateCreated": created, "Details": details})

    def invoice(number: str, created: str, discount: str, tax: str) -> Item:
        return row(f"Invoice-{number}", f"Invoice-{number}", created,
                   {"discount": Decimal(discount), "sales_tax_usd": tax, "due_date": "2023-10-03"})

    def payment(invoice_no: str, number: str, created: str, amount: str, bill_to: str, address: str) -> Item:
        return row(f"Invoice-{invoice_no}", f"Payment-{number}", created,
                   {"amount_usd": Decimal(amount), "bill_to": bill_to, "address": address})

    return [
        invoice("0123", "2023-09-10T15:21:48", "0.10", "8"),
        payment("0123", "0680", "2023-09-10T15:21:40", "120", "John Smith", "123 Abc St"),
        payment("0123", "0789", "2023-09-10T15:21:31", "120", "Jane Doe", "13 Xyz St"),
        invoice("0124", "2023-09-09T10:11:28", "0.20", "11"),
        payment("0124", "0327", "2023-09-09T10:11:10", "180", "Bob Brown", "321 Cba St"),
        payment("0124", "0275", "2023-09-09T10:11:03", "70", "Kate Green", "21 Zyx St"),
    ]


CART_EXPIRED = int(datetime(2025, 1, 1, tzinfo=UTC).timestamp())  # long gone: skipped and counted
CART_LIVE = int(datetime(2099, 1, 1, tzinfo=UTC).timestamp())  # still in the basket


def carts() -> list[Item]:
    """1,000 shopping carts for `specs/shop-global.yaml`'s on-demand `carts` table, a third
    of them past their TTL, so the local stage shows expired items skipped and counted."""
    items = []
    for i in range(1000):
        lines = [{"sku": f"sku-{(i * 7 + n) % 500:04d}", "qty": Decimal(1 + (i + n) % 3)} for n in range(1 + i % 4)]
        total = sum(Decimal("9.99") * line["qty"] for line in lines)
        items.append(item_from_plain({
            "cartId": f"cart-{i:05d}", "customerId": f"cust-{i % 317:04d}", "lines": lines,
            "total": total, "expiresAt": Decimal(CART_EXPIRED if i % 3 == 0 else CART_LIVE),
        }))
    return items


def sharded_orders() -> list[Item]:
    """The seeds' write-sharding example ("Bigtable for DynamoDB users", Data sorting): a
    number from a fixed set, 1 to 10, appended to one logical partition key, so the whole
    table is `orders#1` .. `orders#10`. 2,000 orders; the writer's random draw is stood in
    for by each order id's MD5, so a rebuild writes the same shards."""
    items = []
    for i in range(2000):
        order = f"order-{i:06d}"
        shard = 1 + int(hashlib.md5(order.encode()).hexdigest(), 16) % 10
        items.append(item_from_plain({
            "pk": f"orders#{shard}", "sk": order, "customerId": f"cust-{(i * 37) % 613:04d}",
            "total": Decimal(100 + (i * 7919) % 90000) / 100,
            "placedAt": (EXPORT_TIME - timedelta(minutes=2000 - i)).isoformat(),
        }))
    return items


def build_all(exports: Path) -> list[Path]:
    """Write every export below `exports/`, replacing what was there; return their folders."""
    movie_items = movies()
    movies_arn = table_arn("us-west-2", "Movies")
    builds = {
        "movies": lambda dest: write_export(dest, movies_arn, movie_items, export_time=EXPORT_TIME),
        "other/movies-ion": lambda dest: write_export(dest, movies_arn, movie_items, output_format="ION",
                                                export_time=EXPORT_TIME),
        "other/movies-incremental": lambda dest: write_incremental_export(
            dest, movies_arn, movie_changes(movie_items), export_from_time=EXPORT_TIME,
            export_time=INCREMENTAL_TO),
        "products": lambda dest: write_export(dest, table_arn("us-east-1", "ProductCatalog"), products(),
                                              export_time=EXPORT_TIME),
        "videos": lambda dest: write_export(dest, table_arn("us-west-2", "Videos"), videos(),
                                            export_time=EXPORT_TIME),
        "invoices": lambda dest: write_export(dest, table_arn("eu-west-1", "Invoices"), invoices(),
                                              export_time=EXPORT_TIME),
        "carts": lambda dest: write_export(dest, table_arn("us-east-1", "Carts"), carts(), export_time=EXPORT_TIME,
                                           items_per_file=400),
        "other/orders-sharded": lambda dest: write_export(dest, table_arn("us-east-1", "Orders"), sharded_orders(),
                                                    export_time=EXPORT_TIME, items_per_file=1000),
    }
    folders = []
    for name, build in builds.items():
        dest = exports / name
        shutil.rmtree(dest, ignore_errors=True)  # a rebuild must not leave old data files behind
        folders.append(build(dest))
    return folders


if __name__ == "__main__":
    for folder in build_all(EXPORTS):
        print(folder.relative_to(ROOT))
