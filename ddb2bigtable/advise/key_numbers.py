"""Numbers written as text in a row key, in an order that is not the numbers' order.

The seeds (003, "clave(s) de fila"): Bigtable sorts row keys as bytes, so `3` > `20`;
pad integers with leading zeros when you read them by range. What the codec already
does: key attributes and template fields of type N are written in an order-preserving
decimal form (`codec/row_keys.py`: 9 -> `a9`, 10 -> `b10`, -5 -> `-a4~`), so N is never
reported. What it cannot fix is a number inside an S value (`r-9`, `r-10`, `-3`): the
text is the key, and text order is not numeric order when widths differ or the number
is negative (`-1` sorts before `-2`).

Where order matters, so the finding is right more than loud:

- the row key's first field, when its whole value is a number written as text (ids kept
  as S: `9`, `10`): the table's order is then not the ids' order;
- a later field, between rows that share everything before it (the same device, then
  `r-9` vs `r-10`: the rows a range read returns together), when the numbers *count*
  within those rows (their span at most twice their count: sequence numbers, pages,
  versions). Ids drawn from one global counter (`order-17`, `order-503` under one
  customer) are not reported: nobody reads them by numeric range, and DynamoDB already
  sorted its S sort keys the same way.
"""

from __future__ import annotations

import re
from collections import Counter
from decimal import Decimal

from ..spec.model import TableSpec
from .findings import ROW_KEYS, Finding, percent
from .keys import MIN_PATTERN_ITEMS, MOST, KeyView

_NUMBER = re.compile(r"(.*?)(\d+(?:\.\d+)?)")  # the shortest prefix, then digits (and a fraction)
_SEPARATORS = "#:/|_ "  # a `-` after one of these (or alone at the start) is a sign, else a hyphen
_ORDINAL = ("1st", "2nd", "3rd")


def split_number(text: str) -> tuple[str, str] | None:
    """(prefix, number) when `text` ends in a number: `r-10` -> (`r-`, `10`), `-3` -> (``, `-3`)."""
    m = _NUMBER.fullmatch(text)
    if m is None:
        return None
    prefix, number = m.groups()
    if prefix.endswith("."):  # `1.2.3`: a version, not a number
        return None
    if prefix.endswith("-") and (len(prefix) == 1 or prefix[-2] in _SEPARATORS):
        prefix, number = prefix[:-1], "-" + number
    return prefix, number


def _misordered(numbers: set[str]) -> tuple[str, str] | None:
    """Two of `numbers` whose text order is the reverse of their numeric order, or None."""
    by_text = sorted(numbers)
    for before, after in zip(by_text, by_text[1:], strict=False):
        if Decimal(before) > Decimal(after):
            return before, after
    return None


def _counting(numbers: set[str]) -> bool:
    values = [Decimal(n) for n in numbers]
    return max(values) - min(values) + 1 <= 2 * len(values)


def unsorted_numbers(table: TableSpec, views: list[KeyView], sequential: bool = False) -> list[Finding]:
    """One finding for the first row-key field that holds a number as text in most sampled
    items and whose numbers sort out of numeric order (as the module docstring says where)
    in at least `MIN_PATTERN_ITEMS` items. `sequential`: the first field was found to be
    sequential ids, whose advice (reverse them) gives up their order anyway: not checked."""
    positions = max((len(v.fields) for v in views), default=0)
    for position in range(1 if sequential else 0, positions):
        found = _at(table, views, position)
        if found:
            return [found]
    return []


def _at(table: TableSpec, views: list[KeyView], position: int) -> Finding | None:
    groups: dict[tuple[tuple[tuple[str, str | None, str], ...], str, str], dict[str, int]] = {}
    names: Counter[str] = Counter()
    texts = 0
    for v in views:
        if len(v.fields) <= position:
            continue
        name, text, tag = v.fields[position]
        if text is None or tag != "S":
            continue
        texts += 1
        parts = split_number(text)
        if parts is None or (position == 0 and parts[0]):
            continue
        names[name] += 1
        group = groups.setdefault((tuple(v.fields[:position]), name, parts[0]), {})
        group[parts[1]] = group.get(parts[1], 0) + 1
    numeric = sum(names.values())
    if texts < MIN_PATTERN_ITEMS or numeric < MOST * texts:
        return None
    wrong = 0
    example: tuple[str, str, str] | None = None
    for (_, _, prefix), counts in groups.items():
        pair = _misordered(set(counts))
        if pair and (position == 0 or _counting(set(counts))):
            wrong += sum(counts.values())
            example = example or (prefix, *pair)
    if wrong < MIN_PATTERN_ITEMS or example is None:
        return None
    name = names.most_common(1)[0][0]
    prefix, high, low = example
    width = max(len(n.lstrip("-").split(".")[0]) for counts in groups.values() for n in counts)
    where = _ORDINAL[position] if position < len(_ORDINAL) else f"{position + 1}th"
    negative = high.startswith("-") or low.startswith("-")
    return Finding(
        "unsorted-number-key", "info", table.id,
        f"the row key's {where} field `{name}` holds a number as text in {percent(numeric, texts)} of {texts:,} "
        + (f"sampled items, {wrong:,} of them in rows whose order as text is not the numbers' order "
           if position == 0 else
           f"sampled items; among rows sharing the fields before it, where the numbers count up, {wrong:,} items "
           "sort out of numeric order ")
        + f"(`{prefix}{high}` sorts before `{prefix}{low}`)",
        ROW_KEYS,
        ("negative numbers as text sort backwards (`-1` before `-2`): write them with an offset that keeps "
         "them positive, " if negative else "")
        + "pad the number with zeros to a fixed width in the application "
        f"(`{prefix}{low.lstrip('-').zfill(width)}`, the widest sampled number having {width} digits), "
        "or store it as a number (N): the "
        "codec writes N key values in an order-preserving form (9 -> `a9`, 10 -> `b10`), so range reads "
        "return them in numeric order")
