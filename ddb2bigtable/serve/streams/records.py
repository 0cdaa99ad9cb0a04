"""A change's stream record: decided from the item before and after, stored as a cell of the
item's own row, and given back as DynamoDB Streams' Record (docs/streams.md).

The write path calls `change` with the old and new item it already has; when it answers a
Change, `stored_cell` is the SetCell to add to the very row mutation that writes the item,
so the write and its record are one atomic step. The readers (scan_source.py on emulator
stages, partitions.py on cloud stages) turn the stored value back into the Record with
`stream_record`. The forms are DynamoDB's as DynamoDB Local 1.25.1 writes them (captured
2026-12-07, tests/serve/streams/test_records.py): INSERT only when no item existed, no
record when nothing changed, eventVersion 1.1, SizeBytes the DynamoDB size of the keys
and images the record carries.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import orjson

from ...codec.items import Item
from ...codec.mutations import Cell, SetCell
from ...spec.families import STREAM_FAMILY
from ..wire import WireItem, item_bytes, wire_default

FAMILY = STREAM_FAMILY  # reserved like _ddb2bigtable_txn: no mapping writes it, the codec skips it
SERVER_TIME = -1  # SetCell's timestamp: Bigtable's commit time (google.bigtable.v2.Mutation.SetCell)
VIEWS = ("KEYS_ONLY", "NEW_IMAGE", "OLD_IMAGE", "NEW_AND_OLD_IMAGES")
EVENT_VERSION = "1.1"  # DynamoDB Local 1.25.1's and DynamoDB's (2026-12-07)
TTL_IDENTITY = {"Type": "Service", "PrincipalId": "dynamodb.amazonaws.com"}  # a REMOVE made by DynamoDB's TTL
FORMAT = 1  # the stored value's version (`stored`: why the parts' layout kept it)
EVENTS = ("INSERT", "MODIFY", "REMOVE")
_LAID_OUT = b'{"v":1,"p":['  # how a value laid out in parts begins (`stored`)
_NAMES = (b',"k":', b',"n":', b',"o":')  # what precedes each part: keys, NewImage, OldImage
NUMBER_BYTES = 8
LAST_NUMBER = 2**64 - 1


@dataclass(frozen=True)
class Change:
    """One item's change, as the write path saw it (codec items: binary as bytes)."""

    event: str  # INSERT, MODIFY or REMOVE
    keys: Item
    old: Item | None
    new: Item | None
    by_ttl: bool = False  # a REMOVE made by the table's TTL, not by a request


def change(keys: Item, old: Item | None, new: Item | None, *, by_ttl: bool = False) -> Change | None:
    """The record a write makes, or None when it changed nothing (DynamoDB writes no record
    for an identical PutItem, an UpdateItem that sets what is there, a DeleteItem of no item)."""
    if old == new or (old is not None and new is not None and old.keys() == new.keys() and all(
            value == new[name] or _canonical(value) == _canonical(new[name]) for name, value in old.items())):
        return None  # (only the attributes that differ as written are compared as sets)
    event = "INSERT" if old is None else "REMOVE" if new is None else "MODIFY"
    return Change(event, keys, old, new, by_ttl and event == "REMOVE")


def _canonical(value: Any) -> Any:
    """A value compared as DynamoDB compares items: sets as sets, whatever their order."""
    if isinstance(value, dict):
        return {k: frozenset(v) if k in ("SS", "NS", "BS") else _canonical(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_canonical(v) for v in value]
    return value


def kept(change: Change, view: str) -> tuple[Item | None, Item | None]:
    """The (new, old) images the stream's view type keeps."""
    new = change.new if view in ("NEW_IMAGE", "NEW_AND_OLD_IMAGES") else None
    old = change.old if view in ("OLD_IMAGE", "NEW_AND_OLD_IMAGES") else None
    return new, old


def stored(change: Change, view: str, event_id: str | None = None) -> bytes:
    """The record's cell value: JSON of the event, its id, the keys and the kept images in
    DynamoDB JSON, and their DynamoDB size (SizeBytes), computed here from the codec's items.

    Laid out so that a reader cuts the keys and images out as they are, without parsing
    them (`parsed`; docs/streams.md, "The stored record"): the head first, with the parts'
    lengths in bytes (`p`: keys, NewImage, OldImage, 0 for an image the view leaves out),
    then `"k":`, `,"n":`, `,"o":` and the parts, last. It is still format 1's JSON, with
    the same members, so a reader of the release before (which parses it whole and keeps
    only `v` = 1) reads it as it read format 1."""
    new, old = kept(change, view)
    size = sum(item_bytes(part) for part in (change.keys, new, old) if part is not None)
    parts = [b"" if part is None else orjson.dumps(part, default=wire_default) for part in (change.keys, new, old)]
    head: dict[str, Any] = {"v": FORMAT, "p": [len(part) for part in parts], "e": change.event,
                            "id": event_id or str(uuid.uuid4()), "s": size}
    if change.by_ttl:
        head["ttl"] = True
    out = [orjson.dumps(head)[:-1]]  # compact, as format 1 (orjson: 3 us a 200-byte item)
    for name, part in zip(_NAMES, parts, strict=True):
        if part:
            out += (name, part)
    return b"".join((*out, b"}"))


def qualifier(number: int) -> bytes:
    """The column of the row's `number`th record: written inverted, so the newest record is
    the row's first stream column (the write path reads one cell to find the next number)."""
    return (LAST_NUMBER - number).to_bytes(NUMBER_BYTES, "big")


def number_of(column: bytes) -> int:
    """The change number a stream column holds (`qualifier` undone)."""
    return LAST_NUMBER - int.from_bytes(column, "big")


def next_number(cells: Iterable[Cell]) -> int:
    """The change number a row's next record takes: one more than its newest record's (the
    largest number among its stream cells), 1 for a row without any."""
    return max((number_of(c.qualifier) for c in cells if c.family == FAMILY), default=0) + 1


def stored_cell(change: Change, view: str, number: int) -> SetCell:
    """The cell the write path adds to the item's row mutation: the row's `number`th change
    (one more than its newest stream column's, 1 for the first), stamped with the commit
    time by Bigtable."""
    return SetCell(FAMILY, qualifier(number), stored(change, view), SERVER_TIME)


@dataclass(frozen=True)
class Stored:
    """A stored record read back: what GetRecords needs besides its position. The keys and
    images are the stored JSON itself (orjson.Fragment: the answer's writer copies it in as
    it is) for a record laid out in parts, the parsed JSON for one of format 1's layout."""

    event: str
    event_id: str
    keys: WireItem | orjson.Fragment
    new: WireItem | orjson.Fragment | None
    old: WireItem | orjson.Fragment | None
    size: int
    by_ttl: bool


def parsed(value: bytes) -> Stored | None:
    """A stored record, or None for a cell that is not one (written by hand, or by a later
    format): left out of the stream rather than failing every reader."""
    if value.startswith(_LAID_OUT):
        cut = _cut(value)
        if cut is not None:
            return cut
    try:  # format 1's layout (written before the parts' lengths, kept 24 hours), or a damaged one
        raw = orjson.loads(value)  # a GetRecords page parses up to 1,000: the stdlib's parser took a third of it
        if raw.get("v") != FORMAT or raw.get("e") not in EVENTS:
            return None
        return Stored(raw["e"], str(raw["id"]), raw["k"], raw.get("n"), raw.get("o"), int(raw["s"]),
                      bool(raw.get("ttl")))
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def _cut(value: bytes) -> Stored | None:
    """A record laid out in parts (`stored`), its keys and images cut out as the stored JSON
    (parsing and writing them out again cost 10-80 us a record of AWS's Movies items, most
    of serve's GetRecords but for the scan); only its short head is parsed. None when the
    value does not hold together as `stored` writes it (the caller parses it whole)."""
    try:
        close = value.index(b"]", len(_LAID_OUT))
        lengths = [int(n) for n in value[len(_LAID_OUT):close].split(b",")]
        end = len(value) - 1
        if len(lengths) != len(_NAMES) or value[end:] != b"}":
            return None
        parts: list[orjson.Fragment | None] = [None] * len(_NAMES)
        for i in reversed(range(len(_NAMES))):  # from the end: the last part ends before the closing brace
            if lengths[i]:
                start = end - lengths[i]
                if start < close or value[start - len(_NAMES[i]):start] != _NAMES[i]:
                    return None
                parts[i], end = orjson.Fragment(value[start:end]), start - len(_NAMES[i])
        head, keys = orjson.loads(value[:end] + b"}"), parts[0]
        if keys is None or head.get("e") not in EVENTS:
            return None
        return Stored(head["e"], str(head["id"]), keys, parts[1], parts[2], int(head["s"]),
                      bool(head.get("ttl")))
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def stream_record(record: Stored, view: str, region: str, sequence: str, commit_micros: int) -> dict[str, Any]:
    """DynamoDB Streams' Record, as GetRecords answers it (ApproximateCreationDateTime in epoch
    seconds rounded down: the JSON protocol's timestamp form)."""
    dynamodb: dict[str, Any] = {"ApproximateCreationDateTime": commit_micros // 1_000_000, "Keys": record.keys}
    if record.new is not None:
        dynamodb["NewImage"] = record.new
    if record.old is not None:
        dynamodb["OldImage"] = record.old
    dynamodb |= {"SequenceNumber": sequence, "SizeBytes": record.size, "StreamViewType": view}
    out: dict[str, Any] = {"eventID": record.event_id, "eventName": record.event, "eventVersion": EVENT_VERSION,
                           "eventSource": "aws:dynamodb", "awsRegion": region, "dynamodb": dynamodb}
    if record.by_ttl:
        out["userIdentity"] = dict(TTL_IDENTITY)
    return out


def record(keys: Item, old: Item | None, new: Item | None, view: str, *, region: str, sequence: str,
           commit_micros: int, by_ttl: bool = False) -> dict[str, Any] | None:
    """The Record a write makes, in one call (None: it changed nothing): `change`, stored,
    read back and written out as GetRecords gives it, as its client parses it."""
    made = change(keys, old, new, by_ttl=by_ttl)
    if made is None:
        return None
    back = parsed(stored(made, view))
    assert back is not None  # written by `stored` just now
    answered: dict[str, Any] = orjson.loads(orjson.dumps(stream_record(back, view, region, sequence, commit_micros)))
    return answered
