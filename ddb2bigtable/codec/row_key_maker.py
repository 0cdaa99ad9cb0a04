"""The default row key (`[salt]` partition `delimiter` sort, row_keys.py) made by a function
compiled once per table, for the compiled encoder (table_encoder.py, issue #33).

Made in general, a key costs a dict of parts, a type test per key, `number_key`, the
template's `render` with its escaping of every part and the salt's formatting: about
2.2 µs of a flat row's 6 µs of encoding. Here the template's two parts, their order, the
stop and escape character of the first part, the number form of a whole number and each
salt bucket's prefix are decided once, so a key is two lookups and a join. It gives exactly
what `KeyTemplate.render` (+ `salt_prefix`) gives for the parts `row_keys.key_part` makes,
and None where the compiled encoder must leave the item to the general path (a key that
is missing, not DynamoDB JSON, of another type, binary, empty or too long);
tests/codec/test_row_key_maker.py compares the two over random key values.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from typing import Any

from .compiled import CompiledMapping
from .limits import ROW_KEY_MAX
from .row_keys import bucket_prefix, number_key
from .scalars import is_number

RowKeyMaker = Callable[[dict[str, Any]], "bytes | None"]

# `number_key` of a whole number of n digits (1..25, no leading zero): the code of its
# exponent n - 1 (`a`..`y`), then the digits.
_WHOLE_CODES = (b"", *(bytes((ord("a") + n,)) for n in range(25)))


def _other_part(inner: str, key_type: str) -> bytes | None:
    """A key part that is not text: a number in its ordered form; binary is refused (base64
    text in an export, bytes in the codec: the general path decides)."""
    return number_key(inner).encode() if key_type == "N" and is_number(inner) else None


def row_key_maker(mapping: CompiledMapping) -> RowKeyMaker | None:  # noqa: C901  `make`: one flat function
    """The key maker of this default-mapping table (None for a key schema whose partition
    and sort attribute are one: its template names one field twice). The maker gives an
    item's row key, or None when only the general path may answer; it raises what
    `number_key` and `str.encode` raise (CodecError for a number out of range,
    UnicodeEncodeError for a lone surrogate), which the general path raises too."""
    row = mapping.plans[0].row  # `{partition}` or `{partition}<delimiter>{sort}` (rules.default_plan)
    if row.fields != tuple(mapping.keys):
        return None
    first, first_type = mapping.pk.name, mapping.pk.type
    sort = mapping.table.source.key.sort
    second, second_type = (None, "") if sort is None else (sort.name, sort.type)
    first_text, second_text = first_type == "S", second_type == "S"
    between = row.literals[1] if second is not None else b""
    # The stop that ends the first part and its escape character (None: an empty delimiter,
    # the part written as it is), as the template's `render` works them out.
    stop, escape = row._split or (None, b"")
    doubled, escaped = escape + escape, escape + (stop or b"")
    salts = None if mapping.salt is None else \
        tuple(bucket_prefix(n, mapping.salt, mapping.delimiter) for n in range(mapping.salt))

    def make(item: dict[str, Any]) -> bytes | None:  # noqa: C901, PLR0911, PLR0912  no call per part
        value = item.get(first)
        if type(value) is not dict or len(value) != 1:
            return None
        inner = value.get(first_type)
        if type(inner) is not str:
            return None
        if first_text:
            head = inner.encode()
        elif inner.isdigit() and inner.isascii() and inner[0] != "0" and len(inner) <= 25 and first_type == "N":
            head = _WHOLE_CODES[len(inner)] + inner.encode()  # a whole number: most number keys
        else:
            found = _other_part(inner, first_type)
            if found is None:
                return None
            head = found
        if second is None:
            key = head
        else:
            value = item.get(second)
            if type(value) is not dict or len(value) != 1:
                return None
            inner = value.get(second_type)
            if type(inner) is not str:
                return None
            if second_text:
                tail = inner.encode()
            elif inner.isdigit() and inner.isascii() and inner[0] != "0" and len(inner) <= 25 \
                    and second_type == "N":
                tail = _WHOLE_CODES[len(inner)] + inner.encode()
            else:
                found = _other_part(inner, second_type)
                if found is None:
                    return None
                tail = found
            if stop is not None and (stop in head or escape in head):  # `row_keys.escape`
                key = head.replace(escape, doubled).replace(stop, escaped) + between + tail
            else:
                key = head + between + tail
        if salts is not None:
            key = salts[zlib.crc32(head) % len(salts)] + key
        return key if key and len(key) <= ROW_KEY_MAX else None

    return make
