"""Personal data where the seeds' privacy section says it must not be: row keys and
column family ids ("valores en las claves de fila y las familias de columnas son datos
del cliente y datos de servicio": encryption, logging and tools may show them to people
who must not see private data).

What counts as evidence, so the finding is right more than loud:

- e-mail addresses, phone numbers and IP addresses are recognised by their form, in a
  row-key segment of half the sampled items;
- a person's name has no form of its own (`Smith` is also a brand, `Paris` a city), so a
  name is only reported when the item itself says it is one: an attribute named like a
  person's name (`first_name`, `lastName`, `full_name`, `surname`, `customer_name`;
  never a bare `name`, which names products as often as people, nor `username`, an
  account handle) whose value, word by word, is in the item's row key;
- a family id is a literal of the spec: it is checked for the same forms (family ids
  allow only letters, digits, `_`, `-` and `.`, so an IP address or a dashed phone
  number can be one, an e-mail cannot).

The row-key check itself (`keys.personal_data`) reads the sampled keys; this module says
what is personal, as pure functions of values and names.
"""

from __future__ import annotations

import ipaddress
import re

from ..codec.items import Item
from ..spec.families import family_names
from ..spec.model import TableSpec
from .findings import PRIVACY, Finding

_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[a-z]{2,}", re.I)
_IP_CHARS = re.compile(r"[0-9a-fA-F]*[.:][0-9a-fA-F.:]*")
_PHONE = re.compile(r"\+\d{7,15}|\+?\d{1,3}[ .-]\(?\d{2,4}\)?[ .-]\d{3,4}[ .-]\d{3,4}")
# An attribute name, lower-cased without separators, that says it holds a person's name.
_PERSON_NAME = re.compile(r"(?:first|last|full|given|family|middle|maiden|legal|sur|fore|person|customer|"
                          r"contact|patient|employee|real)name|surname|forename")
_NAME_VALUE = re.compile(r"[^\W\d_]+(?:[ '.-]+[^\W\d_]+)*")  # letters, words joined by space, ', ., -
_WORD = re.compile(r"[^\W\d_]+")


def personal_kind(segment: str) -> str | None:
    """`e-mail`, `phone` or `IP address` when a row-key segment (or a family id) is one."""
    if _EMAIL.fullmatch(segment):
        return "e-mail"
    if _PHONE.fullmatch(segment):
        return "phone"
    if not _IP_CHARS.fullmatch(segment):  # ip_address is slow: most segments fail this first
        return None
    try:
        ipaddress.ip_address(segment)
    except ValueError:
        return None
    return "IP address"


_PERSON_ATTRIBUTES: dict[str, bool] = {}  # attribute name -> is_person_name_attribute, as met


def is_person_name_attribute(name: str) -> bool:
    """`first_name`, `lastName`, `Full-Name`, `surname`...; not `name`, `username`, `product_name`."""
    known = _PERSON_ATTRIBUTES.get(name)
    if known is None:
        known = _PERSON_NAME.fullmatch(re.sub(r"[^a-z]", "", name.lower())) is not None
        if len(_PERSON_ATTRIBUTES) < 100_000:  # bounded: attribute names are few, but data may not be
            _PERSON_ATTRIBUTES[name] = known
    return known


def names_in_key(item: Item, row_key: str) -> tuple[str, ...]:
    """The item's person-name attributes whose value (every word of it, 2 letters or more,
    at least 3 letters in all) is in the row key as whole words."""
    found = []
    key_words: set[str] | None = None
    lowered = ""
    for name in [n for n in item if _PERSON_ATTRIBUTES.get(n, True) and is_person_name_attribute(n)]:
        text = item[name].get("S")
        if not isinstance(text, str):
            continue
        lowered = lowered or row_key.lower()
        if not all(w in lowered for w in text.lower().split()):  # the usual answer, found cheaply
            continue
        if not _NAME_VALUE.fullmatch(text.strip()) or len(text.strip()) < 3:
            continue
        words = {w.lower() for w in _WORD.findall(text)}
        if key_words is None:
            key_words = {w.lower() for w in _WORD.findall(row_key)}
        if all(len(w) >= 2 for w in words) and words <= key_words:
            found.append(name)
    return tuple(found)


def personal_family_ids(table: TableSpec) -> list[Finding]:
    """Family ids that are an e-mail, a phone number or an IP address (from the spec)."""
    personal = [(name, kind) for name in family_names(table) if (kind := personal_kind(name))]
    if not personal:
        return []
    shown = ", ".join(f"`{name}` ({kind})" for name, kind in personal[:3])
    return [Finding(
        "personal-data-family", "warning", table.id,
        f"{len(personal)} column famil{'ies' if len(personal) > 1 else 'y'} of the mapping "
        f"{'are' if len(personal) > 1 else 'is'} named by personal data: {shown}",
        PRIVACY,
        "family ids are service data, like row keys: name families by what they hold (`contact`, `profile`) "
        "and keep the person's value in the row key's opaque id or in a cell")]
