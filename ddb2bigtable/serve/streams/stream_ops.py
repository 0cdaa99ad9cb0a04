"""The DynamoDB Streams API: ListStreams, DescribeStream, GetShardIterator, GetRecords.

Answered from the registry of streams (registry.py) and the records of the stage's backend
(sources.py): on emulator stages the scan of the tables' stream cells (scan_source.py); on
cloud stages Bigtable's change streams (change_source.py, its shards in cloud_shards.py).
Errors are DynamoDB's, in DynamoDB Local 1.25.1's words where it has them.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

from ...spec.errors import clip
from ..errors import ServeError, validation
from ..session import Session
from . import stream_requests
from .positions import (
    ITERATOR_SECONDS,
    RETENTION_MICROS,
    Position,
    arn_parts,
    at_time,
    is_sequence,
    iterator,
    sequence_micros,
)
from .registry import Stream, every, named
from .sources import source
from .stream_requests import DescribeStream, GetRecords, GetShardIterator, ListStreams

TARGET_PREFIX = "DynamoDBStreams_20120810."


def _not_found(arn: str) -> ServeError:
    return ServeError("ResourceNotFoundException", f"Requested resource not found: Stream: {clip(arn)} not found")


def _trimmed() -> ServeError:
    return ServeError("TrimmedDataAccessException", "The operation attempted to read past the oldest stream record "
                      "in a shard: records are kept 24 hours")


async def _stream(session: Session, arn: str) -> Stream:
    parts = arn_parts(arn)
    if parts is None:
        raise _not_found(arn)
    found = next((s for s in await named(session, parts[0]) if s.arn == arn), None)
    if found is None:
        raise _not_found(arn)
    return found


def _listed(stream: Stream) -> dict[str, Any]:
    return {"StreamArn": stream.arn, "TableName": stream.table, "StreamLabel": stream.label}


async def list_streams(session: Session, request: ListStreams) -> dict[str, Any]:
    """Every stream (the enabled and those disabled less than 24 hours ago), newest first
    as DynamoDB Local lists them, of one table if asked."""
    found = sorted(await every(session), key=lambda s: s.created_ms, reverse=True)
    if request.table is not None:
        found = [s for s in found if s.table == request.table]
    if request.after_arn is not None:
        arns = [s.arn for s in found]
        found = found[arns.index(request.after_arn) + 1:] if request.after_arn in arns else []
    out: dict[str, Any] = {"Streams": [_listed(s) for s in found[:request.limit]]}
    if len(found) > request.limit:
        out["LastEvaluatedStreamArn"] = found[request.limit - 1].arn
    return out


async def describe_stream(session: Session, request: DescribeStream) -> dict[str, Any]:
    stream = await _stream(session, request.arn)
    shards = await source(session).shards(session, stream)
    if request.children_of is not None:  # a shard's children (emulator shards never split: none)
        shards = [s for s in shards if s.parent == request.children_of]
    if request.after_shard is not None:
        ids = [s.id for s in shards]
        shards = shards[ids.index(request.after_shard) + 1:] if request.after_shard in ids else []
    described = []
    for shard in shards[:request.limit]:
        numbers = {"StartingSequenceNumber": shard.start} | ({"EndingSequenceNumber": shard.end} if shard.end else {})
        described.append({"ShardId": shard.id, "SequenceNumberRange": numbers}
                         | ({"ParentShardId": shard.parent} if shard.parent else {}))
    out: dict[str, Any] = {
        "StreamArn": stream.arn, "StreamLabel": stream.label,
        "StreamStatus": "ENABLED" if stream.closed_ms is None else "DISABLED", "StreamViewType": stream.view,
        "CreationRequestDateTime": stream.created_ms / 1000, "TableName": stream.table,
        "KeySchema": [{"AttributeName": name, "KeyType": kind} for name, kind in stream.keys],
        "Shards": described}
    if len(shards) > request.limit:
        out["LastEvaluatedShardId"] = shards[request.limit - 1].id
    return {"StreamDescription": out}


async def get_shard_iterator(session: Session, request: GetShardIterator) -> dict[str, Any]:
    stream = await _stream(session, request.arn)
    shard = next((s for s in await source(session).shards(session, stream) if s.id == request.shard), None)
    if shard is None:
        raise ServeError("ResourceNotFoundException", "Shard does not exist")
    now_ms = int(time.time() * 1000)
    if request.kind == "TRIM_HORIZON":
        position = Position(shard.index, "", True, now_ms)
    elif request.kind == "LATEST":
        position = Position(shard.index, at_time(now_ms * 1000), True, now_ms)
    elif request.kind == "AT_TIMESTAMP":  # the first record committed at or after it; before the trim: the oldest
        micros = int(round((request.timestamp or 0) * 1000)) * 1000
        if micros > now_ms * 1000:
            raise validation("One or more parameter values were invalid: Timestamp is in the future")
        oldest = now_ms * 1000 - RETENTION_MICROS
        position = Position(shard.index, at_time(micros) if micros > oldest else "", True, now_ms)
    else:
        number = request.sequence or ""
        if not is_sequence(number):
            raise validation("One or more parameter values were invalid: Invalid SequenceNumber")
        if sequence_micros(number) < now_ms * 1000 - RETENTION_MICROS:
            raise _trimmed()
        position = Position(shard.index, number, request.kind == "AT_SEQUENCE_NUMBER", now_ms)
    return {"ShardIterator": iterator(stream.arn, position)}


async def get_records(session: Session, request: GetRecords) -> dict[str, Any]:
    arn, position = request.arn, request.position
    now_micros = time.time_ns() // 1000
    if now_micros - position.issued_ms * 1000 > ITERATOR_SECONDS * 1_000_000:
        raise ServeError("ExpiredIteratorException", "Iterator expired: a shard iterator is good for 15 minutes "
                         "after GetShardIterator or the GetRecords that returned it")
    if position.after and sequence_micros(position.after) < now_micros - RETENTION_MICROS:
        raise _trimmed()
    stream = await _stream(session, arn)
    page = await source(session).read(session, stream, position, request.limit, now_micros)
    out: dict[str, Any] = {"Records": page.records}
    if not page.finished:
        renewed = Position(page.position.shard, page.position.after, page.position.inclusive, now_micros // 1000,
                           page.position.token)
        out["NextShardIterator"] = iterator(arn, renewed)
    return out


Operation = tuple[Callable[[Any, dict[str, Any]], Any], Callable[[Session, Any], Awaitable[dict[str, Any]]]]
OPERATIONS: dict[str, Operation] = {
    "ListStreams": (lambda _catalog, body: stream_requests.list_streams(body), list_streams),
    "DescribeStream": (lambda _catalog, body: stream_requests.describe_stream(body), describe_stream),
    "GetShardIterator": (lambda _catalog, body: stream_requests.get_shard_iterator(body), get_shard_iterator),
    "GetRecords": (lambda _catalog, body: stream_requests.get_records(body), get_records),
}
