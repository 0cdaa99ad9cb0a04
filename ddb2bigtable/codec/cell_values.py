"""Attribute values <-> cell bytes, decided by the attribute's type (never by the bytes).

| type            | cell value                                                              |
|-----------------|-------------------------------------------------------------------------|
| S               | the UTF-8 text                                                          |
| N               | the decimal text exactly as DynamoDB wrote it (`30`, `0.10`)            |
| counter         | 8-byte big-endian two's-complement int64 (an aggregate family's sum, Increment's form) |
| B               | the raw bytes                                                           |
| BOOL            | `\\x01` true, `\\x00` false                                              |
| NULL            | empty                                                                   |
| SS / NS / BS    | a JSON array: strings / numbers (exact text) / base64 strings           |
| M / L           | plain JSON: `{"480": "https://..."}`, numbers as their exact text       |
| mixed           | typed DynamoDB JSON `{"S": "x"}`, binary as base64: self-describing      |

Plain JSON cannot tell a set from a list or binary from text, so an M or L attribute that
holds a set or binary anywhere (or a number whose text is not JSON) is typed `mixed` by
type inference and stored self-describing instead; its decode is still exact.

A counter in its own family (an aggregate family, int64 Sum: `spec/families.py`) is not a
SetCell but an AddToCell, at one fixed time: `counter_write` says how, for every writer.

Opt-in layouts put one value in many cells:
- `layout: family` for sets: one qualifier per member (UTF-8, the number's text, the raw
  bytes) with the single byte `\\x00` as value, as the seeds' data-type table says;
- `layout: family` for maps: one qualifier per key, the value's plain JSON as cell value;
  an empty map is the single cell qualifier `""`, value empty (a real value is never empty);
- `layout: timestamps` for lists: one version per element, each the element's plain JSON;
  an empty list is one version with an empty value.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from decimal import Decimal, InvalidOperation
from typing import Any

import orjson

from .items import AttributeValue, Item
from .mutations import AddToCell, CodecError, DeleteCells, Mutation
from .scalars import binary_from_text, binary_text
from .value_forms import fits_plain, from_plain_json, from_typed_json, plain_json, plain_members, typed_json

MIXED = "mixed"
COUNTER = "counter"
TRUE, FALSE, NULL_BYTES = b"\x01", b"\x00", b""
SET_MEMBER = b"\x00"  # the seeds: "a single 0 byte as the cell value"
EMPTY_MARKER = b""  # empty map (qualifier "") or empty list (one version)
EXISTS_MARKER = b""  # the cell of an item that has only its key attributes (qualifier "")
INT64 = (-(2**63), 2**63 - 1)
# The one time of a counter's cell outside TTL families (there: the item's expiry), so that
# every AddToCell, from the load, a stream or any application, adds to the same cell.
COUNTER_TIME_MICROS = 0


# --- one attribute, one cell --------------------------------------------------------------

def counter_number(text: str) -> int:
    """A counter's N text as the int64 Bigtable keeps; CodecError for anything else."""
    try:
        number = Decimal(text)
    except InvalidOperation as exc:
        raise CodecError(f"counter value {text!r} is not a number") from exc
    if not number.is_finite() or number != number.to_integral_value():
        raise CodecError(f"counter value {text} is not an integer; Bigtable counters are int64")
    as_int = int(number)
    if not INT64[0] <= as_int <= INT64[1]:
        raise CodecError(f"counter value {text} is outside the int64 range of Bigtable counters")
    return as_int


def _counter(text: str) -> bytes:
    return counter_number(text).to_bytes(8, "big", signed=True)


def counter_write(family: str, qualifier: bytes, amount: int, timestamp_micros: int, *,
                  replace: bool) -> tuple[Mutation, ...]:
    """How a counter is written to its aggregate (int64 Sum) family, by every writer.

    `replace` sets the counter to `amount` (a loaded export, a replayed stream record, a
    PutItem): the column's cell is deleted and `amount` added in the same row mutation, so
    a rerun converges to the same number instead of doubling it. Without it, `amount` is
    added (DynamoDB's `ADD`, an application's increment): merged with every other
    addition, and not idempotent, so a retry after an unknown outcome may count twice."""
    if not INT64[0] <= amount <= INT64[1]:
        raise CodecError(f"counter amount {amount} is outside the int64 range of Bigtable counters")
    add = AddToCell(family, qualifier, amount, timestamp_micros)
    return (DeleteCells(family, qualifier), add) if replace else (add,)


def _ns_cell(inner: list[str], value: AttributeValue) -> bytes:
    if not fits_plain(value):
        raise CodecError("a number in this set cannot be written as plain JSON")
    return b"[" + b",".join(x.encode() for x in inner) + b"]"


# stored type -> cell bytes of the value's inner part; M and L (and anything else) are plain JSON
_ENCODERS: dict[str, Callable[[Any, AttributeValue], bytes]] = {
    COUNTER: lambda inner, _: _counter(inner),
    "S": lambda inner, _: inner.encode(),
    "N": lambda inner, _: inner.encode(),
    "B": lambda inner, _: bytes(inner),
    "BOOL": lambda inner, _: TRUE if inner else FALSE,
    "NULL": lambda inner, _: NULL_BYTES,
    "SS": lambda inner, _: orjson.dumps(inner),
    "NS": _ns_cell,
    "BS": lambda inner, _: orjson.dumps([binary_text(x) for x in inner]),
}


def encode_value(value: AttributeValue, stored: str) -> bytes:
    """One attribute value as one cell, in the form its stored type says."""
    (tag, inner), = value.items()
    if stored == MIXED:
        return typed_json(value)
    if tag != ("N" if stored == COUNTER else stored):
        raise CodecError(f"the value is {tag}, but the attribute is stored as {stored}")
    encode = _ENCODERS.get(stored)
    return encode(inner, value) if encode else plain_json(value)


def _counter_value(data: bytes, _: str) -> AttributeValue:
    if len(data) != 8:
        raise CodecError(f"counter cell holds {len(data)} bytes, not an 8-byte int64")
    return {"N": str(int.from_bytes(data, "big", signed=True))}


def _text_value(data: bytes, stored: str) -> AttributeValue:
    try:
        return {stored: data.decode()}
    except UnicodeDecodeError as exc:
        raise CodecError(f"{stored} cell is not UTF-8 text") from exc


def _bool_value(data: bytes, _: str) -> AttributeValue:
    if data not in (TRUE, FALSE):
        raise CodecError(f"BOOL cell holds {data!r}, not \\x01 or \\x00")
    return {"BOOL": data == TRUE}


def _set_value(data: bytes, stored: str) -> AttributeValue:
    members = plain_members(data)
    if not isinstance(members, list):
        raise CodecError(f"{stored} cell is not a JSON array")
    if stored == "BS":
        return {"BS": [binary_from_text(x) for x in members]}
    return {stored: [str(x) for x in members]}


def _json_value(data: bytes, stored: str) -> AttributeValue:
    decoded = from_plain_json(data)
    if next(iter(decoded)) != stored:
        raise CodecError(f"cell holds JSON of type {next(iter(decoded))}, not {stored}")
    return decoded


_DECODERS: dict[str, Callable[[bytes, str], AttributeValue]] = {
    MIXED: lambda data, _: from_typed_json(data),
    COUNTER: _counter_value,
    "S": _text_value,
    "N": _text_value,
    "B": lambda data, _: {"B": bytes(data)},
    "BOOL": _bool_value,
    "NULL": lambda data, _: {"NULL": True},
    "SS": _set_value,
    "NS": _set_value,
    "BS": _set_value,
}


def decoder_for(stored: str) -> Callable[[bytes, str], AttributeValue]:
    """The reader of cells of this stored type: `decode_value` with the choice made once."""
    return _DECODERS.get(stored, _json_value)


def decode_value(data: bytes, stored: str) -> AttributeValue:
    """The inverse of `encode_value`."""
    return decoder_for(stored)(data, stored)


# --- layouts ------------------------------------------------------------------------------

def member_qualifier(tag: str, member: Any) -> bytes:
    """A set member as a qualifier (layout: family)."""
    return bytes(member) if tag == "BS" else member.encode()


def member_from_qualifier(tag: str, qualifier: bytes) -> Any:
    return bytes(qualifier) if tag == "BS" else qualifier.decode()


def element_value(value: AttributeValue) -> bytes:
    """A map value or list element in its own cell (layout: family / timestamps)."""
    return plain_json(value)


def element_from_value(data: bytes) -> AttributeValue:
    return from_plain_json(data)


def layout_parts(how: str, family: str, name: str, value: AttributeValue,
                  qualifier: Callable[[bytes], bytes]) -> Iterator[tuple[str, bytes, bytes, int]]:
    """The cells of an attribute stored in a layout of its own: a list as one column whose
    versions are its elements, a map's entries or a set's members as one column each."""
    (tag, inner), = value.items()
    if how == "timestamps":
        if not inner:
            yield family, qualifier(name.encode()), EMPTY_MARKER, 0
        for i, element in enumerate(inner):
            yield family, qualifier(name.encode()), element_value(element), len(inner) - 1 - i
    elif tag == "M":
        if not inner:
            yield family, qualifier(b""), EMPTY_MARKER, 0
        for k, v in inner.items():
            yield family, qualifier(k.encode()), element_value(v), 0
    else:
        for member in inner:
            yield family, qualifier(member_qualifier(tag, member)), SET_MEMBER, 0


# --- comparison ---------------------------------------------------------------------------

def canonical_item(item: Item) -> Item:
    """The item with set members in byte order: sets are unordered, and a `layout: family`
    set comes back in qualifier order. Compare items through this."""
    return {k: _canonical(v) for k, v in item.items()}


def _canonical(value: AttributeValue) -> AttributeValue:
    (tag, inner), = value.items()
    if tag in ("SS", "NS"):
        return {tag: sorted(inner, key=lambda x: x.encode())}
    if tag == "BS":
        return {tag: sorted(bytes(x) for x in inner)}
    if tag == "M":
        return {"M": {k: _canonical(v) for k, v in inner.items()}}
    if tag == "L":
        return {"L": [_canonical(v) for v in inner]}
    if tag == "B":
        return {"B": bytes(inner)}
    return value
