"""A worker's reads of a stream's four shards share one scan of the table (the emulator
visits every row of it per scan: benchmarks/stream_visibility.py), and still give each
record once, in its own shard."""

from __future__ import annotations

import asyncio
import time

from ddb2bigtable.serve.streams import positions, registry, scan_source

from .conftest import STAGE
from .test_stream_api import Writer


def counted_scans(monkeypatch) -> list[tuple]:
    """Each scan of the table the emulator reader makes from here on, by its arguments."""
    scans: list[tuple] = []
    scan = scan_source._scan

    async def counted(*args):
        scans.append(args[2:])
        return await scan(*args)

    monkeypatch.setattr(scan_source, "_scan", counted)
    return scans


def test_the_four_shards_of_one_poll_cost_one_scan(streamed, arn, monkeypatch) -> None:
    from google.cloud.bigtable.data import BigtableDataClientAsync

    from ddb2bigtable.serve.catalog import catalog
    from ddb2bigtable.serve.session import Session

    # read from just before these writes: the stream holds whatever the tests before wrote
    # (in CI's processes, enough for a shard's first page of 1,000 to end before these)
    writer, written, since = Writer(streamed), {}, positions.at_time(time.time_ns() // 1000 - 1_000_000)
    for n in range(40):
        keys = {"pk": {"S": f"shared-{n}"}, "sk": {"N": str(n)}}
        written.setdefault(positions.shard_of_row(writer.write(keys, None, keys | {"n": {"N": str(n)}})), []).append(
            keys)
    assert len(written) == positions.SHARDS
    scans = counted_scans(monkeypatch)

    async def poll() -> list[list[dict]]:
        async with BigtableDataClientAsync(project=streamed.project) as client:
            session = Session(catalog(streamed.root, STAGE, {}, streamed.project), client)
            stream = registry.current(await registry.named(session, "Orders"))
            assert stream is not None
            now = time.time_ns() // 1000
            pages = [await scan_source.read(session, stream, positions.Position(i, since, True, now // 1000), 1000,
                                            time.time_ns() // 1000) for i in range(positions.SHARDS)]
            await asyncio.sleep(scan_source.SHARED_SECONDS * 2)
            await scan_source.read(session, stream, positions.Position(0, since, True, now // 1000), 1000,
                                   time.time_ns() // 1000)
            return [page.records for page in pages]

    pages = asyncio.run(poll())
    assert len(scans) == 2, "one scan for the four shards, another once it is SHARED_SECONDS old"
    for shard, page in enumerate(pages):
        got = [r["dynamodb"]["Keys"] for r in page if r["dynamodb"]["Keys"]["pk"]["S"].startswith("shared-")]
        assert got and sorted(map(str, got)) == sorted(map(str, written[shard]))


def test_a_reader_catching_up_pays_one_scan_for_its_backlog_not_one_a_page(streamed, arn, monkeypatch) -> None:
    """Pages a scan fills are answered from it however old it is (reverse replication after
    the write switch reads thousands of records a page at a time): a backlog of 12 records
    of one shard read 3 a page, each page after the scan's SHARED_SECONDS, costs one scan
    for the first three pages and one more for the last, which the first does not fill (it
    looks for records committed since); each record comes once, in order."""
    from google.cloud.bigtable.data import BigtableDataClientAsync

    from ddb2bigtable.serve.catalog import catalog
    from ddb2bigtable.serve.session import Session

    writer, mine = Writer(streamed), []
    began = time.time_ns() // 1000
    n = 0
    while len(mine) < 12:
        keys = {"pk": {"S": f"backlog-{n}"}, "sk": {"N": str(n)}}
        if positions.shard_of_row(writer.write(keys, None, keys | {"n": {"N": str(n)}})) == 0:
            mine.append(keys)
        n += 1
    scans = counted_scans(monkeypatch)

    async def pages() -> list[dict]:
        async with BigtableDataClientAsync(project=streamed.project) as client:
            session = Session(catalog(streamed.root, STAGE, {}, streamed.project), client)
            stream = registry.current(await registry.named(session, "Orders"))
            assert stream is not None
            position, read = positions.Position(0, positions.at_time(began), True, began // 1000), []
            for _ in range(4):
                page = await scan_source.read(session, stream, position, 3, time.time_ns() // 1000)
                read.extend(page.records)
                position = page.position
                await asyncio.sleep(scan_source.SHARED_SECONDS * 2)
            return read

    read = asyncio.run(pages())
    got = [r["dynamodb"]["Keys"] for r in read if r["dynamodb"]["Keys"]["pk"]["S"].startswith("backlog-")]
    assert got == mine
    assert len(scans) == 2, scans
