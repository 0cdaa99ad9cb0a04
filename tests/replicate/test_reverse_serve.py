"""`replicate --reverse` reading serve's own DynamoDB Streams API (emulator stage), split
over two `--shards` processes, into DynamoDB Local.

The changes are written into serve's stream as its write path writes them (each change's
cell in the item row's one mutation: tests/serve/streams' `Writer`), so the test chooses
every record; the rollback drill (test_rollback_drill.py) writes through serve's API. What
is read, and how, is serve's: ListStreams and DescribeStream, its four shards,
GetShardIterator and GetRecords through boto3, with nothing but the endpoint changed.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator

import pytest

from ddb2bigtable.bigtable.emulator import stop_process
from ddb2bigtable.replicate.reverse.run import reverse_table
from ddb2bigtable.replicate.run import ReplicateOptions
from ddb2bigtable.replicate.shares import REVERSE, Share
from ddb2bigtable.replicate.stream import StreamReader
from ddb2bigtable.spec.reading import read_spec

from ..serve.streams.conftest import INSTANCE, SPEC, Streamed, serve_streamed
from ..serve.streams.test_stream_api import Writer
from .scenario import scan

BACK = "streams-back"  # an instance of its own: tests/serve/streams write other changes to theirs


@pytest.fixture(scope="module")
def streamed(bigtable_emulator, tmp_path_factory) -> Iterator[Streamed]:
    process, running = serve_streamed(tmp_path_factory.mktemp("streams-back"), BACK)
    yield running
    stop_process(process)


def _empty_orders(dynamodb, monkeypatch) -> None:
    """DynamoDB Local's Orders table made again, empty, for a reverse run (with the keys the
    replicator signs with)."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "local")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "local")
    client = dynamodb.client()
    if "Orders" in client.list_tables()["TableNames"]:
        client.delete_table(TableName="Orders")
    client.create_table(TableName="Orders", BillingMode="PAY_PER_REQUEST",
                        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                                              {"AttributeName": "sk", "AttributeType": "N"}],
                        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                                   {"AttributeName": "sk", "KeyType": "RANGE"}])


def test_two_shares_of_serves_stream_bring_every_change_back_to_dynamodb(streamed, dynamodb, tmp_path, monkeypatch):
    _empty_orders(dynamodb, monkeypatch)
    streamed.client("dynamodb").describe_table(TableName="Orders")  # serve makes a spec table's stream when it first serves it
    (tmp_path / "orders.yaml").write_text(SPEC.replace(INSTANCE, BACK))
    table = read_spec(tmp_path / "orders.yaml").tables[0]
    options = ReplicateOptions(project=streamed.project, instance_id=BACK, app_profile_id=None,
                               work_dir=tmp_path / "work", endpoint_url=dynamodb.endpoint,
                               stream_endpoint_url=streamed.endpoint, since_micros=time.time_ns() // 1000)
    writer, expected = Writer(streamed), {}

    def change(n: int, version: int | None) -> None:
        keys = {"pk": {"S": f"back-{n}"}, "sk": {"N": str(n)}}
        old = expected.get(n)
        new = None if version is None else keys | {"v": {"N": str(version)}, "note": {"S": "x" * n}}
        writer.write(keys, old, new)
        if new is None:
            expected.pop(n, None)
        else:
            expected[n] = new

    for n in range(60):
        change(n, 1)
    for n in range(0, 60, 2):
        change(n, 2)
    for n in range(0, 60, 6):
        change(n, None)

    def both(**kw):
        reports = []
        runs = [threading.Thread(target=lambda i=i: reports.append(asyncio.run(reverse_table(
            table, ReplicateOptions(**{**options.__dict__, "share": Share(i, 2, REVERSE), **kw}))))) for i in (0, 1)]
        for run in runs:
            run.start()
        for run in runs:
            run.join(120)
        return reports

    first = both()
    assert [r.shards_seen for r in first] == [4, 4] and sum(r.shards_owned for r in first) == 4
    assert sum(r.applied for r in first) == 60 + 30 + 10 and not any(r.dead_letters for r in first)
    held = {int(i["sk"]["N"]): i for i in scan(dynamodb, "Orders")}
    assert held == expected
    assert sorted(p.name for p in options.work_dir.glob("replicate-reverse-*.json")) == [
        "replicate-reverse-0-of-2.json", "replicate-reverse-1-of-2.json"]

    for n in range(1, 60, 6):  # more writes through serve: both shares resume from their checkpoints
        change(n, 3)
    again = both(since_micros=None)
    assert all(r.resumed for r in again) and sum(r.applied for r in again) == 10
    assert {int(i["sk"]["N"]): i for i in scan(dynamodb, "Orders")} == expected



class NoDescribeTable(StreamReader):
    """serve's stream, refusing the one call reverse replication must not make: serve's
    DescribeTable counts every item of the table (serve/tables/table_counts.py), seconds of
    its CPU on a table of thousands of items, while the stream needs none of it."""

    def stream(self, fetch_keys_only: bool = False):
        raise AssertionError("DescribeTable on serve: it counts the table")


def test_reverse_finds_serves_stream_without_describing_the_table(streamed, dynamodb, tmp_path, monkeypatch):
    _empty_orders(dynamodb, monkeypatch)
    (tmp_path / "orders.yaml").write_text(SPEC.replace(INSTANCE, BACK))
    table = read_spec(tmp_path / "orders.yaml").tables[0]
    since = time.time_ns() // 1000
    writer = Writer(streamed)
    items = [{"pk": {"S": f"listed-{n}"}, "sk": {"N": str(n)}} for n in range(8)]
    for item in items:
        writer.write(item, None, item)
    options = ReplicateOptions(project=streamed.project, instance_id=BACK, app_profile_id=None,
                               work_dir=tmp_path / "work", endpoint_url=dynamodb.endpoint,
                               stream_endpoint_url=streamed.endpoint, since_micros=since)
    reader = NoDescribeTable("Orders", "us-west-2", streamed.endpoint)
    report = asyncio.run(reverse_table(table, options, stream=reader))
    assert report.stopped == "caught up" and report.applied >= len(items)
    held = {i["pk"]["S"] for i in scan(dynamodb, "Orders")}
    assert {i["pk"]["S"] for i in items} <= held
