"""Cloud stages' Streams API over Bigtable change streams (change_source.py, cloud_shards.py):
serve's operations run on a stage that is not the emulator's, with a data client connected
to an in-process gRPC server speaking Bigtable's v2 API (change_stream_server.py), which
answers GenerateInitialChangeStreamPartitions and ReadChangeStream as Google's reference
defines them (data changes, chunked values, heartbeats, CloseStreams with new partitions and
continuation tokens) and passes every other call to the emulator, where the registries live."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Iterator
from typing import Any

import orjson
import pytest

from ddb2bigtable.codec.mutations import SetCell
from ddb2bigtable.load.local_stage import up
from ddb2bigtable.serve.streams import partitions, records, stream_ops
from ddb2bigtable.serve.streams.registry import REGISTRY_ID

from ...conftest import write_project
from . import change_stream_server
from .change_stream_server import ChangeStreams
from .conftest import SPEC, STAGE

INSTANCE = "streams-cloud"
KEYS = {n: {"pk": {"S": n}, "sk": {"N": "1"}} for n in ("a", "b", "m", "q", "z")}


@pytest.fixture(scope="module")
def project(bigtable_emulator, tmp_path_factory) -> Any:
    root = tmp_path_factory.mktemp("cloud-streams")
    write_project(root, {"orders": SPEC.replace("streams-test", INSTANCE)},
                  {"emulator": True, "regions": "home", "deletion_protection": False, "autoscaling": False},
                  stage_name=STAGE)
    assert up(root, STAGE).ok
    return root


@dataclasses.dataclass
class Cloud:
    streams: ChangeStreams
    rows: dict[str, bytes]
    session: Any = None
    loop: asyncio.AbstractEventLoop | None = None

    def call(self, name: str, **body: Any) -> dict[str, Any]:
        parse, run = stream_ops.OPERATIONS[name]
        assert self.loop is not None  # the answer as a client reads it (records' images go out as stored)
        answer: dict[str, Any] = orjson.loads(orjson.dumps(self.loop.run_until_complete(run(self.session,
                                                                                         parse(None, body)))))
        return answer

    def write(self, name: str, old: dict | None, new: dict | None, number: int, **options: Any) -> int:
        """An item's write as the write path commits it: the item's cells and its record's cell in one mutation."""
        made = records.change(KEYS[name], old, new)
        assert made is not None
        cell = records.stored_cell(made, "NEW_AND_OLD_IMAGES", number)
        item_cell = SetCell("cf", b"v", b"item's own cell", -1)
        return self.streams.commit(self.rows[name], [item_cell, cell], **options)

    def shards(self) -> list[dict[str, Any]]:
        arn = self.arn()
        return self.call("DescribeStream", StreamArn=arn)["StreamDescription"]["Shards"]

    def arn(self) -> str:
        return self.call("ListStreams", TableName="Orders")["Streams"][0]["StreamArn"]

    def iterator(self, shard: str, kind: str = "TRIM_HORIZON", **more: Any) -> str:
        return self.call("GetShardIterator", StreamArn=self.arn(), ShardId=shard, ShardIteratorType=kind,
                         **more)["ShardIterator"]

    def shard_of(self, name: str) -> str:
        row = self.rows[name]
        return next(s["ShardId"] for s in self.shards() if "EndingSequenceNumber" not in s["SequenceNumberRange"]
                    and _partition(self, s["ShardId"]).holds(row))


def _partition(cloud: Cloud, shard: str) -> partitions.Partition:
    """The partition behind a shard id (its last 8 hex digits: a crc32 of the row range)."""
    return next(partitions.Partition(*bounds) for bounds in cloud.streams.logs
                if shard[-8:] == partitions.shard_id(0, partitions.Partition(*bounds))[-8:])


@pytest.fixture
def cloud(project, bigtable_emulator, monkeypatch) -> Iterator[Cloud]:
    from google.cloud.bigtable.data import BigtableDataClientAsync, DeleteAllFromRow

    from ddb2bigtable.serve.catalog import catalog
    from ddb2bigtable.serve.session import Session

    served = catalog(project, STAGE, {}, "test-project")
    table = served.tables["Orders"]
    rows = {name: table.row_key(keys) for name, keys in KEYS.items()}
    streams = ChangeStreams([(b"", rows["m"]), (rows["m"], b"")])
    server, address = change_stream_server.start(streams, bigtable_emulator.address)
    monkeypatch.setenv("BIGTABLE_EMULATOR_HOST", address)
    loop = asyncio.new_event_loop()

    async def opened() -> Any:
        return BigtableDataClientAsync(project="test-project")
    client = loop.run_until_complete(opened())
    running = Cloud(streams, rows, Session(dataclasses.replace(served, emulator=False), client), loop)
    label = running.arn().rsplit("/", 1)[1]  # each test's stream starts from the partitions it is given

    async def forget() -> None:
        registry = client.get_table(INSTANCE, REGISTRY_ID)
        await registry.mutate_row(f"Orders\0shards\0{label}".encode(), [DeleteAllFromRow()])
    loop.run_until_complete(forget())
    try:
        yield running
    finally:
        loop.run_until_complete(client.close())
        loop.close()
        server.stop(0)


def _page(cloud: Cloud, iterator: str, limit: int = 1000) -> tuple[list[dict[str, Any]], str | None]:
    page = cloud.call("GetRecords", ShardIterator=iterator, Limit=limit)
    return page["Records"], page.get("NextShardIterator")


def _events(found: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(r["eventName"], r["dynamodb"]["Keys"]["pk"]["S"]) for r in found]


def test_records_come_through_read_change_stream_and_reads_resume_from_its_tokens(cloud) -> None:
    shards = cloud.shards()
    assert len(shards) == 2 and not any("ParentShardId" in s for s in shards)
    a, z = KEYS["a"], KEYS["z"]
    cloud.write("a", None, a | {"v": {"S": "1"}}, 1)
    cloud.streams.commit(cloud.rows["a"], [SetCell(records.FAMILY, records.qualifier(9), b"{}", -1)],
                         kind=change_stream_server.R.DataChange.Type.GARBAGE_COLLECTION)  # an aged-out record
    cloud.write("z", None, z | {"big": {"S": "x" * 3000}}, 1, chunk=1000)  # a value in three chunks
    first, after_a = _page(cloud, cloud.iterator(cloud.shard_of("a")))
    assert _events(first) == [("INSERT", "a")] and first[0]["dynamodb"]["NewImage"] == a | {"v": {"S": "1"}}
    assert first[0]["eventSource"] == "aws:dynamodb" and len(first[0]["dynamodb"]["SequenceNumber"]) == 37
    last, _ = _page(cloud, cloud.iterator(cloud.shard_of("z")))
    assert _events(last) == [("INSERT", "z")] and last[0]["dynamodb"]["NewImage"]["big"] == {"S": "x" * 3000}
    assert "start_time" in cloud.streams.requests[-1]  # TRIM_HORIZON: from the stream's start

    cloud.write("a", a | {"v": {"S": "1"}}, a | {"v": {"S": "2"}}, 2)
    for n in (3, 4, 5):
        cloud.write("b", None if n == 3 else KEYS["b"] | {"n": {"N": str(n - 1)}}, KEYS["b"] | {"n": {"N": str(n)}}, n)
    assert after_a is not None
    two, more = _page(cloud, after_a, limit=2)
    assert "continuation_tokens" in cloud.streams.requests[-1]  # from where the last read stopped
    assert _events(two) == [("MODIFY", "a"), ("INSERT", "b")]
    assert more is not None
    rest, caught_up = _page(cloud, more)
    assert _events(rest) == [("MODIFY", "b"), ("MODIFY", "b")]
    numbers = [r["dynamodb"]["SequenceNumber"] for r in first + two + rest]
    assert numbers == sorted(numbers) and len(set(numbers)) == 5
    assert caught_up is not None and _page(cloud, caught_up)[0] == []  # a heartbeat: nothing new, still open


def test_after_sequence_number_and_latest_start_from_a_time_and_leave_out_what_is_before(cloud) -> None:
    shard = cloud.shard_of("a")
    cloud.write("a", None, KEYS["a"], 1)
    cloud.write("a", KEYS["a"], KEYS["a"] | {"v": {"S": "x"}}, 2)
    found, _ = _page(cloud, cloud.iterator(shard))
    latest = cloud.iterator(shard, "LATEST")
    after_first = cloud.iterator(shard, "AFTER_SEQUENCE_NUMBER", SequenceNumber=found[0]["dynamodb"]["SequenceNumber"])
    assert _events(_page(cloud, after_first)[0]) == [("MODIFY", "a")]
    time.sleep(0.002)
    cloud.write("a", KEYS["a"] | {"v": {"S": "x"}}, None, 3)
    assert _events(_page(cloud, latest)[0]) == [("REMOVE", "a")]


def test_a_split_then_a_merge_give_children_with_parents_read_after_them(cloud) -> None:
    """[m, end) splits at q into [m, q) and [q, end); then [start, m) and [m, q) merge into
    [start, q), one parent closing before the other: the child's records wait for both."""
    rows, streams = cloud.rows, cloud.streams
    high = cloud.shard_of("z")
    cloud.write("z", None, KEYS["z"], 1)
    streams.change_partitions([(rows["m"], b"")], [(rows["m"], rows["q"]), (rows["q"], b"")])
    cloud.write("z", KEYS["z"], KEYS["z"] | {"v": {"S": "after the split"}}, 2)
    found, following = _page(cloud, cloud.iterator(high))
    assert _events(found) == [("INSERT", "z")] and following is None  # closed: read to its end
    shards = {s["ShardId"]: s for s in cloud.shards()}
    assert "EndingSequenceNumber" in shards[high]["SequenceNumberRange"]
    children = cloud.call("DescribeStream", StreamArn=cloud.arn(), ShardFilter={
        "Type": "CHILD_SHARDS", "ShardId": high})["StreamDescription"]["Shards"]
    assert len(children) == 2 and {c["ParentShardId"] for c in children} == {high}
    child = cloud.shard_of("z")
    assert child in {c["ShardId"] for c in children}
    assert _events(_page(cloud, cloud.iterator(child))[0]) == [("MODIFY", "z")]
    assert "continuation_tokens" in streams.requests[-1]  # the parent's tokens for the child

    low, middle = cloud.shard_of("a"), cloud.shard_of("m")
    streams.change_partitions([(b"", rows["m"])], [(b"", rows["q"])])
    cloud.write("a", None, KEYS["a"], 1)
    assert _page(cloud, cloud.iterator(low))[1] is None  # the first parent ends; the merged child appears
    merged = next(s["ShardId"] for s in cloud.shards() if s.get("ParentShardId") == low)
    waiting, again = _page(cloud, cloud.iterator(merged))
    assert waiting == [] and again is not None  # its other parent [m, q) is still open
    streams.change_partitions([(rows["m"], rows["q"])], [(b"", rows["q"])])
    assert _page(cloud, cloud.iterator(middle))[1] is None
    found, _ = _page(cloud, again)
    assert _events(found) == [("INSERT", "a")]
    assert len(cloud.shards()) == 5  # 2 first, 2 of the split, 1 of the merge: each once
