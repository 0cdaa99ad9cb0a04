"""TTL deletions for good, each with its stream record (docs/streams.md, "TTL").

serve's readers hide an item the moment its TTL passes, as DynamoDB's TTL would have
deleted it (DynamoDB deletes within days and writes the REMOVE then, by the service:
`userIdentity` Service, dynamodb.amazonaws.com). The item's cells stay in its row until a
write meets it (stream_writes.lapsed: that write deletes it with its REMOVE first) or this
sweep does: on a table with a TTL and an enabled stream, every worker's sweep pass
(lock_sweep.sweep_forever, the same interval) reads the rows that hold an expired item and
deletes each item past its TTL with its REMOVE by the protocol's single-item write
(resolve.SingleWrite, run by the driver: one CheckAndMutateRow guarded on the row as read, a
lock met settled or left), so two workers sweeping one row write one record.

What a pass reads: a spec table's TTL families stamp each cell with its item's expiry, so
the pass scans only their cells stamped before now (`expired_cells`): the rows of expired
items, not the table. Tables serve created stamp their cells with the write time (no GC
rule on them), but keep the TTL attribute in a column of its name as the number's text
(alone, or in typed JSON), so the pass scans that column's cells whose bytes lie between
the oldest expiry DynamoDB acts on and now, written so (`expiring_values`): again the rows
of expired items (and the odd live one a byte comparison lets by), not the table; a
mapping that keeps the attribute otherwise is read whole. Neither loses a record to
GC: created tables have none, and the plan gives a spec table with a stream no max_age on
its TTL families (plan/gc_rules.py), so only this sweep or a write deletes an expired item.
"""

from __future__ import annotations

import logging

from google.cloud.bigtable.data import row_filters as rf

from ...bigtable.row_views import named
from ...codec.cell_values import MIXED, encode_value
from ...codec.mutations import Cell, RowMutation
from ...codec.timestamps import TTL_IGNORED_AFTER_MICROS, moment_of
from ..catalog import ServedTable
from ..errors import ServeError
from ..session import Session
from ..store import client_mutations, now_micros
from ..tables import created_tables
from ..transactions import cells
from ..transactions.resolve import SingleWrite
from ..transactions.steps import Finished
from .hot_rows import Deadline
from .locked_rows import write_row
from .stream_writes import Numbering, expired, record_cells, stream_view

PAGE_ROWS = 500
log = logging.getLogger("ddb2bigtable.serve")


async def sweep_table(session: Session, table: ServedTable) -> int:
    """One pass over a table: how many expired items were deleted with their records (none
    without a TTL or an enabled stream: the readers hide them, as before)."""
    view = await stream_view(session, table)
    if view is None or table.ttl_attribute is None:
        return 0
    store = session.store(table, consistent=True)
    families, now = table.codec.ttl_families, now_micros()
    column = ttl_column(table) if not families else None
    passed = expired_cells(families, now) if families else expiring_values(column, now) if column else None
    deleted, position, start_open = 0, None, False
    while True:
        rows = await store.scan(position, None, start_open=start_open, limit=PAGE_ROWS, row_filter=passed)
        for row in rows:  # each with a cell that may be expired; else every row read whole and decoded
            if passed is not None or any(expired(table, item) for item in session.decode(table, row, now=1)):
                deleted += await _delete_lapsed(session, table, view, bytes(row.row_key))
        if len(rows) < PAGE_ROWS:
            return deleted
        position, start_open = rows[-1].row_key, True


def expired_cells(families: frozenset[str], now: int) -> rf.RowFilter:
    """The cells of the TTL families stamped before `now`: each such cell's time is its item's
    expiry (the codec's one-second expiration pattern; far in the future for an item without
    a TTL), so a scan through this returns only the rows holding an expired item, and only
    those cells; the time range first, then the families by name (the emulator's cheapest:
    docs/streams.md, "Reading the records")."""
    return rf.RowFilterChain([rf.TimestampRangeFilter(end=moment_of(now)), named(sorted(families))])


def ttl_column(table: ServedTable) -> tuple[str, bytes, str] | None:
    """Where and how a table serve created keeps every item's TTL attribute: (family,
    qualifier, stored type) when it is one column of its name (the default mapping alone) whose
    cell holds a Number as the decimal text DynamoDB normalises it to (never an exponent),
    alone (stored `N`) or in typed JSON (`mixed`: `{"N":"..."}`, cell_values.encode_value);
    None when the mapping keeps it otherwise (then every row is read)."""
    mapping, name = table.codec.mapping, table.ttl_attribute
    plans = mapping.plans
    if name is None or len(plans) != 1 or plans[0].index is not None or name in mapping.layout \
            or mapping.stored(name) not in ("N", MIXED):
        return None
    return mapping.json_family(plans[0], name), name.encode(), mapping.stored(name)


def expiring_values(column: tuple[str, bytes, str], now: int) -> rf.RowFilter | None:
    """The TTL column's cells whose number may be an expiry DynamoDB acts on: from 5 years
    before now (an older one is ignored: timestamps.TTL_IGNORED_AFTER_MICROS) to now, in
    epoch seconds, the bounds written as the column writes a number. Both have a 10-digit
    whole part (from 2006 to 2286), so compared as bytes, the cells between them are the
    numbers between them with a 10-digit whole part (a fraction after it), and a few more
    the pass then decodes and finds alive (`17336000009` sorts between `1733600000` and
    `1733600001`); a value of another type is outside. None when the bounds' lengths differ."""
    low, high = str((now - TTL_IGNORED_AFTER_MICROS) // 1_000_000), str(now // 1_000_000 + 1)
    if len(low) != len(high):
        return None
    family, qualifier, stored = column
    return rf.RowFilterChain([rf.ColumnRangeFilter(family, qualifier, qualifier),
                              rf.ValueRangeFilter(encode_value({"N": low}, stored), encode_value({"N": high}, stored),
                                                  inclusive_end=False)])


async def _delete_lapsed(session: Session, table: ServedTable, view: str, row_key: bytes) -> int:
    """The row's items past their TTL deleted, each with its REMOVE by the service; 0 when
    none is left, or a live transaction holds the row (the next pass tries again)."""

    def change(data: tuple[Cell, ...]) -> cells.Mutations | Finished:
        held = session.decode(table, cells.RowCells(row_key, data), now=1) if data else []
        gone = [item for item in held if expired(table, item)]
        if not gone:
            return Finished("unchanged")
        numbers, mutations = Numbering.of(data), []
        for item in gone:
            mutations += [*table.codec.delete(item).mutations,
                          *record_cells(table, view, numbers, None, None, lapsed_old=item)]
        return cells.Mutations(client_mutations(RowMutation(row_key, tuple(mutations)), table.families), len(gone))

    try:
        finished = await write_row(session, table, SingleWrite((table.name, row_key), change), Deadline())
    except ServeError as error:  # a live transaction holds the row, or it kept changing
        if error.name not in ("TransactionConflictException", "ProvisionedThroughputExceededException"):
            raise
        return 0
    return int(finished.value[1].about) if finished.kind == "written" else 0


async def sweep_all(session: Session) -> None:
    """One pass over every table with a TTL and a stream, spec and created; a table that
    fails is logged and the others swept."""
    try:
        names = [*session.catalog.tables, *(n for n in await created_tables.names(session)
                                            if n not in session.catalog.tables)]
        await created_tables.resolve_names(session, {n for n in names if n not in session.catalog.tables})
    except Exception:  # noqa: BLE001 - the registry unreadable: sweep what this worker knows
        log.warning("TTL sweep could not list the created tables; sweeping the others", exc_info=True)
        names = [*session.catalog.tables, *session.catalog.created]
    for name in names:
        table = session.catalog.tables.get(name) or session.catalog.created.get(name)
        if table is None:
            continue
        try:
            deleted = await sweep_table(session, table)
        except Exception as error:  # noqa: BLE001 - the next pass tries again; serving goes on
            if not (isinstance(error, ServeError) and error.name == "ResourceNotFoundException"):
                log.warning("TTL sweep of %s failed; next pass in a while", name, exc_info=True)
            continue
        if deleted:
            log.debug("TTL sweep of %s: %d expired item(s) deleted with their stream records", name, deleted)
