"""DynamoDB JSON lines of an export's data files: `{"Item": {...}}` (full exports) and
`Metadata`/`Keys`/`NewImage`/`OldImage` (incremental), each value checked as it is read.

A line that is not an item raises `BadLine`, which the reader turns into an "error" record
for the dead-letter file instead of stopping the load.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Context, Decimal
from typing import Any

import orjson

from ..codec.items import AttributeValue, Item
from ..codec.scalars import binary_from_text, is_number
from ..spec.errors import Ddb2BigtableError

# DynamoDB nests maps and lists at most 32 levels deep (AWS, "Constraints in Amazon
# DynamoDB", Attributes: nested attribute depth; read 2026-11-23). A deeper value cannot
# come from DynamoDB, and walking it would exhaust Python's stack or orjson's limits.
MAX_NESTING = 32
# Each level costs at least two JSON containers ({"M": {...}} or {"L": [...]}), plus the
# line's own object, `Item` (or an image) and the attribute's typed value.
_MAX_JSON_DEPTH = 2 * MAX_NESTING + 3
# DynamoDB numbers have up to 38 significant digits; a wide context never rounds them.
_WIDE = Context(prec=100, Emax=999_999, Emin=-999_999)


class BadLine(Ddb2BigtableError):
    """One line is not an item: becomes an "error" record, never stops the file."""


Decoded = tuple[Item | None, Item | None, int | None, Item | None]  # item, keys, write time, old image


def json_full(line: bytes) -> Decoded:
    return json_item(json_line(line).get("Item"), "Item"), None, None, None


def json_incremental(line: bytes) -> Decoded:
    record = json_line(line)
    metadata = record.get("Metadata")
    stamp = metadata.get("WriteTimestampMicros") if isinstance(metadata, dict) else None
    write_time = whole_micros(stamp.get("N") if isinstance(stamp, dict) else None, stamp)
    keys = json_item(record.get("Keys"), "Keys")
    old = record.get("OldImage")
    if old is not None and not isinstance(old, dict):
        raise BadLine("OldImage is not an object")
    image = record.get("NewImage")
    return ((None if image is None else json_item(image, "NewImage")), keys, write_time,
            None if old is None else json_item(old, "OldImage"))


def whole_micros(text: object, stamp: object) -> int:
    """Metadata.WriteTimestampMicros: a whole number of microseconds, as decimal text."""
    if not isinstance(text, str) or not (text.isascii() and text.isdigit()):
        raise BadLine(f"Metadata.WriteTimestampMicros is {stamp!r}, expected whole microseconds")
    return int(text)


def json_line(line: bytes) -> dict[str, Any]:
    try:
        record = orjson.loads(line)
    except orjson.JSONDecodeError as err:
        raise BadLine(f"not valid JSON: {err}") from None
    if not isinstance(record, dict):
        raise BadLine(f"expected a JSON object, found {type(record).__name__}")
    if line.count(b"{") + line.count(b"[") > _MAX_JSON_DEPTH:  # only then can it be too deep
        _check_depth(record)
    return record


def _check_depth(record: dict[str, Any]) -> None:
    """Iterative, so the check itself cannot exhaust the stack."""
    stack: list[tuple[Any, int]] = [(record, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > _MAX_JSON_DEPTH:
            raise BadLine(f"nested deeper than DynamoDB's {MAX_NESTING} levels of maps and lists")
        children = value.values() if isinstance(value, dict) else value
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))


def json_item(value: object, name: str) -> Item:
    if not isinstance(value, dict) or not value:
        raise BadLine(f"{name} is missing, empty or not an object")
    try:  # the fast path: no per-value path strings, parsed dicts reused where nothing changes
        if _all_kept(value.values()):  # no binary anywhere: the parsed object is the item
            return value
        return {attr: _fast_value(v) for attr, v in value.items()}
    except _Invalid:  # the slow path only to say where: it raises the located BadLine
        return {attr: _json_value(v, f"{name}.{attr}") for attr, v in value.items()}


class _Invalid(Exception):
    """Something in the line is not DynamoDB JSON; `_json_value` then says what and where."""


def _number(inner: Any) -> bool:
    """`is_number`, with the common cases (`4325`, `7.6`) answered without the regex."""
    if type(inner) is str and inner.replace(".", "", 1).isdigit() and inner.isascii():
        return True
    return is_number(inner)


def _fast_value(value: Any) -> AttributeValue:
    """`_json_value` without building a path per value: same checks, same result. The
    parsed JSON is already the item's form except for binary (base64 text to bytes), so a
    value is returned as it is unless something inside it had to be converted. S and N,
    most values, are checked inline (no call)."""
    if type(value) is not dict or len(value) != 1:
        raise _Invalid
    for tag, inner in value.items():
        if (tag == "S" and type(inner) is str) or (tag == "N" and _number(inner)):
            return value
        if tag == "M":
            if type(inner) is not dict:
                raise _Invalid
            return value if _all_kept(inner.values()) else {"M": {k: _fast_value(v) for k, v in inner.items()}}
        if tag == "L":
            if type(inner) is not list:
                raise _Invalid
            return value if _all_kept(inner) else {"L": [_fast_value(v) for v in inner]}
        return _fast_other(tag, inner, value)
    raise _Invalid  # unreachable: the value has one entry


# tag -> is this inner part well-formed; these values are returned as they are
_SCALARS: dict[str, Callable[[Any], bool]] = {
    "S": lambda inner: type(inner) is str,
    "N": is_number,
    "BOOL": lambda inner: type(inner) is bool,
    "NULL": lambda inner: inner is True,
}


def _fast_other(tag: str, inner: Any, value: AttributeValue) -> AttributeValue:
    """BOOL, NULL, the sets and binary (and S or N that failed the inline check)."""
    scalar = _SCALARS.get(tag)
    if scalar is not None:
        if not scalar(inner):
            raise _Invalid
        return value
    try:
        if tag in ("SS", "NS"):
            _JSON_TYPES[tag](inner, tag)  # checks every member, converts nothing
            return value
        return {tag: _JSON_TYPES[tag](inner, tag)}  # B, BS: base64 to bytes
    except (KeyError, BadLine):
        raise _Invalid from None


def _all_kept(values: Any) -> bool:
    """Whether every value of a map or list is well-formed and needs no conversion (no
    binary inside), so the container is returned as parsed; S and N members are checked
    here without a call. False: rebuild it (binary inside); _Invalid: not DynamoDB JSON."""
    for v in values:
        if type(v) is not dict or len(v) != 1:
            raise _Invalid
        for tag, inner in v.items():
            if tag == "S":
                if type(inner) is not str:
                    raise _Invalid
            elif tag == "N":
                if not _number(inner):
                    raise _Invalid
            elif _fast_value(v) is not v:
                return False
    return True


def _json_value(value: object, path: str) -> AttributeValue:
    if not isinstance(value, dict) or len(value) != 1:
        raise BadLine(f"{path}: expected one DynamoDB type tag like {{'S': ...}}, found {value!r}"[:300])
    ((tag, inner),) = value.items()
    convert = _JSON_TYPES.get(tag)
    if convert is None:
        raise BadLine(f"{path}: unknown DynamoDB type {tag!r}")
    return {tag: convert(inner, f"{path}.{tag}")}


def _json_s(value: object, path: str) -> str:
    if not isinstance(value, str):
        raise BadLine(f"{path}: expected text, found {value!r}"[:300])
    return value


def _json_n(value: object, path: str) -> str:
    if not is_number(value):
        raise BadLine(f"{path}: {value!r} is not a number"[:300])
    return value


def _json_b(value: object, path: str) -> bytes:
    try:
        return binary_from_text(_json_s(value, path))
    except ValueError:
        raise BadLine(f"{path}: not valid base64") from None


def _json_bool(value: object, path: str) -> bool:
    if not isinstance(value, bool):
        raise BadLine(f"{path}: expected true or false, found {value!r}"[:300])
    return value


def _json_null(value: object, path: str) -> bool:
    if value is not True:
        raise BadLine(f"{path}: NULL must be true, found {value!r}"[:300])
    return True


def _json_set(member: Callable[[object, str], Any]) -> Callable[[object, str], list[Any]]:
    def convert(value: object, path: str) -> list[Any]:
        if not isinstance(value, list) or not value:
            raise BadLine(f"{path}: a set must be a non-empty list")
        return [member(v, f"{path}[{i}]") for i, v in enumerate(value)]
    return convert


def _json_m(value: object, path: str) -> dict[str, AttributeValue]:
    if not isinstance(value, dict):
        raise BadLine(f"{path}: expected an object")
    return {k: _json_value(v, f"{path}.{k}") for k, v in value.items()}


def _json_l(value: object, path: str) -> list[AttributeValue]:
    if not isinstance(value, list):
        raise BadLine(f"{path}: expected a list")
    return [_json_value(v, f"{path}[{i}]") for i, v in enumerate(value)]


_JSON_TYPES: dict[str, Callable[[object, str], Any]] = {
    "S": _json_s, "N": _json_n, "B": _json_b, "BOOL": _json_bool, "NULL": _json_null,
    "SS": _json_set(_json_s), "NS": _json_set(_json_n), "BS": _json_set(_json_b),
    "M": _json_m, "L": _json_l,
}


def dynamodb_number_text(value: Decimal | int) -> str:
    """A number as DynamoDB writes N: no exponent, no trailing zeros (`6E+2` -> `600`)."""
    text = format(Decimal(value).normalize(_WIDE), "f")
    return "0" if text == "-0" else text
