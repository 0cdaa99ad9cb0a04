"""Writes an application makes to a loaded table, in the load's conventions.

A TTL table uses the one-second-expiration pattern: every cell of an item is stamped with
the item's expiry (DynamoDB's TTL attribute), far in the future for items without one,
and the families keep `max_versions 1`. A cell an application writes stamped "now"
lands *below* the loaded cell of the same column (now < expiry): reads return the newest
version, the loaded one, and GC collects the application's write. The update is lost
without an error. So, for every write after the load:

1. stamp each cell with `expiry_cell_time(item's TTL)` in TTL families (the write time
   elsewhere), in whole milliseconds;
2. delete the item's previous cells in the same MutateRow, before the new ones: an old
   version with a later expiry would otherwise still shadow the new one.

`item_write` does both from a DynamoDB-typed item, with the table's mapping, as the
load does for incremental exports; `load.writer.row_entry` turns its result into the
client's `RowMutationEntry`.

Counters in a counter family (an aggregate family, int64 Sum) are the exception to
"delete, then write": an increment is `counter_add`, one AddToCell at the cell's
fixed time (0, or the item's expiry in a TTL family), sent through any app profile and
merged by Bigtable with every other addition; `item_write` sets a counter (deletes its
cell, then adds the value), which is what a PutItem means.
"""

from __future__ import annotations

import time
from decimal import Decimal

from .cell_values import COUNTER, counter_write
from .codec import Codec
from .items import Item
from .mutations import AddToCell, CodecError, Expired, RowMutation
from .timestamps import FAR_FUTURE_MICROS, ttl_timestamp


def item_write(codec: Codec, item: Item, *, now_micros: int | None = None) -> RowMutation | Expired:
    """The one MutateRow that puts `item` as the load would: its previous cells deleted,
    then every cell stamped per the convention above. `Expired` when its TTL has already
    passed: apply its `delete` instead (DynamoDB would no longer return the item)."""
    now = int(time.time() * 1_000_000) if now_micros is None else now_micros
    return codec.encode(item, write_time_micros=now, now_micros=now, replace=True)


def counter_add(codec: Codec, item: Item, name: str, amount: int, *, now_micros: int) -> RowMutation:
    """DynamoDB's `ADD name :amount` on `item` (its keys and what the mapping needs to place
    it) as one AddToCell, through any app profile: Bigtable merges it with every other
    addition. CodecError when `name` is not a counter kept in a counter family: such a
    number needs a read-modify-write instead."""
    plan = codec.plan_for(item)
    if codec.mapping.stored(name) != COUNTER or (plan.is_value and plan.value_attr != name):
        raise CodecError(f"{name} of this item is not a counter kept in a counter family (an aggregate "
                         f"family), so it cannot be added to with AddToCell")
    needed = {*codec.mapping.keys, *plan.addressing_fields, codec.mapping.ttl, plan.time_attribute}
    placing = {n: v for n, v in item.items() if n in needed and n != name}
    placed = codec.encode({**placing, name: {"N": str(amount)}}, write_time_micros=now_micros,
                          now_micros=now_micros)
    if isinstance(placed, Expired):
        raise CodecError(f"the item's TTL has passed; DynamoDB would not return it to add to {name}")
    adds = [m for m in placed.mutations if isinstance(m, AddToCell)]
    if not adds:
        raise CodecError(f"{name} of this item is not kept in a counter family (an aggregate family), so it "
                         f"cannot be added to with AddToCell")
    add = adds[-1]  # `name` comes last in what was placed
    return RowMutation(placed.key, counter_write(add.family, add.qualifier, amount, add.timestamp_micros,
                                                 replace=False))


def expiry_cell_time(expires_at: int | float | str | Decimal | None) -> int:
    """The cell timestamp (microseconds, whole milliseconds) for a TTL family's cells of an
    item whose TTL attribute is `expires_at` epoch seconds; None (no TTL, or one DynamoDB
    ignores) gives the far future the load uses, which GC never reaches."""
    if expires_at is None:
        return FAR_FUTURE_MICROS
    found = ttl_timestamp({"ttl": {"N": str(expires_at)}}, "ttl", 0)
    return found.expiry_micros if isinstance(found, Expired) else found
