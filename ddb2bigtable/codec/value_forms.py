"""The two JSON forms of a value, and what a well-formed typed value is.

- *Plain JSON* (`{"480": "https://..."}`): what people read; numbers are written with
  their exact decimal text (`0.10` stays `0.10`) and read back as that text, strings as
  strings, BOOL and NULL as `true`/`false`/`null`. It cannot hold sets or binary.
- *Typed DynamoDB JSON* (`{"M": {"480": {"S": "https://..."}}}`, binary as base64):
  self-describing, for attributes whose type varies or that hold sets or binary inside.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

from .items import ALL_TYPES, AttributeValue
from .mutations import CodecError
from .scalars import binary_from_text, binary_text, is_number, is_plain_json_number


class _Num(str):
    """A JSON number's exact text, as the plain-JSON reader returns it."""


# --- validation ---------------------------------------------------------------------------

_VALID = {
    "S": lambda v: isinstance(v, str),
    "N": is_number,
    "B": lambda v: isinstance(v, bytes | bytearray),
    "BOOL": lambda v: isinstance(v, bool),
    "NULL": lambda v: v is True,
    "SS": lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v),
    "NS": lambda v: isinstance(v, list) and all(is_number(x) for x in v),
    "BS": lambda v: isinstance(v, list) and all(isinstance(x, bytes | bytearray) for x in v),
    "M": lambda v: isinstance(v, dict),
    "L": lambda v: isinstance(v, list),
}


def check_value(value: Any, where: str) -> str:
    """The value's type tag; CodecError if it is not a well-formed typed value."""
    tag = _valid_tag(value)
    if tag is None:  # the slow walk, only to say where and what
        return _explain(value, where)
    return tag


def _valid_tag(value: Any) -> str | None:
    """`check_value` on the hot path: the same checks, no path strings built; None if invalid."""
    if not isinstance(value, dict) or len(value) != 1:
        return None
    (tag, inner), = value.items()
    ok = _VALID.get(tag)
    if ok is None or not ok(inner):
        return None
    if tag == "M":
        for v in inner.values():
            if _valid_tag(v) is None:
                return None
    elif tag == "L":
        for v in inner:
            if _valid_tag(v) is None:
                return None
    return tag


def _explain(value: Any, where: str) -> str:
    if not isinstance(value, dict) or len(value) != 1:
        raise CodecError(f"{where} is not a typed value like {{'S': 'x'}}: {value!r}")
    (tag, inner), = value.items()
    ok = _VALID.get(tag)
    if ok is None or not ok(inner):
        raise CodecError(f"{where} has an invalid {tag if tag in ALL_TYPES else 'type'} value: {value!r}")
    if tag == "M":
        for k, v in inner.items():
            _explain(v, f"{where}.{k}")
    elif tag == "L":
        for i, v in enumerate(inner):
            _explain(v, f"{where}[{i}]")
    return tag


def fits_plain(value: AttributeValue) -> bool:
    """Whether the plain (untyped) cell form can hold this value exactly."""
    (tag, inner), = value.items()
    if tag == "NS":
        return all(plain_number(x) for x in inner)
    if tag == "M":
        return all(_fits_plain_nested(v) for v in inner.values())
    if tag == "L":
        return all(_fits_plain_nested(v) for v in inner)
    return True


def _fits_plain_nested(value: AttributeValue) -> bool:
    (tag, inner), = value.items()
    if tag in ("S", "BOOL", "NULL"):
        return True
    if tag == "N":
        return plain_number(inner)
    if tag in ("M", "L"):
        return fits_plain(value)
    return False  # B, SS, NS, BS: plain JSON would read them back as text or lists


def plain_number(text: str) -> bool:
    """Whether a DynamoDB number's text is also a JSON number (`.5`, `1.` and `007` are not)."""
    if text.isascii() and text.isdigit():  # the common case, without the regex
        return text[0] != "0" or len(text) == 1
    return is_plain_json_number(text)


# --- plain JSON (exact number text) -------------------------------------------------------

def plain_json(value: AttributeValue) -> bytes:
    return orjson.dumps(_plain(value))


def _plain(value: AttributeValue) -> Any:
    """The value as plain Python for orjson; a number as a Fragment, so its exact text is
    written unquoted (one walk in Python, the writing in orjson). A map's or list's
    strings and numbers, most of a document, are converted in its own loop, without a
    call each (a call per value was most of the walk)."""
    (tag, inner), = value.items()
    if tag == "M":
        out: dict[str, Any] = {}
        for k, v in inner.items():
            (t, x), = v.items()
            out[k] = x if t == "S" else _plain_number(x) if t == "N" else _plain(v)
        return out
    if tag == "L":
        items: list[Any] = []
        for v in inner:
            (t, x), = v.items()
            items.append(x if t == "S" else _plain_number(x) if t == "N" else _plain(v))
        return items
    if tag == "S":
        return inner
    if tag == "N":
        return _plain_number(inner)
    if tag == "BOOL":
        return inner
    if tag == "NULL":
        return None
    raise CodecError(f"a {tag} value inside a document needs the self-describing (mixed) form")


def _plain_number(text: str) -> orjson.Fragment:
    if not plain_number(text):
        raise CodecError(f"number {text!r} cannot be written as plain JSON")
    return orjson.Fragment(text)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a DynamoDB number")


# json.loads would build this decoder on every call (its arguments are not the defaults)
_PLAIN_DECODER = json.JSONDecoder(parse_int=_Num, parse_float=_Num, parse_constant=_reject_constant)


def load_plain(data: bytes) -> Any:
    try:
        if type(data) is bytes:  # as json.loads reads bytes, with the decoder made once
            return _PLAIN_DECODER.decode(data.decode(json.detect_encoding(data), "surrogatepass"))
        return json.loads(data, parse_int=_Num, parse_float=_Num, parse_constant=_reject_constant)
    except ValueError as exc:
        raise CodecError(f"cell value is not the JSON this mapping writes: {exc}") from exc


_INEXACT = object()


def _exact_orjson(data: bytes) -> Any:
    """The document as orjson reads it, when that reading is exact: orjson writes it back
    byte for byte, so each number's text is orjson's own rendering of what it read (what
    this codec writes for every number orjson reads back as the same number, `6.2`,
    `5640`). Otherwise (`0.10`, `1E+2`, `-0`, spaces, escapes, duplicate keys, ...)
    _INEXACT, and the exact reader (`load_plain`) takes it."""
    try:
        value = orjson.loads(data)
        return value if orjson.dumps(value) == data else _INEXACT
    except (orjson.JSONDecodeError, orjson.JSONEncodeError):
        return _INEXACT


def _from_plain(obj: Any) -> AttributeValue:
    """The typed value of what `load_plain` read; a map's or list's strings and numbers,
    most of a document, are converted in its own loop (no call each)."""
    kind = type(obj)
    if kind is dict:
        out: dict[str, AttributeValue] = {}
        for k, v in obj.items():
            kind = type(v)
            out[k] = {"S": v} if kind is str else {"N": str(v)} if kind is _Num else _from_plain(v)
        return {"M": out}
    if kind is list:
        return {"L": [{"S": v} if type(v) is str else {"N": str(v)} if type(v) is _Num else _from_plain(v)
                      for v in obj]}
    if kind is _Num:
        return {"N": str(obj)}
    if kind is str:
        return {"S": obj}
    if kind is bool:
        return {"BOOL": obj}
    return {"NULL": True}


def _from_exact(obj: Any) -> AttributeValue:
    """`_from_plain` of what `_exact_orjson` read: numbers as orjson's ints and floats,
    written back as the text they were read from."""
    kind = type(obj)
    if kind is str:
        return {"S": obj}
    if kind is dict:
        return {"M": {k: {"S": v} if type(v) is str else _from_exact(v) for k, v in obj.items()}}
    if kind is list:
        return {"L": [{"S": v} if type(v) is str else _from_exact(v) for v in obj]}
    if kind is int:
        return {"N": str(obj)}
    if kind is float:
        return {"N": orjson.dumps(obj).decode()}
    if kind is bool:
        return {"BOOL": obj}
    return {"NULL": True}


def plain_members(data: bytes) -> Any:
    """`load_plain` of a set's cell: a JSON array of strings (SS, BS) read by orjson when
    that is exact, anything else by `load_plain`."""
    exact = _exact_orjson(data) if type(data) is bytes else _INEXACT
    if type(exact) is list and all(type(x) is str for x in exact):
        return exact
    return load_plain(data)


def from_plain_json(data: bytes) -> AttributeValue:
    exact = _exact_orjson(data) if type(data) is bytes else _INEXACT
    if exact is not _INEXACT:  # most cells: orjson wrote them, orjson reads them (no number callbacks)
        return _from_exact(exact)
    return _from_plain(load_plain(data))


# --- typed DynamoDB JSON (self-describing) ------------------------------------------------

def to_typed(value: AttributeValue) -> dict[str, Any]:
    """A codec value as DynamoDB's typed JSON (binary as base64): the self-describing cell
    form, and what DynamoDB's wire protocol carries (serve answers with it)."""
    (tag, inner), = value.items()
    if tag == "B":
        return {"B": binary_text(inner)}
    if tag == "BS":
        return {"BS": [binary_text(x) for x in inner]}
    if tag == "M":
        return {"M": {k: to_typed(v) for k, v in inner.items()}}
    if tag == "L":
        return {"L": [to_typed(v) for v in inner]}
    return {tag: inner}


def _from_typed(obj: Any) -> AttributeValue:
    if not isinstance(obj, dict) or len(obj) != 1:
        raise CodecError(f"not a typed DynamoDB JSON value: {obj!r}")
    (tag, inner), = obj.items()
    if tag == "B":
        return {"B": binary_from_text(inner)}
    if tag == "BS":
        return {"BS": [binary_from_text(x) for x in inner]}
    if tag == "M":
        return {"M": {k: _from_typed(v) for k, v in inner.items()}}
    if tag == "L":
        return {"L": [_from_typed(v) for v in inner]}
    value = {tag: inner}
    check_value(value, "typed JSON value")
    return value


def typed_json(value: AttributeValue) -> bytes:
    return orjson.dumps(to_typed(value))


def from_typed_json(data: bytes) -> AttributeValue:
    try:
        return _from_typed(orjson.loads(data))
    except orjson.JSONDecodeError as exc:
        raise CodecError(f"cell value is not typed DynamoDB JSON: {exc}") from exc
    except (ValueError, TypeError, AttributeError) as exc:  # bad base64, a tag with the wrong inner shape
        raise CodecError(f"cell value is not typed DynamoDB JSON: {exc}") from exc
