"""`cutover check --reverse`: does DynamoDB again hold every item, so that the application's
writes can move back to it?

The forward check's mirror: the sample comes from Bigtable, which holds the items since
the write switch, and each sampled item is looked up in DynamoDB (strongly consistent
BatchGetItem) and judged exactly as the forward check judges (load/verify.py:
`Codec.expected` of DynamoDB's item against the items decoded from Bigtable's row), so a
difference is worded the same both ways. A difference is read again from both sides
after the re-check pause, as forward's is. The lag is reverse replication's, from its
checkpoints (`replicate-reverse*.json`), bound to serve's current stream.

Sampling Bigtable: Bigtable has no random read, so rows are read from random places in
the key space. Row keys are taken as numbers (their first KEY_BYTES bytes, big-endian);
a place is drawn between the table's first row key and an upper bound, and the next
RUN rows from there are read. A place past the last item (nothing read, or only rows that
hold no item: serve's reserved rows sit at the top of the key space) lowers the bound to
it, so the draws soon fall among the items. Keys cluster (one partition key's items share
a prefix), so half the reads go on after where an earlier read stopped, walking into the
dense stretches a random place seldom lands in (twice as far each time a read brought
only rows already sampled). The sample is spread over the table,
not uniform over its items, which suffices to find an item DynamoDB lacks where the
stream was not applied. Items DynamoDB holds and Bigtable no longer does (a REMOVE not
applied) are the forward check's "missing in Bigtable": run it as well.
"""

from __future__ import annotations

import asyncio
import functools
import random
import time

from google.cloud.bigtable.data import BigtableDataClientAsync, ReadRowsQuery, RowRange

from ...bigtable.deadlines import lookup_table
from ...codec.codec import Codec
from ...codec.items import Item
from ...load.state import target
from ...load.verify import Difference, RowReader, canonical, item_difference
from ...spec.model import TableSpec
from ..bigtable_only import decoded_items
from ..cutover import CutoverOptions, CutoverReport, bigtable_failures, read_lag, refuse_bad_options
from ..opening import now_micros, recorded_types
from ..run import ReplicateOptions
from ..shares import REVERSE
from ..stream import StreamReader
from ..through_serve import key_of
from .run import reverse_target, serves_stream, stream_endpoint

KEY_BYTES = 16  # of a row key, taken as a number: places are drawn among these
RUN = 10  # rows read from each place
MAX_RUN = 1000  # rows read on from where a read stopped, doubling while they were all sampled already
MAX_ROUNDS = 200  # of `segments` places each: a table that yields no more items by then has been seen
STALE_ROUNDS = 25  # rounds in a row that found no new item nor lowered the bound: a small table, seen whole

Sampled = tuple[bytes, Item]  # Bigtable's row key and one item of the row
Verdict = Difference | str | None  # None: DynamoDB holds it; "expired"; or how it differs


def _number(key: bytes) -> int:
    return int.from_bytes(key[:KEY_BYTES].ljust(KEY_BYTES, b"\0"), "big")


def _key(number: int) -> bytes:
    return number.to_bytes(KEY_BYTES, "big")


async def bigtable_sample(table: object, codec: Codec, count: int, segments: int, rng: random.Random,
                          now: int) -> list[Sampled]:
    """About `count` items of the table, `segments` places read at once."""
    read = table.read_rows  # type: ignore[attr-defined]
    first = await read(ReadRowsQuery(row_ranges=[RowRange()], limit=1))
    if not first:
        return []
    low, high = _number(first[0].row_key), 1 << (8 * KEY_BYTES)
    found: dict[tuple[bytes, str], Sampled] = {}

    def add(rows: list[object]) -> bool:
        items = [(row.row_key, item) for row in rows for item in decoded_items(codec, row, now)]  # type: ignore[attr-defined]
        for row_key, item in items:
            found.setdefault((row_key, repr(sorted(canonical(key_of(codec.table, item)).items()))), (row_key, item))
        return bool(items)

    add(first)  # a place is drawn after it: the first row would never be read again
    ends: list[tuple[bytes, int]] = []  # where a read stopped with rows after it, and how many to read on
    stale = 0
    for _ in range(MAX_ROUNDS):
        if len(found) >= count or high <= low or stale >= STALE_ROUNDS:
            break
        before, bound = len(found), high
        places: list[tuple[bytes, bool, int]] = []  # (start key, inclusive, rows to read)
        for _ in range(segments):
            if ends and rng.random() < 0.5:
                key, limit = ends.pop(rng.randrange(len(ends)))
                places.append((key, False, limit))
            else:
                places.append((_key(rng.randrange(low, high)), True, RUN))
        answers = await asyncio.gather(*(read(ReadRowsQuery(row_ranges=[RowRange(start_key=key, start_is_inclusive=at)],
                                                            limit=limit)) for key, at, limit in places))
        for (key, inclusive, limit), rows in zip(places, answers, strict=True):
            known = len(found)
            if not add(rows) and inclusive:
                high = min(high, _number(key))  # past the last item
            if len(rows) == limit:  # more after it: go on, faster through rows already sampled
                ends.append((rows[-1].row_key, RUN if len(found) > known else min(MAX_RUN, 2 * limit)))
        stale = 0 if len(found) > before or high < bound else stale + 1  # lowering the bound is progress too
    return list(found.values())[:count]


def _judged(codec: Codec, sampled: list[Sampled], dynamodb: list[Item], now: int) -> list[tuple[Sampled, Verdict]]:
    """Each sampled item with None (DynamoDB holds it), "expired" (past its TTL in DynamoDB)
    or its `Difference` (kind "missing": DynamoDB lacks it)."""
    table = codec.table
    held = {repr(sorted(canonical(key_of(table, item)).items())): item for item in dynamodb}
    out: list[tuple[Sampled, Verdict]] = []
    for row_key, item in sampled:
        theirs = held.get(repr(sorted(canonical(key_of(table, item)).items())))
        if theirs is None:
            out.append(((row_key, item), Difference("missing", "not in DynamoDB")))
            continue
        wanted = codec.expected(theirs, now_micros=now)
        out.append(((row_key, item), "expired" if wanted is None else item_difference(wanted, [item], row_key)))
    return out


async def check_reverse(table: TableSpec, options: CutoverOptions, stream_endpoint_url: str | None,
                        dynamodb: StreamReader | None = None, stream: StreamReader | None = None) -> CutoverReport:
    """The Bigtable sample judged in DynamoDB, and reverse replication's lag. `stream`:
    serve's stream at `stream_endpoint_url` (default: the source table's there)."""
    refuse_bad_options(options)
    began, source = time.monotonic(), table.source
    report = CutoverReport(table.id, options.lag_limit_seconds, missing_side="DynamoDB")
    dynamodb = dynamodb or StreamReader(source.table, source.region, options.endpoint_url)
    url = stream_endpoint(stream_endpoint_url)
    stream = stream or serves_stream(table, url)
    bound = reverse_target(table, ReplicateOptions(options.project, options.instance_id, None, options.work_dir,
                                                   endpoint_url=options.endpoint_url, stream_endpoint_url=url))
    serve = stream
    read_lag(options.work_dir, bound, functools.cache(lambda: serve.listed_stream(fetch_keys_only=True).arn),
             now_micros(), report, REVERSE)
    where = target(options.project, options.instance_id, table.id)
    codec = Codec(table, await recorded_types(table, options.work_dir, where))
    with bigtable_failures(options, table.id):
        async with BigtableDataClientAsync(project=options.project) as client:
            rows = RowReader(lookup_table(client, options.instance_id, table.id, options.app_profile_id),
                             codec, codec.ttl_families, now_micros())
            sampled = await bigtable_sample(rows.table, codec, options.sample, options.segments,
                                            random.Random(options.seed), rows.now)
            results = await _compared(codec, rows, dynamodb, sampled, options.recheck_seconds)
    for (row_key, item), result in results:
        report.tally(key_of(table, item), functools.partial(bytes, row_key), result)
    report.seconds = time.monotonic() - began
    return report


async def _compared(codec: Codec, rows: RowReader, dynamodb: StreamReader, sampled: list[Sampled],
                    recheck_seconds: float) -> list[tuple[Sampled, Verdict]]:
    """The sample judged in DynamoDB; what differs is read again from both sides after
    `recheck_seconds` (reverse replication may have been applying it), and only what
    still differs counts. An item Bigtable no longer holds by then is left out."""
    def keys(items: list[Sampled]) -> list[Item]:
        return [key_of(codec.table, item) for _, item in items]

    results = _judged(codec, sampled, await asyncio.to_thread(dynamodb.current, keys(sampled)), rows.now)
    suspects = [s for s, result in results if isinstance(result, Difference)]
    if not suspects:
        return results
    await asyncio.sleep(recheck_seconds)
    again = await rows.lookup(list(dict.fromkeys(row_key for row_key, _ in suspects)))
    fresh = [(row_key, item) for row_key, decoded in again.items() if isinstance(decoded, list)
             for item in decoded
             if any(canonical(key_of(codec.table, item)) == canonical(key_of(codec.table, s)) for _, s in suspects)]
    kept = [(s, r) for s, r in results if not isinstance(r, Difference)]
    return kept + _judged(codec, fresh, await asyncio.to_thread(dynamodb.current, keys(fresh)), rows.now)


def run_reverse_check(table: TableSpec, options: CutoverOptions, stream_endpoint_url: str | None) -> CutoverReport:
    return asyncio.run(check_reverse(table, options, stream_endpoint_url))
