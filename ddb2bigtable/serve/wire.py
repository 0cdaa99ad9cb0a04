"""Items as the wire carries them <-> items as the codec stores them.

On the wire (DynamoDB's JSON protocol) binary values are base64 text and numbers are text
as the client wrote them; the codec's `Item` holds binary as bytes (codec/items.py). Both
directions walk nested maps and lists. Numbers are checked and normalised on the way in as
DynamoDB does: at most 38 significant digits, magnitude between 1E-130 and 9.9999999999999999999999999999999999999E+125,
trailing zeros dropped (`1.50` is stored and returned as `1.5`) (AWS, "Supported data
types and naming rules", https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/HowItWorks.NamingRulesDataTypes.html,
read 2026-11-25).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from decimal import Context, Decimal, InvalidOperation
from typing import Any

import orjson

from ..codec.items import ALL_TYPES, AttributeValue, Item
from ..codec.scalars import binary_from_text, binary_text, is_number
from ..codec.value_forms import to_typed
from ..spec.errors import clip
from .errors import ServeError, validation

MAX_DIGITS = 38
MAX_EXPONENT = 125  # the largest number is 9.99...E+125
MIN_EXPONENT = -130  # the smallest positive number is 1E-130
WireItem = dict[str, Any]
EXACT = Context(prec=2 * MAX_DIGITS)  # normalising never rounds a number DynamoDB could hold
_PLAIN_INTEGER = re.compile(rf"-?[1-9][0-9]{{0,{MAX_DIGITS - 1}}}")  # normalising leaves it as written


def number(text: Any, where: str) -> str:
    """The number's text as DynamoDB returns it; ValidationException when it is not one. An
    integer of at most 38 digits without a leading zero is its own form (the commonest number
    in a key or an item: no Decimal made)."""
    if type(text) is str and _PLAIN_INTEGER.fullmatch(text):
        return text
    if not is_number(text):
        raise validation(f"One or more parameter values were invalid: {where}: {text!r} is not a number")
    given = Decimal(text)
    if given.is_zero():
        return "0"
    top = given.adjusted()  # checked before normalising, which overflows past the context's own range
    if top > MAX_EXPONENT:
        raise validation(f"Number overflow. Attempting to store a number with magnitude larger than supported "
                         f"range ({where})")
    if top < MIN_EXPONENT:
        raise validation(f"Number underflow. Attempting to store a number with magnitude smaller than supported "
                         f"range ({where})")
    value = given.normalize(EXACT)  # rounds past EXACT's digits: then no longer equal to what was given
    if len(value.as_tuple().digits) > MAX_DIGITS or value != given:
        raise validation(f"Attempting to store more than 38 significant digits in a Number ({where})")
    return format(value, "f")


def to_codec(value: Any, where: str) -> AttributeValue:
    """One wire value as the codec's typed value (binary decoded, numbers normalised)."""
    if not isinstance(value, dict) or len(value) != 1:
        raise validation(f"Supplied AttributeValue is empty, must contain exactly one of the supported datatypes "
                         f"({where})")
    (tag, inner), = value.items()
    if tag not in ALL_TYPES:
        raise validation(f"Supplied AttributeValue has an unknown datatype {tag!r} ({where})")
    try:
        return _inner_to_codec(tag, inner, where)
    except (TypeError, ValueError, AttributeError, InvalidOperation):
        raise validation(f"One or more parameter values were invalid: {where} is not a valid {tag} value") from None


def _inner_to_codec(tag: str, inner: Any, where: str) -> AttributeValue:  # noqa: C901, PLR0911 - one branch per type
    if tag == "S":
        if not isinstance(inner, str):
            raise TypeError
        return {"S": inner}
    if tag == "N":
        return {"N": number(inner, where)}
    if tag == "B":
        return {"B": binary_from_text(inner)}
    if tag in ("BOOL", "NULL"):
        if not isinstance(inner, bool) or (tag == "NULL" and inner is not True):
            raise TypeError
        return {tag: inner}
    if tag in ("SS", "NS", "BS"):
        if not isinstance(inner, list) or not inner:
            raise validation(f"One or more parameter values were invalid: An number set, string set or binary set "
                             f"may not be empty ({where})")
        members = [number(x, where) if tag == "NS" else binary_from_text(x) if tag == "BS" else _text(x)
                   for x in inner]
        if len(set(members)) != len(members):
            raise validation(f"One or more parameter values were invalid: Input collection {inner} contains "
                             f"duplicates ({where})")
        return {tag: members}
    if tag == "M":
        if not isinstance(inner, dict):
            raise TypeError
        check_names(inner)
        return {"M": {k: to_codec(v, f"{where}.{k}") for k, v in inner.items()}}
    if not isinstance(inner, list):
        raise TypeError
    return {"L": [to_codec(v, f"{where}[{i}]") for i, v in enumerate(inner)]}


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError
    return value


MAX_NESTING = 31  # maps and lists inside an attribute; DynamoDB Local 1.25.1 refuses 32 (checked 2026-11-25)
MAX_NAME_BYTES = 65535  # an attribute name's UTF-8 bytes, a map's keys too (DynamoDB Local 1.25.1 refuses 65,536)


def nesting_refused() -> ServeError:
    return validation("Nesting Levels have exceeded supported limits: Attributes in the item have nested levels "
                      "beyond supported limit")


def check_names(attributes: dict[str, Any]) -> None:
    """DynamoDB Local 1.25.1's words for a name over 64 KB, top level or in a map (checked
    2026-11-29); a name of 16,384 characters or fewer cannot be over (4 bytes a character)."""
    for name in attributes:
        if len(name) > MAX_NAME_BYTES // 4 and len(name.encode()) > MAX_NAME_BYTES:
            raise validation(f"Attribute name is too large, must be less than {MAX_NAME_BYTES + 1} bytes")


def check_text(value: Any) -> None:
    """ValidationException for half a UTF-16 surrogate pair (`\\ud800` alone) in any string
    or name of a JSON value, walked without recursion. Python's JSON reader keeps it; UTF-8,
    which DynamoDB and Bigtable store, cannot encode it (DynamoDB Local 1.25.1 stores it, a
    Java string; serve cannot, so it refuses it before anything reads the request)."""
    waiting = [value]
    while waiting:
        here = waiting.pop()
        if isinstance(here, dict):
            waiting.extend(here)
            waiting.extend(here.values())
        elif isinstance(here, list):
            waiting.extend(here)
        elif isinstance(here, str) and not _encodes(here):
            raise validation(f"One or more parameter values were invalid: {clip(ascii(here))} holds half of a "
                             f"UTF-16 surrogate pair, which is not Unicode text; send the whole pair or another "
                             f"character")


def _encodes(text: str) -> bool:
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def item_to_codec(item: Any, what: str = "Item") -> Item:
    if not isinstance(item, dict):
        raise validation(f"One or more parameter values were invalid: {what} must be a map of attributes")
    if "" in item:  # DynamoDB Local 1.25.1's words (checked 2026-11-25); the attribute was lost
        raise validation("Empty attribute name")
    if any(nesting(value) > MAX_NESTING for value in item.values() if _nests(value)):
        raise nesting_refused()
    check_names(item)
    found: Item = {}
    for name, value in item.items():
        text = value.get("S") if type(value) is dict and len(value) == 1 else None
        # a string, the commonest value, is already in the codec's form: no call for it
        found[name] = {"S": text} if type(text) is str else to_codec(value, f"{what}.{name}")
    return found


def changed_to_codec(new: WireItem, old: WireItem | None, stored: Item | None) -> Item:
    """`item_to_codec(new)` for an update's image: an attribute the update left as it was (the
    very object of `old`, the wire form of `stored`) is taken from the stored item, already
    checked and in the codec's form; only the others are converted and checked. Converting
    every attribute of a Movies item again was a third of an UpdateItem's own work (issue 54)."""
    if old is None or stored is None:
        return item_to_codec(new)
    changed = item_to_codec({name: value for name, value in new.items() if old.get(name) is not value})
    return {name: changed[name] if name in changed else stored[name] for name in new}


def _nests(value: Any) -> bool:
    """Whether `nesting` can count more than 0: a map or a list (its own first level)."""
    return isinstance(value, dict) and len(value) == 1 and ("M" in value or "L" in value)


def nesting(value: Any) -> int:
    """How many maps and lists hold one another in a wire value, counted without recursion
    (a hostile request may nest far deeper than Python's stack) and only up to the limit."""
    deepest, level = 0, [value]
    while level and deepest <= MAX_NESTING:
        inner = [next(iter(v.values())) for v in level if isinstance(v, dict) and len(v) == 1
                 and next(iter(v)) in ("M", "L")]
        if not inner:
            break
        deepest += 1
        level = [x for c in inner for x in (c.values() if isinstance(c, dict) else c if isinstance(c, list) else ())]
    return deepest


def item_to_wire(item: Item) -> WireItem:
    return {name: to_typed(value) for name, value in item.items()}


def answer_item(item: Item) -> WireItem:
    """`item_to_wire` for an answer nothing changes before it is sent (a GetItem, a batch's or a
    page's items): a value holding no binary is already its own wire form, so it is the item's
    own object, not a copy; only binary (bytes -> base64) is converted. Copying each value of a
    Movies item was 6-18 us in process, 25 of them a BatchGetItem (issue 54). Never for an item
    an update or a record changes afterwards: it would change the codec's item with it."""
    return {name: value if _binary_free(value) else to_typed(value) for name, value in item.items()}


def wire_default(value: Any) -> str:
    """The answer's JSON writer's `default` (orjson's and the stdlib's): bytes, a codec item's
    binary, as DynamoDB's base64 text, so an item answered as the codec holds it (GetItem,
    BatchGetItem, a Query or Scan page without a filter) is written as `item_to_wire` would
    have it, in the answer's one serialization: no walk or trial serialization of each item
    first to learn whether it holds binary (issue 54)."""
    if isinstance(value, bytes):
        return binary_text(value)
    raise TypeError(f"{type(value).__name__} is not part of a DynamoDB answer")


_SCALARS = frozenset(("S", "N", "BOOL", "NULL", "SS", "NS"))


def _binary_free(value: AttributeValue) -> bool:
    """Whether no B or BS lies anywhere in the value. A map or list is asked of orjson, whose
    walk in C refuses bytes wherever they lie (and anything else it cannot write, such as a
    half surrogate pair: that value is then converted as before, never answered wrong): a
    Movies item's `info` map in 1-2 us against 5-11 us for a walk in Python."""
    for tag in value:  # one tag
        if tag in _SCALARS:
            return True
        if tag in ("B", "BS"):
            return False
    try:
        orjson.dumps(value)
    except TypeError:  # orjson.JSONEncodeError among them
        return False
    return True


MAX_ITEM_BYTES = 400 * 1024  # DynamoDB's item size limit, names and values together (same page as above)


def value_bytes(value: AttributeValue) -> int:  # noqa: PLR0911 - one return per type
    """An attribute value's size as DynamoDB counts it (approximately for numbers: about one
    byte per two significant digits, plus one). Every page of a Query or Scan sizes each
    item (the 1 MB page), so the common types come first and ASCII text is not encoded."""
    for tag, inner in value.items():
        if tag == "S":
            return len(inner) if inner.isascii() else len(inner.encode())
        if tag == "N":
            return (len(inner.strip("-").replace(".", "").strip("0")) + 1) // 2 + 1
        if tag == "M":
            size = 3
            for name, member in inner.items():
                size += _text_bytes(name) + 1 + value_bytes(member)
            return size
        if tag == "L":
            size = 3
            for member in inner:
                size += 1 + value_bytes(member)
            return size
        if tag == "B":
            return len(inner)
        if tag in ("BOOL", "NULL"):
            return 1
        if tag == "SS":
            return sum(_text_bytes(x) for x in inner)
        if tag == "NS":
            return sum(value_bytes({"N": x}) for x in inner)
        return sum(len(x) for x in inner)  # BS
    raise ValueError(f"an attribute value without a type: {value!r}")


def _text_bytes(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode())


def item_bytes(item: Item) -> int:
    """An item's size as DynamoDB counts it: each attribute's name (UTF-8 bytes) and value."""
    size = 0
    for name, value in item.items():
        size += _text_bytes(name) + value_bytes(value)
    return size


def check_size(item: Item) -> None:
    if item_bytes(item) > MAX_ITEM_BYTES:
        raise validation("Item size has exceeded the maximum allowed size")


def check_wire_size(wire: WireItem, item: Item) -> None:
    """`check_size(item)` for an item whose wire form is `wire`, without its walk when the wire
    form's JSON is within the limit: the JSON is never fewer bytes than DynamoDB counts (each
    name, text and base64 is written whole and quoted, each number's digits at least as many as
    its count, every value wrapped in its type's braces, `{"N":...}` alone more than a number's
    count). orjson writes a Movies item in about 2 us; the walk took 20-40 (issue 54)."""
    try:
        if len(orjson.dumps(wire)) <= MAX_ITEM_BYTES:
            return
    except TypeError:  # orjson.JSONEncodeError among them: something it cannot write, sized by the walk
        pass
    check_size(item)


# AWS, "TransactGetItems" (API reference, read 2026-12-07): "The aggregate size of the items in
# the transaction cannot exceed 4 MB"; DynamoDB Local 1.25.1 refuses past 4 MiB of items read
# (ten items of 390,000 bytes are answered, eleven refused), in the words below
MAX_TRANSACT_READ_BYTES = 4 * 1024 * 1024


def check_transact_read(items: Iterable[Item]) -> None:
    """A TransactGetItems whose items add up to more than 4 MB is refused, as DynamoDB refuses it."""
    total = 0
    for item in items:
        total += item_bytes(item)
        if total > MAX_TRANSACT_READ_BYTES:
            raise validation("Payload in response is too large.")
