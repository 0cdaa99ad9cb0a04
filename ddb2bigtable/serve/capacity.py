"""ReturnConsumedCapacity: the capacity units a request would consume in DynamoDB.

Bigtable bills nodes and storage, not units, so these figures are what the same request
costs in DynamoDB, computed by DynamoDB's rules, for an application that logs or budgets
them (AWS, "DynamoDB read and write operations",
https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html,
read 2026-11-25; item sizes as "Item sizes and formats",
https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html,
read 2026-11-25, computed by wire.item_bytes):

- a read: the item's size rounded up to 4 KB, one unit per 4 KB (a missing item counts
  as one unit), halved when eventually consistent;
- Query and Scan: the sizes of the items read (before any filter) summed, then rounded up
  to 4 KB once; on an index, the sizes of the index entries;
- a write: one unit per KB, rounded up, of the larger of the item before and after
  (PutItem over an item, UpdateItem), of the deleted item (DeleteItem; one unit when
  there was none);
- BatchGetItem and BatchWriteItem: each item as its own GetItem, PutItem or DeleteItem;
- transactions: twice the units of the same read or write; a ConditionCheck two units,
  as DynamoDB Local 1.25.1 counts it (checked 2026-11-25: the pages above say nothing);
- an index (global or local) whose entry a write adds, changes or removes: one write of
  the entry's size (its projected attributes), two when the index key changed (the old
  entry deleted, the new one put), none when the entry is unchanged or the item is not in
  the index (AWS, "Provisioned throughput considerations for Global Secondary Indexes",
  https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html#GSI.ThroughputConsiderations,
  read 2026-11-25).

TOTAL answers `{TableName, CapacityUnits}` (indexes included in the total), INDEXES adds
`Table` and each index's units; every figure is also given as ReadCapacityUnits or
WriteCapacityUnits, as DynamoDB's answers carry them. BatchGetItem, BatchWriteItem and
the transactions answer a list, one entry per table.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from ..codec.items import Item
from ..spec.model import Gsi, KeySchema
from .catalog import ServedTable
from .errors import validation
from .wire import item_bytes

MODES = ("INDEXES", "TOTAL", "NONE")
READ_UNIT, WRITE_UNIT = 4 * 1024, 1024


def check_mode(body: dict[str, Any]) -> str:
    mode = body.get("ReturnConsumedCapacity", "NONE")
    if mode not in MODES:
        raise validation(f"1 validation error detected: Value '{mode}' at 'returnConsumedCapacity' failed to "
                         f"satisfy constraint: Member must satisfy enum value set: [INDEXES, TOTAL, NONE]")
    return str(mode)


def read_units(size: int, consistent: bool, *, least: int = 1) -> float:
    """Units of reading `size` bytes: 4 KB each, rounded up (at least `least`), halved when
    eventually consistent."""
    units = max(least, math.ceil(size / READ_UNIT))
    return float(units) if consistent else units / 2


def write_units(size: int) -> float:
    return float(max(1, math.ceil(size / WRITE_UNIT)))


@dataclass
class Units:
    """What one table's part of a request consumed: the table's units and each index's."""

    read: bool
    table: float = 0.0
    indexes: dict[tuple[str, str], float] = field(default_factory=dict)  # (kind, name) -> units

    def add_index(self, kind: str, name: str, units: float) -> None:
        if units:
            self.indexes[(kind, name)] = self.indexes.get((kind, name), 0.0) + units

    def described(self, table_name: str, mode: str) -> dict[str, Any]:
        word = "ReadCapacityUnits" if self.read else "WriteCapacityUnits"
        total = self.table + sum(self.indexes.values())
        out: dict[str, Any] = {"TableName": table_name, "CapacityUnits": total, word: total}
        if mode == "INDEXES":
            out["Table"] = {"CapacityUnits": self.table, word: self.table}
            for kind in ("GlobalSecondaryIndexes", "LocalSecondaryIndexes"):
                named = {n: {"CapacityUnits": u, word: u} for (k, n), u in self.indexes.items() if k == kind}
                if named:
                    out[kind] = named
        return out


def consumed(mode: str, table_name: str, units: Units) -> dict[str, Any]:
    """`ConsumedCapacity` for a one-table answer in ReturnConsumedCapacity's `mode`, checked."""
    return {} if mode == "NONE" else {"ConsumedCapacity": units.described(table_name, mode)}


def answer_tables(body: dict[str, Any], by_table: dict[str, Units]) -> dict[str, Any]:
    """`ConsumedCapacity` of a transaction: a list, one entry per table."""
    return consumed_tables(check_mode(body), by_table)


def consumed_tables(mode: str, by_table: dict[str, Units]) -> dict[str, Any]:
    """`ConsumedCapacity` of a batch or a transaction in ReturnConsumedCapacity's `mode`
    (already checked): a list, one entry per table."""
    if mode == "NONE":
        return {}
    return {"ConsumedCapacity": [units.described(name, mode) for name, units in by_table.items()]}


def indexes(table: ServedTable) -> list[tuple[str, Gsi]]:
    """Every index of the table, with where INDEXES lists it; a local index as the global
    one of the table's partition key and its sort key (read the same way)."""
    source = table.spec.source
    local = [Gsi(s.name, KeySchema(source.key.partition, s.sort), s.projection) for s in source.lsis]
    return [("GlobalSecondaryIndexes", g) for g in source.gsis] + [("LocalSecondaryIndexes", g) for g in local]


def index_kind(table: ServedTable, name: str) -> str:
    """Where INDEXES lists the index: a local index, else a global one."""
    return next((kind for kind, index in indexes(table) if index.name == name), "GlobalSecondaryIndexes")


def index_entry(table: ServedTable, index: Gsi, item: Item | None) -> Item | None:
    """The item's entry in the index (None: the index does not hold it: a key attribute
    missing, of another type, or empty, as DynamoDB's sparse indexes)."""
    keys = [k for k in (index.key.partition, index.key.sort) if k is not None]
    if item is None or any(k.name not in item or next(iter(item[k.name])) != k.type
                           or item[k.name][k.type] in ("", b"") for k in keys):
        return None
    if index.projection == "all":
        return item
    kept = {*table.keys, *(k.name for k in keys), *(() if index.projection == "keys_only" else index.projection)}
    return {n: v for n, v in item.items() if n in kept}


def write(table: ServedTable, old: Item | None, new: Item | None, *, factor: float = 1.0) -> Units:
    """A PutItem, UpdateItem or DeleteItem replacing `old` with `new` (None: absent); a
    transaction's write with `factor` 2."""
    size = max(item_bytes(old) if old else 0, item_bytes(new) if new else 0)
    units = Units(read=False, table=write_units(size) * factor)
    for kind, index in indexes(table):
        before, after = index_entry(table, index, old), index_entry(table, index, new)
        if before == after:
            continue
        keys = [k.name for k in (index.key.partition, index.key.sort) if k is not None]
        moved = before is not None and after is not None and any(before[k] != after[k] for k in keys)
        spent = sum(write_units(item_bytes(e)) for e in ((before, after) if moved else (after or before,)) if e)
        units.add_index(kind, index.name, spent * factor)
    return units


def read_item(item: Item | None, consistent: bool, *, factor: float = 1.0) -> Units:
    """A GetItem (a batch's or a transaction's, `factor` 2) of an item or of none."""
    return Units(read=True, table=read_units(item_bytes(item) if item else 0, consistent) * factor)


def read_page(table: ServedTable, mode: str, consistent: bool, index: str | None, items: list[Item]) -> dict[str, Any]:
    """`ConsumedCapacity` of a Query or Scan page: the items it read, on the table or the
    index (`index`; items then as the index holds them). Not sized unless asked (`mode`):
    sizing a page's items is a sixth of a Query's CPU."""
    if mode == "NONE":
        return {}
    spent = read_units(sum(item_bytes(i) for i in items), consistent, least=0)
    if not index:
        return consumed(mode, table.name, Units(read=True, table=spent))
    units = Units(read=True)
    units.indexes[(index_kind(table, index), index)] = spent
    return consumed(mode, table.name, units)
