"""Why an attribute is stored as typed DynamoDB JSON, in numbers the owner can check.

Type inference (codec/type_inference.py) stores an attribute self-describing when its
items disagree on its type, or when its maps, lists or number sets hold what plain JSON
cannot keep (sets, binary, numbers JSON cannot write). One item with `expiresAt: "never"`
among 4,000 numbers changes the form of the whole column, so the load counts, per type,
the items it loaded of each such attribute and says which attribute changed form, why,
and how to pin the type instead.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..codec.items import Item


def count_forms(item: Item, names: Iterable[str], forms: dict[str, dict[str, int]]) -> None:
    """Adds one loaded item's type for each of `names` it holds."""
    for name in names:
        value = item.get(name)
        if value:
            tag = next(iter(value))
            tags = forms.setdefault(name, {})
            tags[tag] = tags.get(tag, 0) + 1


def form_sentences(forms: dict[str, dict[str, int]]) -> list[str]:
    """One sentence per attribute stored as typed DynamoDB JSON: its types, the items of
    each, and the pin that keeps the majority's type (the other items then dead-letter)."""
    out = []
    for name, tags in sorted(forms.items()):
        ranked = sorted(tags.items(), key=lambda kv: (-kv[1], kv[0]))
        counted = ", ".join(f"{tag} in {items:,} item{'s' if items != 1 else ''}" for tag, items in ranked)
        if len(ranked) > 1:
            majority, others = ranked[0][0], sum(items for _, items in ranked[1:])
            out.append(f"{name} is stored as typed DynamoDB JSON, not as {majority}, because its items disagree "
                       f"on its type ({counted}); to keep it {majority}, declare mapping.attributes: "
                       f"[{{name: {name}, type: {majority}}}] (the {others:,} other item"
                       f"{'s' if others != 1 else ''} then become dead letters) or fix them at the source")
        else:
            out.append(f"{name} is stored as typed DynamoDB JSON ({counted}) because some of its values hold "
                       f"sets, binary or numbers that plain JSON cannot keep")
    return out
