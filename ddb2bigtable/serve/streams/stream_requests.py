"""The DynamoDB Streams operations' bodies -> typed requests, checked as DynamoDB checks them.

Like serve/protocol's readers for the DynamoDB operations: each body is read once, in
DynamoDB's order of checks, into a frozen request the operation takes (stream_ops.py).
The words are DynamoDB Local 1.25.1's (captured 2026-12-07, tests/serve/streams): a
`Limit` under 1, an `ExclusiveStartShardId` under 28 characters, a `SequenceNumber` under
21, an unknown `ShardIteratorType`, a sequence number given to TRIM_HORIZON or LATEST or
missing for AT/AFTER_SEQUENCE_NUMBER, a GetRecords `Limit` over 1000. A member of the
wrong JSON type is a SerializationException, as the service answers one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import ServeError, validation
from .positions import Position, read_iterator

# botocore's dynamodbstreams model (ShardIteratorType) also has AT_TIMESTAMP, with Timestamp
ITERATOR_TYPES = ("TRIM_HORIZON", "LATEST", "AT_SEQUENCE_NUMBER", "AFTER_SEQUENCE_NUMBER", "AT_TIMESTAMP")
MAX_RECORDS = 1000  # "The upper limit is 1000" (GetRecords' Limit, DynamoDB Streams API reference, read 2026-12-07)
# ListStreams' and DescribeStream's Limit: "The upper limit is 100" (DynamoDB Streams API reference,
# API_streams_ListStreams.html and API_streams_DescribeStream.html, read 2026-12-07)
MAX_LISTED = 100
SHORTEST_SHARD_ID, SHORTEST_SEQUENCE = 28, 21


@dataclass(frozen=True)
class ListStreams:
    table: str | None
    limit: int
    after_arn: str | None


@dataclass(frozen=True)
class DescribeStream:
    arn: str
    limit: int
    after_shard: str | None
    children_of: str | None = None  # ShardFilter CHILD_SHARDS: the shards whose parent this is


@dataclass(frozen=True)
class GetShardIterator:
    arn: str
    shard: str
    kind: str  # one of ITERATOR_TYPES
    sequence: str | None
    timestamp: float | None = None  # AT_TIMESTAMP's, epoch seconds


@dataclass(frozen=True)
class GetRecords:
    arn: str  # the iterator's stream
    position: Position
    limit: int


def _one_error(message: str) -> ServeError:
    return validation(f"1 validation error detected: {message}")


def _text(body: dict[str, Any], name: str, *, required: bool) -> str | None:
    value = body.get(name)
    if value is None:
        if required:
            field = name[0].lower() + name[1:]
            raise _one_error(f"Value null at '{field}' failed to satisfy constraint: Member must not be null")
        return None
    if not isinstance(value, str):
        raise ServeError("SerializationException", f"{name} must be a string")
    return value


def _limit(body: dict[str, Any], most: int, over: str) -> int:
    value = body.get("Limit", most)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ServeError("SerializationException", "Limit must be an integer")
    if value < 1:
        raise _one_error(f"Value '{value}' at 'limit' failed to satisfy constraint: Member must have value greater "
                         f"than or equal to 1")
    if value > most:
        raise validation(over)
    return value


def list_streams(body: dict[str, Any]) -> ListStreams:
    limit = _limit(body, MAX_LISTED, f"One or more parameter values were invalid: Limit cannot be greater than the "
                   f"maximum allowed size: {MAX_LISTED}")
    return ListStreams(_text(body, "TableName", required=False), limit,
                       _text(body, "ExclusiveStartStreamArn", required=False))


def describe_stream(body: dict[str, Any]) -> DescribeStream:
    arn = _text(body, "StreamArn", required=True)
    over = (f"1 validation error detected: Value '{body.get('Limit')}' at 'limit' failed to satisfy constraint: "
            f"Member must have value less than or equal to {MAX_LISTED}")
    limit = _limit(body, MAX_LISTED, over)
    after = _text(body, "ExclusiveStartShardId", required=False)
    if after is not None and len(after) < SHORTEST_SHARD_ID:
        raise _one_error(f"Value '{after}' at 'exclusiveStartShardId' failed to satisfy constraint: Member must "
                         f"have length greater than or equal to {SHORTEST_SHARD_ID}")
    assert arn is not None  # required
    return DescribeStream(arn, limit, after, _children_of(body.get("ShardFilter")))


def _children_of(given: Any) -> str | None:
    """ShardFilter's parent shard: only `{"Type": "CHILD_SHARDS", "ShardId": ...}` exists."""
    if given is None:
        return None
    if not isinstance(given, dict) or given.get("Type") != "CHILD_SHARDS" or not isinstance(given.get("ShardId"), str):
        raise validation("ShardFilter takes Type CHILD_SHARDS and the ShardId of the parent shard")
    return given["ShardId"]


def get_shard_iterator(body: dict[str, Any]) -> GetShardIterator:
    arn = _text(body, "StreamArn", required=True)
    shard = _text(body, "ShardId", required=True)
    kind = _text(body, "ShardIteratorType", required=True)
    sequence = _text(body, "SequenceNumber", required=False)
    if sequence is not None and len(sequence) < SHORTEST_SEQUENCE:
        raise _one_error(f"Value '{sequence}' at 'sequenceNumber' failed to satisfy constraint: Member must have "
                         f"length greater than or equal to {SHORTEST_SEQUENCE}")
    if kind not in ITERATOR_TYPES:
        raise validation("Invalid ShardIteratorType.")
    if kind.endswith("SEQUENCE_NUMBER") and sequence is None:
        raise validation("One or more parameter values were invalid: Invalid SequenceNumber")
    if not kind.endswith("SEQUENCE_NUMBER") and sequence is not None:
        raise validation("One or more parameter values were invalid: SequenceNumber should not be passed for this "
                         "iterator type")
    timestamp = body.get("Timestamp")
    if timestamp is not None and (isinstance(timestamp, bool) or not isinstance(timestamp, int | float)):
        raise ServeError("SerializationException", "Timestamp must be a number of epoch seconds")
    if (kind == "AT_TIMESTAMP") != (timestamp is not None):
        raise validation("One or more parameter values were invalid: Timestamp goes with ShardIteratorType "
                         "AT_TIMESTAMP, and AT_TIMESTAMP needs it")
    assert arn is not None and shard is not None  # required
    return GetShardIterator(arn, shard, kind, sequence, timestamp)


def get_records(body: dict[str, Any]) -> GetRecords:
    """The iterator is read before the Limit is checked, as DynamoDB Local does."""
    given = _text(body, "ShardIterator", required=True)
    read = read_iterator(given or "")
    if read is None:
        raise validation("Invalid ShardIterator")
    limit = _limit(body, MAX_RECORDS, f"One or more parameter values were invalid: Limit should be less than or "
                   f"equal to {MAX_RECORDS}")
    return GetRecords(*read, limit)
