"""A write's stream records: the cells a write on a table with an enabled stream adds to the
very row mutation that writes its item (docs/streams.md, "The write path"), so the write and
its record are one atomic step, whoever applies it (a transaction's intent may be applied
by another worker rolling it forward).

Which tables have a stream: on emulator stages the registry of streams (streams/registry.py),
read at most once a second per table and worker (REFRESH_SECONDS), as created tables are;
on cloud stages the spec's `stream:` (the plan's change stream). A stream enabled or
disabled by another worker is seen here within that second: a write in between is recorded
as the worker saw the stream (docs/streams.md, "Every way it differs").

Records are numbered from the row's newest one, which a writer's read holds
(store.writer_cells); the guard of the write (the row unchanged since that read) makes sure
no other writer took the number. An item whose TTL had passed when the write found it is
recorded as DynamoDB's TTL would have removed it first: a REMOVE by the service, then the
write's own record as on no item (docs/streams.md, "TTL").
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass

from ...codec.items import Item
from ...codec.mutations import Cell, Expired, RowMutation, SetCell
from ...codec.timestamps import ttl_timestamp
from ..catalog import ServedTable
from ..session import Session, same_key
from ..store import now_micros
from ..streams import records, registry
from ..transactions.cells import RowCells

REFRESH_SECONDS = 1.0  # how stale a worker's knowledge of a table's stream may be (created tables': the same)


async def stream_view(session: Session, table: ServedTable) -> str | None:
    """The StreamViewType of the table's enabled stream, None without one."""
    if not session.catalog.emulator:
        view = table.spec.source.stream
        return None if view == "none" else view.upper()
    now = time.monotonic()
    known = session.streams.get(table.name)
    if known is not None and now - known[0] < REFRESH_SECONDS:
        return known[1]
    on = registry.current(await registry.streams(session, table))
    session.streams[table.name] = (now, on.view if on is not None else None)
    return on.view if on is not None else None


@dataclass
class Numbering:
    """The change numbers a row's records take, one after another from the row as read (a
    transaction writing several items of one row numbers each)."""

    next: int

    @classmethod
    def of(cls, cells: Iterable[Cell]) -> Numbering:
        return cls(records.next_number(cells))

    def take(self) -> int:
        self.next += 1
        return self.next - 1


def expired(table: ServedTable, item: Item | None) -> bool:
    """Whether the item's TTL has passed (the rule the codec stamps cells with)."""
    ttl = table.ttl_attribute
    return item is not None and ttl is not None and isinstance(ttl_timestamp(item, ttl, now_micros()), Expired)


def lapsed(session: Session, table: ServedTable, row_key: bytes, data: Iterable[Cell], key: Item) -> Item | None:
    """The item of `key` that the row still holds past its TTL (the readers hide it; nothing
    has deleted it for good yet), or None."""
    held = session.decode(table, RowCells(row_key, data), now=1)  # as of the epoch's first microsecond: nothing expired
    found = next((i for i in held if same_key(i, key)), None)
    return found if expired(table, found) else None


def record_cells(table: ServedTable, view: str | None, numbers: Numbering, old: Item | None, new: Item | None, *,
                 lapsed_old: Item | None = None) -> list[SetCell]:
    """The record cells of one item's write, in the order DynamoDB would write them: none
    without a stream or when nothing changed; a TTL REMOVE first for an item whose expiry
    had passed (`lapsed_old`, which the readers hide, deleted for good by this write); the
    write's own; a TTL REMOVE after a new item written already expired (the write deletes
    it at once, as DynamoDB's TTL would later: `expired`)."""
    if view is None:
        return []
    steps: list[tuple[Item | None, Item | None, bool]] = []
    if lapsed_old is not None:
        steps.append((lapsed_old, None, True))
    steps.append((old, new, False))
    if expired(table, new):
        steps.append((new, None, True))
    out = []
    for before, after, by_ttl in steps:
        item = after if after is not None else before
        if item is None:
            continue
        made = records.change(table.key_of(item), before, after, by_ttl=by_ttl)
        if made is not None:
            out.append(records.stored_cell(made, view, numbers.take()))
    return out


def with_records(row: RowMutation, cells: list[SetCell]) -> RowMutation:
    """The item's row mutation with its records added (the same atomic write)."""
    return RowMutation(row.key, (*row.mutations, *cells)) if cells else row
