"""DynamoDB's scalars as text: the one place that says what a number is and how binary
is written (base64), so every reader and writer gives the same verdict.

Numbers, two rules for two questions:

- `is_number`: is this text a DynamoDB number (the `N` of a typed value)? Optional sign,
  digits with an optional point (`1`, `1.`, `.5`), optional exponent; ASCII digits only
  (Python's `\\d` alone would take `٣`). The export reader, the codec's value check and the
  row-key encoder all ask this, so an item is valid or invalid the same way everywhere.
- `is_plain_json_number`: can this text be written as-is as a JSON number? JSON is
  stricter (no `+`, no leading zeros, no bare `.`), and the plain-JSON form of maps and
  lists keeps a number's exact text, so a number it cannot hold makes the value typed.

Binary (`B`, members of `BS`): standard base64 with padding, as DynamoDB JSON writes it
in exports, streams and the API. Reading is strict (`validate=True`): text with stray
characters is not silently cut down to other bytes.
"""

from __future__ import annotations

import base64
import re
from typing import TypeGuard

NUMBER = r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
PLAIN_JSON_NUMBER = r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?"
_NUMBER = re.compile(NUMBER)
_PLAIN = re.compile(PLAIN_JSON_NUMBER)


def is_number(text: object) -> TypeGuard[str]:
    if type(text) is str and text.replace(".", "", 1).isdigit() and text.isascii():
        return True  # `4325`, `7.6`: most numbers, without the regex
    return isinstance(text, str) and _NUMBER.fullmatch(text) is not None


def is_plain_json_number(text: str) -> bool:
    return _PLAIN.fullmatch(text) is not None


def binary_from_text(text: str) -> bytes:
    """A base64 binary value; ValueError when the text is not strict base64."""
    return base64.b64decode(text, validate=True)  # binascii.Error is a ValueError


def binary_text(data: bytes) -> str:
    return base64.b64encode(data).decode()
