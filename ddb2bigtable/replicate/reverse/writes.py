"""Reverse replication's sink (pages.Sink): serve's stream records -> the source DynamoDB table.

Whole images, no conditions. An INSERT or MODIFY puts the record's NewImage (the item as
Bigtable holds it after the write), a REMOVE (a TTL expiry too) deletes the item's key.
Each write replaces, so the last record of an item decides what DynamoDB holds, and a
replay of any earlier stretch ends at the same item, as forward replication's does
(apply.py). Within a page only an item's last record is written: its image already
holds the earlier ones' changes. Pages of one shard are written one after the other and
a child shard only after its parent, so an item's records reach DynamoDB in stream order.

Why unconditional: a condition (on a version attribute, or on the record's OldImage)
would refuse exactly the writes a resume replays, so a run killed mid-page could never
converge; and DynamoDB takes no other writes while the application writes to serve
(the runbook, docs/migration-guide.md): an item changed in DynamoDB meanwhile is
overwritten by its next record. Unconditional writes also batch: BatchWriteItem takes
25 puts and deletes a call (an item at most once in one call), several calls in flight.

A call DynamoDB refuses as a whole (ValidationException: one item of the 25 it will not
take: over 400 KB, an empty key, an index key of another type) is written again item by
item, so only the items DynamoDB refuses become dead letters, each saying why. Items
left unprocessed (throttling) are sent again after a pause doubling up to a second, for
up to UNPROCESSED_SECONDS; past that DynamoDB is out of reach as far as the run goes
(`Unavailable`), and the round is tried again from the checkpoint (outage.py).
"""

from __future__ import annotations

import asyncio
import copy
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import orjson

from ...codec.items import Item
from ..aws_clients import base64_text
from ..pages import Prepared
from ..stream import StreamReader, Unavailable
from ..stream_records import StreamRecord, binaries_as_bytes

BATCH = 25  # BatchWriteItem's most requests a call (API reference, BatchWriteItem, read 2026-12-07)
IN_FLIGHT = 8  # BatchWriteItem calls at once per page
UNPROCESSED_SECONDS = 60.0  # items DynamoDB keeps leaving unprocessed for this long: an outage
# Refused for the item itself (what a dead letter says); any other error is the call's.
ITEM_REFUSALS = ("ValidationException", "ItemCollectionSizeLimitExceededException")


@dataclass(frozen=True)
class Write:
    """One item's write: a BatchWriteItem request, or why none can be made."""

    record: StreamRecord
    request: dict[str, Any] | None
    refused: str | None = None


def item_identity(keys: Item) -> bytes:
    """An item's key as JSON, the same for every record of the item (orjson: a page's 800
    keys took 3.6 us each with the stdlib's, sorted; binary as base64, as GetRecords gives it)."""
    return orjson.dumps(keys, option=orjson.OPT_SORT_KEYS, default=base64_text)


def request_for(record: StreamRecord) -> Write:
    """The write that leaves DynamoDB holding what Bigtable held after `record`."""
    if record.kind in ("remove", "ttl") or record.gone:
        return Write(record, {"DeleteRequest": {"Key": record.keys}})
    if record.new_image is None:
        return Write(record, None, f"a {record.kind.upper()} record without NewImage")
    return Write(record, {"PutRequest": {"Item": record.new_image}})


def last_writes(records: list[StreamRecord]) -> list[Write]:
    """Each item's last record of the page, as its write, in the order of those last records."""
    last: dict[bytes, StreamRecord] = {}
    for record in records:
        identity = item_identity(record.keys)
        last.pop(identity, None)
        last[identity] = record
    return [request_for(r) for r in last.values()]


class DynamoDBSink:
    """Writes pages of serve's stream into the source table through `dynamodb`, its
    DynamoDB-side reader (timeouts, retries and error wording of every AWS call)."""

    def __init__(self, dynamodb: StreamReader, in_flight: int = IN_FLIGHT):
        self.dynamodb, self.table, self.name = dynamodb, dynamodb.table, dynamodb.where
        self.in_flight = in_flight
        # Its own threads: asyncio's default pool has cpu_count + 4 (6 on 2 cores), fewer than
        # the calls in flight, and the run's pool reads and encodes.
        self.pool = ThreadPoolExecutor(max_workers=in_flight, thread_name_prefix="reverse-write")

    def encode(self, records: list[StreamRecord], start_micros: int) -> list[Write]:
        return last_writes(records)

    async def write(self, prepared: Prepared) -> dict[tuple[str, int], str]:
        """Every item's write of the page (several calls at once: each item once per page,
        so no two are of one item); an item refused -> its records' dead letter."""
        writes: list[Write] = prepared.writes  # type: ignore[assignment]
        refused = {_source(w.record): w.refused for w in writes if w.refused}
        sendable = [w for w in writes if w.request is not None]
        limit = asyncio.Semaphore(self.in_flight)

        async def one(batch: list[Write]) -> dict[tuple[str, int], str]:
            async with limit:
                return await asyncio.get_running_loop().run_in_executor(self.pool, self._batch, batch)
        for found in await asyncio.gather(*(one(sendable[i:i + BATCH]) for i in range(0, len(sendable), BATCH))):
            refused.update(found)
        if not refused:  # the common case, on the event loop: no record's key written out again
            return {}
        # The item's earlier records of the page were not written alone: their dead letter is the item's.
        by_item = {item_identity(w.record.keys): reason for w in writes
                   if (reason := refused.get(_source(w.record))) is not None}
        return {_source(r): by_item[identity] for r in prepared.records
                if (identity := item_identity(r.keys)) in by_item}

    def _batch(self, batch: list[Write]) -> dict[tuple[str, int], str]:
        """One BatchWriteItem (unprocessed items sent again), else item by item."""
        from botocore.exceptions import ClientError

        waiting = [w.request for w in batch]
        pause, began = 0.05, time.monotonic()
        while waiting:
            try:
                answer = self.dynamodb.call("batch_write_item", "UnprocessedItems",
                                            RequestItems={self.table: waiting})
            except ClientError as error:
                if error.response["Error"]["Code"] not in ITEM_REFUSALS:
                    raise
                return self._one_by_one([w for w in batch if w.request in waiting])
            waiting = answer["UnprocessedItems"].get(self.table, [])
            if waiting:
                if time.monotonic() - began > UNPROCESSED_SECONDS:
                    raise Unavailable(self.name, f"left {len(waiting)} item(s) unprocessed for "
                                                 f"{UNPROCESSED_SECONDS:g} s (throttled): raise its write capacity")
                time.sleep(pause)
                pause = min(1.0, pause * 2)
        return {}

    def _one_by_one(self, batch: list[Write]) -> dict[tuple[str, int], str]:
        from botocore.exceptions import ClientError

        refused = {}
        for w in batch:
            assert w.request is not None
            put = w.request.get("PutRequest")
            try:  # through botocore's own serializer, which takes binaries as bytes (base64 text it would encode again)
                if put is not None:
                    self.dynamodb.call("put_item", "ResponseMetadata", TableName=self.table,
                                       Item=binaries_as_bytes(copy.deepcopy(put["Item"])))
                else:
                    self.dynamodb.call("delete_item", "ResponseMetadata", TableName=self.table,
                                       Key=binaries_as_bytes(copy.deepcopy(w.request["DeleteRequest"]["Key"])))
            except ClientError as error:
                if error.response["Error"]["Code"] not in ITEM_REFUSALS:
                    raise
                refused[_source(w.record)] = (f"DynamoDB refused it: {error.response['Error']['Code']}: "
                                              f"{error.response['Error'].get('Message', '')}")
        return refused


def _source(record: StreamRecord) -> tuple[str, int]:
    return record.shard, int(record.sequence)
