"""DynamoDB items in one typed form, shared by the export reader, the codec and verify.

An item is a dict of attribute name -> attribute value, each value a one-key dict in
DynamoDB JSON's own vocabulary (`{"S": "x"}`, `{"N": "1.5"}`, `{"M": {...}}`, ...), with
one difference: binary values (`B`, members of `BS`) are `bytes`, decoded once from the
export's base64 (ION exports carry raw bytes already). Numbers stay decimal text, exactly
as DynamoDB wrote them, so nothing is rounded on the way through.
"""

from __future__ import annotations

from typing import Any

AttributeValue = dict[str, Any]
Item = dict[str, AttributeValue]

SCALAR_TYPES = ("S", "N", "B", "BOOL", "NULL")
SET_TYPES = ("SS", "NS", "BS")
DOCUMENT_TYPES = ("M", "L")
ALL_TYPES = SCALAR_TYPES + SET_TYPES + DOCUMENT_TYPES


def value_type(value: AttributeValue) -> str:
    """The DynamoDB type tag of one attribute value (`S`, `N`, `M`, ...)."""
    (tag,) = value
    return tag
