"""What every operation shares: the catalog, one Bigtable data client per process, and the
read of one item by key.

A row can hold several items (the seeds' single-table and adjacency designs), so an item is
found by reading its row, decoding every item the row holds with the codec and keeping the
one whose key attributes equal the requested key.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from ..codec.items import AttributeValue, Item
from ..codec.mutations import Cell, CodecError
from .catalog import Catalog, ServedTable
from .errors import internal
from .store import Store, live_cells, now_micros, raw_cells


def key_text(value: AttributeValue) -> Any:
    """A key value compared as DynamoDB compares keys: numbers by value."""
    (tag, inner), = value.items()
    return (tag, Decimal(inner)) if tag == "N" else (tag, inner)


def same_key(item: Item, key: Item) -> bool:
    """Whether the item has the key. Equal values are the same key without reading numbers (both
    sides are normalised, so this is nearly every match: a BatchGetItem of 25 read 150 Decimals)."""
    for name, value in key.items():
        found = item.get(name)
        if found is None or (found != value and key_text(found) != key_text(value)):
            return False
    return True


@dataclass
class Found:
    """One item's row as read: its key, every cell (for the write guard) and the item."""

    row_key: bytes
    cells: list[Cell]
    item: Item | None


@dataclass
class Session:
    catalog: Catalog
    client: Any  # BigtableDataClientAsync, one per worker process
    registry_ready: bool = False  # created_tables.py: this worker made sure the registry table exists
    tokens_ready: bool = False  # items/lock_tables.py: the same, for the ClientRequestToken table
    fetched: dict[str, float] = field(default_factory=dict)  # created_tables.py: when each was last read
    # types_record.py: the tables whose record of types to read again (a row failed to decode)
    stale_types: set[str] = field(default_factory=set)
    counts: dict[tuple[str, str, str], Any] = field(default_factory=dict)  # table_counts.py: (when, Counts)
    streams: dict[str, tuple[float, str | None]] = field(default_factory=dict)  # items/stream_writes.py: (when, view)
    _stores: dict[tuple[str, str, str | None, tuple[str, ...] | None], Store] = field(default_factory=dict)

    def store(self, table: ServedTable, consistent: bool) -> Store:
        profile = table.consistent_profile if consistent else table.serving_profile
        return self.table_store(table.instance_id, table.spec.id, profile, table.name, table.families)

    def table_store(self, instance_id: str, table_id: str, profile: str | None, name: str,
                    families: tuple[str, ...] | None = None) -> Store:
        """One Bigtable table through one app profile (`name`: what errors call it; `families`:
        a table of items' item families, whose reads leave its stream records out)."""
        handle = self._stores.get((instance_id, table_id, profile, families))
        if handle is None:
            handle = Store(self.client.get_table(instance_id, table_id, app_profile_id=profile), name, families)
            self._stores[(instance_id, table_id, profile, families)] = handle
        return handle

    def decode(self, table: ServedTable, row: Any, now: int | None = None) -> list[Item]:
        """The live items of one row; a row the codec cannot read is the table's fault, not the
        request's: a 500 naming the row and why."""
        now = now or now_micros()
        cells = live_cells(row, table.codec.ttl_families, now)
        try:
            return table.unexpired(table.codec.decode(row.row_key, cells), now) if cells else []
        except CodecError as error:
            self.stale_types.add(table.name)  # perhaps a type recorded since: read the record again
            raise internal(f"row {row.row_key.decode('utf-8', 'replace')} of table {table.name} cannot be read "
                           f"with its mapping and recorded types: {error}") from None

    async def find(self, table: ServedTable, key: Item, *, consistent: bool) -> Found:
        """A writer's read of the item's row: its cells with the row's newest stream record
        (store.writer_cells), what the write's guard compares and numbers the next record from."""
        row_key = table.row_key(key)
        row = await self.store(table, consistent).read_row(row_key, writer=True)
        if row is None:
            return Found(row_key, [], None)
        item = next((i for i in self.decode(table, row) if same_key(i, key)), None)
        return Found(row_key, raw_cells(row), item)
