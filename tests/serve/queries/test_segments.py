"""Parallel Scan (Segment/TotalSegments) as row ranges: every row key in exactly one
segment whatever the keys (property), even segments on a salted row key, and through
serve on the emulator: for random tables and TotalSegments 1..17, the segments paged
with Limit give every item of the unsegmented Scan exactly once, each segment reading
only its own rows."""

from __future__ import annotations

import random
import string
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from ddb2bigtable.codec.row_keys import salt_prefix
from ddb2bigtable.serve.protocol.app import operation
from ddb2bigtable.serve.queries.key_ranges import segment_range

from ..client_calls import pages
from ..in_process import answered

row_keys = st.lists(st.binary(min_size=1, max_size=12) | st.text(min_size=1, max_size=12).map(str.encode),
                    min_size=1, max_size=60)


@settings(max_examples=300, deadline=None)
@given(keys=row_keys, salt=st.none() | st.integers(1, 40), total=st.integers(1, 70))
def test_every_row_key_is_in_exactly_one_segment(keys, salt, total):
    if salt:
        keys = [salt_prefix(k, salt, "#") + k for k in keys]
    ranges = [segment_range(salt, "#", s, total) for s in range(total)]
    assert ranges[0].start == b"" and ranges[-1].end is None
    assert all(a.end == b.start and a.start < b.start for a, b in zip(ranges, ranges[1:], strict=False))
    for key in keys:
        assert sum(r.holds(key) for r in ranges) == 1, key


def test_segments_of_a_salted_row_key_are_even():
    rng = random.Random(31)
    keys = [f"user-{rng.randrange(10**9)}".encode() for _ in range(4000)]
    ranges = [segment_range(16, "#", s, 4) for s in range(4)]
    counts = Counter(next(i for i, r in enumerate(ranges) if r.holds(salt_prefix(k, 16, "#") + k)) for k in keys)
    assert all(800 <= counts[s] <= 1200 for s in range(4)), counts


def scan_all(client, **request) -> list[dict]:
    return [item for page in pages(client.scan, **request) for item in page["Items"]]


def fill(client, name: str, seed: int) -> int:
    """A created table of random items: partition keys of random text (some sharing a
    prefix), several items per partition; how many."""
    client.create_table(TableName=name, BillingMode="PAY_PER_REQUEST",
                        KeySchema=[{"AttributeName": "p", "KeyType": "HASH"},
                                   {"AttributeName": "c", "KeyType": "RANGE"}],
                        AttributeDefinitions=[{"AttributeName": "p", "AttributeType": "S"},
                                              {"AttributeName": "c", "AttributeType": "N"}])
    rng = random.Random(seed)
    alphabet = string.ascii_letters + string.digits + " #-_~é"
    count = 0
    for _ in range(rng.randrange(20, 60)):
        partition = rng.choice(["", "user#", "Z"]) + "".join(rng.choices(alphabet, k=rng.randrange(1, 10)))
        for sort in rng.sample(range(-50, 50), rng.randrange(1, 5)):
            client.put_item(TableName=name, Item={"p": {"S": partition}, "c": {"N": str(sort)},
                                                  "v": {"S": "x" * rng.randrange(0, 50)}})
            count += 1
    return count


def test_segments_page_through_every_item_once(served):
    client = served.client()
    for seed in (1, 2):
        name = f"segments_{seed}"
        count = fill(client, name, seed)
        everything = Counter(repr(sorted(i.items())) for i in scan_all(client, TableName=name))
        assert sum(everything.values()) == count
        for total in (1, 2, 3, 5, 17):
            got = Counter(repr(sorted(i.items())) for s in range(total)
                          for i in scan_all(client, TableName=name, Segment=s, TotalSegments=total, Limit=7))
            assert got == everything, (seed, total)
        client.delete_table(TableName=name)


def test_each_segment_reads_only_its_rows(served, monkeypatch):
    client = served.client()
    count = fill(client, "segments_read", 3)
    bodies = [{"TableName": "segments_read", "Segment": s, "TotalSegments": 5} for s in range(5)]
    pages, read, _ = answered(served, operation("Scan"), bodies, monkeypatch)
    assert sum(p["Count"] for p in pages) == count
    assert sum(read) == count  # every row read once in all (each segment read every row before)
    client.delete_table(TableName="segments_read")
