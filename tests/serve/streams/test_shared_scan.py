"""A worker's reads of a stream's four shards share one scan of the table (the emulator
visits every row of it per scan: benchmarks/stream_visibility.py), and still give each
record once, in its own shard."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import orjson

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


def answered(page: scan_source.Page) -> list[dict]:
    """A page's records as a client reads them (their keys and images go out as stored)."""
    records: list[dict] = orjson.loads(orjson.dumps(page.records))
    return records


def just_before() -> str:
    """A position just before the writes that follow: the stream holds whatever the tests
    before wrote, enough for a shard's first page to end before these (in CI's processes a
    page of 1,000; after test_stream_api's 1 MB pages, a page of 1 MB within the last second).
    The emulator stamps a cell at its commit's millisecond, so one before now is before them."""
    return positions.at_time(time.time_ns() // 1_000_000 * 1000 - 1000)


def test_the_four_shards_of_one_poll_cost_one_scan(streamed, arn, monkeypatch) -> None:
    from google.cloud.bigtable.data import BigtableDataClientAsync

    from ddb2bigtable.serve.catalog import catalog
    from ddb2bigtable.serve.session import Session

    writer, written, since = Writer(streamed), {}, just_before()
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
            return [answered(page) for page in pages]

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
                read.extend(answered(page))
                position = page.position
                await asyncio.sleep(scan_source.SHARED_SECONDS * 2)
            return read

    read = asyncio.run(pages())
    got = [r["dynamodb"]["Keys"] for r in read if r["dynamodb"]["Keys"]["pk"]["S"].startswith("backlog-")]
    assert got == mine
    assert len(scans) == 2, scans


def _session(streamed):
    from google.cloud.bigtable.data import BigtableDataClientAsync

    from ddb2bigtable.serve.catalog import catalog
    from ddb2bigtable.serve.session import Session

    client = BigtableDataClientAsync(project=streamed.project)
    return client, Session(catalog(streamed.root, STAGE, {}, streamed.project), client)


async def _orders_stream(session: Any) -> Any:
    """The Orders stream, once no scan of an earlier test is fresh (each read below scans)."""
    stream = registry.current(await registry.named(session, "Orders"))
    assert stream is not None
    await asyncio.sleep(scan_source.SHARED_SECONDS * 2)
    return stream


def test_the_four_shards_read_at_once_cost_one_scan(streamed, arn, monkeypatch) -> None:
    """A reader of every shard at once (replicate's workers, a KCL worker per shard) sends
    the four GetRecords together: they wait for one scan instead of making four."""
    writer, since = Writer(streamed), just_before()
    rows = {positions.shard_of_row(writer.write({"pk": {"S": f"together-{n}"}, "sk": {"N": str(n)}}, None,
                                                {"pk": {"S": f"together-{n}"}, "sk": {"N": str(n)}}))
            for n in range(20)}
    assert rows == set(range(positions.SHARDS))
    scans = counted_scans(monkeypatch)

    async def together() -> list[list[dict]]:
        client, session = _session(streamed)
        async with client:
            stream = await _orders_stream(session)
            now = time.time_ns() // 1000
            pages = await asyncio.gather(*(scan_source.read(session, stream, positions.Position(i, since, True,
                                                                                                now // 1000),
                                                            1000, now) for i in range(positions.SHARDS)))
            return [answered(page) for page in pages]

    pages = asyncio.run(together())
    assert len(scans) == 1, scans
    found = sorted(r["dynamodb"]["Keys"]["sk"]["N"] for page in pages for r in page
                   if r["dynamodb"]["Keys"]["pk"]["S"].startswith("together-"))
    assert found == sorted(str(n) for n in range(20))


def test_a_later_read_scans_only_the_time_since_the_last_scan(streamed, arn, monkeypatch) -> None:
    """The records a worker's scans found are kept: a read past SHARED_SECONDS asks the
    emulator only for the cells committed since the last scan's bound (a scan's cost is the
    rows it returns: each record crosses the channel once per worker, not once a read), and
    still finds every record of its shard from its own position, the old ones and the new."""
    writer, since = Writer(streamed), just_before()

    def write(name: str) -> dict[int, list[str]]:
        out: dict[int, list[str]] = {}
        for n in range(12):
            keys = {"pk": {"S": f"{name}-{n}"}, "sk": {"N": str(n)}}
            out.setdefault(positions.shard_of_row(writer.write(keys, None, keys)), []).append(f"{name}-{n}")
        return out

    first = write("since-a")
    scans = counted_scans(monkeypatch)

    async def two_polls() -> list[list[dict]]:
        client, session = _session(streamed)
        async with client:
            stream = await _orders_stream(session)
            now = time.time_ns() // 1000
            await scan_source.read(session, stream, positions.Position(0, since, True, now // 1000), 1000, now)
            await asyncio.to_thread(write, "since-b")
            await asyncio.sleep(scan_source.SHARED_SECONDS * 2)
            now = time.time_ns() // 1000
            return [answered(await scan_source.read(session, stream, positions.Position(i, since, True, now // 1000),
                                                    1000, now)) for i in range(positions.SHARDS)]

    pages = asyncio.run(two_polls())
    assert len(scans) == 2, scans
    (_, first_bound), (second_start, _) = scans
    assert second_start == first_bound, "the second scan starts where the first ended"
    for shard, page in enumerate(pages):
        got = [r["dynamodb"]["Keys"]["pk"]["S"] for r in page if r["dynamodb"]["Keys"]["pk"]["S"].startswith("since-")]
        assert [k for k in got if k.startswith("since-a")] == first.get(shard, [])
        assert got[len(first.get(shard, [])):] and all(k.startswith("since-b") for k in got[len(first.get(shard, [])):])
