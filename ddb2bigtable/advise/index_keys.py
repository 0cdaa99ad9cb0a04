"""An index keyed on an attribute no sampled item has (`statuss` for `status`).

DynamoDB leaves an item out of a global or local secondary index when it lacks one of the
index's key attributes (a sparse index), so a misspelt key attribute validates, plans and
loads without a word and the index is simply empty; on Bigtable the index serve answers
from (or the continuous materialized view a team builds instead) is empty too. When not
one sampled item has the attribute, `advise` says so, with the sampled attribute nearest
in spelling.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..codec.items import Item
from ..spec.model import TableSpec
from ..spec.schema_check import did_you_mean
from .findings import DATA_PLANE, Finding


def absent_index_keys(table: TableSpec, items: Sequence[Item], export_items: int, complete: bool) -> list[Finding]:
    """A warning per index key attribute that none of `items` holds (quiet without items)."""
    if not items:
        return []
    seen = {name for item in items for name in item}
    read = f"the whole export's {len(items):,} items" if complete else \
        f"{len(items):,} sampled items of the export's {export_items:,}"
    found = []
    for index, name in table.source.index_keys:
        if name in seen:
            continue
        guess = did_you_mean(name, seen)
        found.append(Finding(
            "index-key-absent", "warning", table.id,
            f"index {index} is keyed on {name}, which none of {read} has{guess}: DynamoDB leaves an item without "
            f"it out of the index, so the index holds nothing",
            DATA_PLANE, "check the index's key attribute name in the spec (source.gsis or source.lsis) against "
                        "the items' attributes; if the index is sparse on purpose, no item has it yet"))
    return found
