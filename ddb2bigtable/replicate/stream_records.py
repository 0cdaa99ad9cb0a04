"""A stream's records as replication uses them: GetRecords' answer -> `StreamRecord`s.

GetRecords' answers come as raw JSON (aws_clients.py parses them with orjson, not
botocore's shape walker), so epoch seconds and base64 binaries are turned into what the
codec takes here (`parse_record`); boto3's own parsed form (a datetime, bytes) is taken
too. A page keeps its records as JSON until they are first asked for (`Page.records`), in
the thread that prepares the page, not the one that reads the stream.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..codec.items import Item
from ..codec.scalars import binary_from_text

# as GetRecords carries it (botocore's dynamodbstreams model, Identity; 2026-12-07), not Lambda's lower case
TTL_PRINCIPAL = {"Type": "Service", "PrincipalId": "dynamodb.amazonaws.com"}


@dataclass(frozen=True)
class StreamRecord:
    """One stream record, as much of it as replication uses."""

    shard: str
    sequence: str
    kind: str  # insert | modify | remove | ttl (a REMOVE by DynamoDB's TTL)
    micros: int  # ApproximateCreationDateTime, epoch microseconds (rounded down by AWS)
    keys: Item
    new_image: Item | None
    old_image: Item | None
    gone: bool = False  # a KEYS_ONLY record whose item GetItem no longer finds: delete it


def parse_record(shard: str, raw: dict[str, Any], binary_text: bool = False) -> StreamRecord:
    """A record as GetRecords gives it (raw JSON: epoch seconds, base64 binaries) or as
    boto3's parser does (a datetime, bytes). `binary_text`: raw binaries stay base64 text,
    the form a DynamoDB request carries them in (reverse writes the images as they came)."""
    data = raw["dynamodb"]
    kind = raw["eventName"].lower()
    if kind == "remove" and raw.get("userIdentity") == TTL_PRINCIPAL:
        kind = "ttl"
    moment = data["ApproximateCreationDateTime"]
    seconds = moment.timestamp() if isinstance(moment, datetime) else float(moment)
    new, old = data.get("NewImage"), data.get("OldImage")
    keys = data["Keys"]
    if not binary_text:
        keys, new, old = (None if image is None else binaries_as_bytes(image) for image in (keys, new, old))
    return StreamRecord(shard, data["SequenceNumber"], kind, int(seconds * 1_000_000), keys, new, old)


def binaries_as_bytes(image: dict[str, Any]) -> dict[str, Any]:
    """An image with its B and BS values as bytes (raw JSON has them in base64), in place."""
    for value in image.values():
        _binary_value(value)
    return image


def _binary_value(value: dict[str, Any]) -> None:
    tag, inner = next(iter(value.items()))
    if tag == "B" and isinstance(inner, str):
        value["B"] = binary_from_text(inner)
    elif tag == "BS" and inner and isinstance(inner[0], str):
        value["BS"] = [binary_from_text(x) for x in inner]
    elif tag == "M":
        for member in inner.values():
            _binary_value(member)
    elif tag == "L":
        for member in inner:
            _binary_value(member)


@dataclass(frozen=True)
class Page:
    """One GetRecords answer of one shard, its records as DynamoDB JSON (`raw`). They are
    parsed when `records` is first asked for, in the asking thread: replicate asks in the
    thread that prepares the page, so the thread that reads the stream, whose GetRecords
    calls follow one another (each needs the last one's iterator), only waits and decodes JSON."""

    raw: list[dict[str, Any]]
    shard: str
    ended: bool  # a closed shard read to its end: finished
    binary_text: bool = False  # binaries left as base64 text (parse_record)

    @functools.cached_property
    def records(self) -> list[StreamRecord]:
        return [parse_record(self.shard, r, self.binary_text) for r in self.raw]

    @property
    def last_sequence(self) -> str | None:
        return self.raw[-1]["dynamodb"]["SequenceNumber"] if self.raw else None
