"""Row keys (and key-like templates): injective, readable, numbers in numeric order.

**Default row key**: `[salt]` partition `delimiter` sort (`hats#fedoras#brandA`), or the
partition alone when the table has no sort key. Each part is its key value as bytes:

- S: the UTF-8 text, unchanged (readable; byte order is DynamoDB's order for S and B);
- B: the raw bytes;
- N: the *ordered decimal form* below, so byte order is numeric order (the seeds' "3 > 20"
  problem: as text, "3" sorts after "20").

**Escaping (injectivity).** Every part but the last is followed by literal text (the
delimiter). Inside such a part the escape character `\\` is doubled and the first
character of the text that follows is preceded by `\\`; the last part is written as is.
So `a#b` + `c` becomes `a\\#b#c` while `a` + `b#c` stays `a#b#c`: no two keys collide and
every key decodes back. The seeds' `hats#fedoras#brandA` (partition `hats`, sort
`fedoras#brandA`) needs no escape at all. When the following text starts with `\\`
itself, the escape character is `%` instead.

**Ordered decimal form of N** (readable, no hashing, no binary):

    0            -> 0
    positive x   -> E(e) + x as plain decimal         5 -> a5, 30 -> b30, 2013 -> d2013,
                                                       19.99 -> b19.99, 0.5 -> Z0.5, 0.05 -> Y0.05
    negative -x  -> "-" + E(-e) + complement(x) + "~"  -5 -> -a4~, -2013 -> -X7986~, -0.5 -> -b9.4~

where e is the scientific exponent (x = d.ddd x 10^e) and E(e) a code that sorts in e's
order: e = 0..24 -> `a`..`y`; e >= 25 -> `z` + three digits (`z025`..`z999`); e = -1..-25
-> `Z`..`B`; e <= -26 -> `A` + three digits of 999+e. `complement` replaces each digit d
by 9-d (the `.` stays) and `~` ends a negative, so a larger magnitude sorts first. Plain
decimal means no exponent, no leading zeros, no trailing fractional zeros: the canonical
text DynamoDB itself returns. Classes sort `-` < `0` < `A`-`Z` < `a`-`z`. Number keys
decode to that canonical text (`1.50` -> `1.5`). Byte order equals numeric order for a
whole key, and across partitions too as long as the delimiter sorts below `.` (the
default `#` does).

**Salt** (`mapping.salt.buckets`): a readable prefix `NN#` (bucket number, zero-padded
to the width of buckets-1, then the delimiter), the bucket being CRC-32 of the partition
part mod buckets: deterministic across runs, machines and Python versions (not `hash()`),
and the same for every item of a partition, so a partition stays one contiguous range.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property

from ..spec.mapping_syntax import template_fields
from .items import AttributeValue, value_type
from .mutations import CodecError
from .scalars import is_number

ESCAPE = b"\\"
ALT_ESCAPE = b"%"
_MAX_EXPONENT = 999  # the codes below cover |e| <= 999; DynamoDB allows -130..125


# --- numbers ------------------------------------------------------------------------------

def parse_number(text: str) -> tuple[bool, str, int]:
    """(negative, significant digits, scientific exponent); digits "" means zero."""
    if not is_number(text):
        raise CodecError(f"{text!r} is not a number")
    negative = text.startswith("-")
    body = text.lstrip("+-")
    mantissa, _, exp = body.replace("E", "e").partition("e")
    whole, _, frac = mantissa.partition(".")
    digits = (whole + frac).lstrip("0")
    if not digits.rstrip("0"):
        return False, "", 0
    # position of the first significant digit relative to the decimal point
    e = len(whole.lstrip("0")) - 1 if whole.lstrip("0") else -(len(frac) - len(frac.lstrip("0")) + 1)
    e += int(exp or 0)
    if abs(e) > _MAX_EXPONENT:
        raise CodecError(f"number {text} is out of range (DynamoDB numbers lie within 1E-130 and 1E+126)")
    return negative, digits.rstrip("0"), e


def _plain(digits: str, e: int) -> str:
    if e >= 0:
        whole = digits[: e + 1].ljust(e + 1, "0")
        frac = digits[e + 1:]
        return whole + ("." + frac if frac else "")
    return "0." + "0" * (-e - 1) + digits


def canonical_number(text: str) -> str:
    """DynamoDB's canonical text of a number: plain decimal, no superfluous zeros (`1.50` -> `1.5`)."""
    negative, digits, e = parse_number(text)
    if not digits:
        return "0"
    return ("-" if negative else "") + _plain(digits, e)


def _exponent_code(e: int) -> str:
    if 0 <= e <= 24:
        return chr(ord("a") + e)
    if e >= 25:
        return f"z{e:03d}"
    if -25 <= e <= -1:
        return chr(ord("Z") + 1 + e)
    return f"A{999 + e:03d}"


_COMPLEMENT = str.maketrans("0123456789", "9876543210")


def number_key(text: str) -> str:
    """The ordered decimal form of a number (see the module docstring)."""
    if text.isascii() and text.isdigit() and text[0] != "0" and len(text) <= 25:  # a whole number: most keys
        return _exponent_code(len(text) - 1) + text
    negative, digits, e = parse_number(text)
    if not digits:
        return "0"
    plain = _plain(digits, e)
    if negative:
        return "-" + _exponent_code(-e) + plain.translate(_COMPLEMENT) + "~"
    return _exponent_code(e) + plain


def number_from_key(form: str) -> str:
    """The canonical text of an ordered decimal form; CodecError if it is not one."""
    if form == "0":
        return "0"
    code, digits = form[:1], form[1:]
    if "a" <= code <= "y" and len(digits) == ord(code) - ord("a") + 1 and digits.isdigit() \
            and digits.isascii() and digits[0] != "0":
        return digits  # a whole number below 10**25 (`number_key`'s own fast case): most keys
    negative = form.startswith("-")
    body = form[1:] if negative else form
    if negative:
        if not body.endswith("~"):
            raise CodecError(f"{form!r} is not an ordered number")
        body = body[:-1]
    width = 4 if body[:1] in ("A", "z") else 1
    plain = body[width:]
    if negative:
        plain = plain.translate(_COMPLEMENT)
    text = ("-" if negative else "") + plain
    if not is_number(plain) or number_key(text) != form:
        raise CodecError(f"{form!r} is not an ordered number")
    return text


# --- key parts ----------------------------------------------------------------------------

def key_part(value: AttributeValue, key_type: str, name: str) -> bytes:
    """A key attribute's value as row-key bytes (unescaped)."""
    tag = value_type(value)
    if tag != key_type:
        raise CodecError(f"key attribute {name!r} is {tag} in this item, but the table's key says {key_type}")
    raw = value[tag]
    if key_type == "S":
        return raw.encode()
    if key_type == "N":
        return number_key(raw).encode()
    return bytes(raw)


def key_value(part: bytes, key_type: str) -> AttributeValue:
    """The inverse of `key_part`."""
    if key_type == "B":
        return {"B": part}
    try:
        text = part.decode()
    except UnicodeDecodeError as exc:
        raise CodecError(f"row key part {part!r} is not UTF-8 text") from exc
    return {"S": text} if key_type == "S" else {"N": number_from_key(text)}


# --- escaping -----------------------------------------------------------------------------

def _escape_for(stop: bytes) -> bytes:
    return ALT_ESCAPE if stop == ESCAPE else ESCAPE


def escape(value: bytes, stop: bytes) -> bytes:
    """`value` with the escape character doubled and each `stop` preceded by an escape."""
    esc = _escape_for(stop)
    return value.replace(esc, esc + esc).replace(stop, esc + stop)


def unescape_until(data: bytes, pos: int, stop: bytes) -> tuple[bytes, int]:
    """The unescaped bytes from `pos` up to the first unescaped `stop`, and where it is."""
    esc = _escape_for(stop)
    out = bytearray()
    while True:
        at_stop, at_esc = data.find(stop, pos), data.find(esc, pos)
        if at_esc != -1 and (at_stop == -1 or at_esc < at_stop):
            out += data[pos:at_esc]
            for literal in (esc, stop):
                if data.startswith(literal, at_esc + 1):
                    out += literal
                    pos = at_esc + 1 + len(literal)
                    break
            else:
                raise ValueError("dangling escape")
        elif at_stop == -1:
            raise ValueError("missing separator")
        else:
            return bytes(out + data[pos:at_stop]), at_stop


# --- templates ----------------------------------------------------------------------------

_TOKEN = re.compile(r"\{\{|\}\}|\{([^{}]*)\}")


@dataclass(frozen=True)
class KeyTemplate:
    """Literal text and `{field}` placeholders, rendered injectively (escaping as above).

    The default row key is the template `{partition}<delimiter>{sort}`; rule templates
    (`{VideoId}`, `{SK}`) are parsed from the mapping with `template_fields`' grammar.
    """

    literals: tuple[bytes, ...]  # one more than fields: before, between and after them
    fields: tuple[str, ...]

    @classmethod
    def parse(cls, template: str) -> KeyTemplate:
        names = template_fields(template)  # validates: raises ValueError with the reason
        literals, fields, text, pos = [], [], "", 0
        for match in _TOKEN.finditer(template):
            text += template[pos:match.start()]
            pos = match.end()
            if match.group(1) is None:
                text += match.group(0)[0]
            else:
                literals.append(text.encode())
                fields.append(match.group(1))
                text = ""
        literals.append((text + template[pos:]).encode())
        assert tuple(fields) == names
        return cls(tuple(literals), tuple(fields))

    @cached_property
    def decodable(self) -> bool:
        """False when two placeholders touch (`{a}{b}`): nothing tells where one ends."""
        return all(self.literals[1:-1])

    @cached_property
    def _bare(self) -> bool:
        """One field, no literal: the default mapping's qualifier (the attribute name)."""
        return len(self.fields) == 1 and self.literals == (b"", b"")

    @cached_property
    def _split(self) -> tuple[bytes, bytes] | None:
        """`{a}<literal>{b}` and nothing around (the default row key): the stop that ends the
        first field and its escape character. A key without that escape character ends
        its first field at the first stop, so `match` needs no scan."""
        if len(self.fields) != 2 or len(set(self.fields)) != 2 or self.literals[0] or self.literals[2] \
                or not self.literals[1]:
            return None
        return self._stop(0), _escape_for(self._stop(0))

    def _stop(self, i: int) -> bytes:
        following = self.literals[i + 1]
        return following[:1] if following[:1] < b"\x80" else following.decode()[0].encode()

    @cached_property
    def _rendering(self) -> tuple[tuple[str, bytes | None, bytes], ...]:
        """Per field: its name, the stop its value is escaped for (None: written as it is,
        the last field or one with no literal after it) and the literal after it; worked
        out once, not per row key."""
        last = len(self.fields) - 1
        return tuple((name, self._stop(i) if i < last and self.literals[i + 1] else None, self.literals[i + 1])
                     for i, name in enumerate(self.fields))

    def render(self, values: Mapping[str, bytes]) -> bytes:
        out = [self.literals[0]]
        for name, stop, literal in self._rendering:
            value = values[name]
            out += (escape(value, stop) if stop is not None else value, literal)
        return b"".join(out)

    def prefix(self, values: Mapping[str, bytes], count: int) -> bytes:
        """The bytes every key rendered from this template starts with when its first `count`
        fields hold `values` (with the literal after them): a partition's rows for a query."""
        if count >= len(self.fields):
            return self.render(values)
        out = bytearray(self.literals[0])
        for i, name in enumerate(self.fields[:count]):
            value = values[name]
            out += (escape(value, self._stop(i)) if self.literals[i + 1] else value) + self.literals[i + 1]
        return bytes(out)

    def _match_split(self, data: bytes, stop: bytes) -> dict[str, bytes] | None:
        """`match` of `{a}<literal>{b}` on bytes without the escape character: the general
        scan's answer, found with one `find`."""
        at = data.find(stop)
        if at == -1 or not data.startswith(self.literals[1], at):
            return None
        return {self.fields[0]: data[:at], self.fields[1]: data[at + len(self.literals[1]):]}

    def match(self, data: bytes) -> dict[str, bytes] | None:
        """The field values `data` was rendered from, or None when it was not."""
        if self._bare:  # every cell of the default mapping: the whole qualifier is the field
            return {self.fields[0]: data[:]}
        if not data.startswith(self.literals[0]) or not self.decodable:
            return None
        if self._split is not None and self._split[1] not in data:  # nothing escaped: no scan needed
            return self._match_split(data, self._split[0])
        if not self.fields:
            return {} if data == self.literals[0] else None
        return self._scan(data)

    def _scan(self, data: bytes) -> dict[str, bytes] | None:
        """`match` in general: each field up to the first unescaped stop of the literal after it."""
        found: dict[str, bytes] = {}
        pos = len(self.literals[0])
        for i, name in enumerate(self.fields[:-1]):
            try:
                value, pos = unescape_until(data, pos, self._stop(i))
            except ValueError:
                return None
            if not data.startswith(self.literals[i + 1], pos) or found.setdefault(name, value) != value:
                return None
            pos += len(self.literals[i + 1])
        suffix = self.literals[-1]
        if len(data) - len(suffix) < pos or not data.endswith(suffix):
            return None
        value = data[pos:len(data) - len(suffix)]
        if found.setdefault(self.fields[-1], value) != value:
            return None
        return found


# --- salt ---------------------------------------------------------------------------------

def salt_prefix(partition_part: bytes, buckets: int, delimiter: str) -> bytes:
    """`NN<delimiter>`: CRC-32 of the partition part (unescaped) modulo the bucket count."""
    return bucket_prefix(zlib.crc32(partition_part) % buckets, buckets, delimiter)


def bucket_prefix(bucket: int, buckets: int, delimiter: str) -> bytes:
    """The prefix of every row key in `bucket`; zero-padded, so byte order is bucket order."""
    return f"{bucket:0{len(str(buckets - 1))}d}{delimiter}".encode()


def strip_salt(key: bytes, buckets: int, delimiter: str) -> tuple[int, bytes]:
    """(bucket, rest of the key); CodecError when the key carries no salt prefix."""
    width = len(str(buckets - 1))
    head, sep = key[:width], key[width:width + len(delimiter.encode())]
    if not head.isdigit() or sep != delimiter.encode() or int(head) >= buckets:
        raise CodecError(f"row key {key!r} has no salt prefix of {buckets} buckets")
    return int(head), key[width + len(sep):]
