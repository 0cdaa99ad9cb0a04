"""Bigtable I/O for serve: rows read as codec cells, codec mutations written, and the
conditional write that makes a read-check-write atomic per row.

Every call carries a deadline (DEADLINES), so a Bigtable that stops answering fails a
request in seconds with a 500 the SDK retries, never a hung connection.

Atomic per row: a conditional write (ConditionExpression, UpdateItem, a replace that must
clear the previous image's cells) reads the row, decides in Python, then writes with
CheckAndMutateRow whose predicate is true only while the row still holds exactly the cells
read: every one of them (family, qualifier, timestamp, and the value itself when short)
and no other. A writer that got in between makes the predicate false, nothing is
written, and the operation starts over from a fresh read (operations.py). Bigtable caps a
filter at 20 KB (Google, "Quotas and limits", https://cloud.google.com/bigtable/quotas,
read 2026-11-25), so values are compared only up to VALUE_BUDGET bytes in all; longer
values are matched by their column and timestamp, and every item write sets the row's write
stamp anew (`stamped`), which the guard always compares. The guard is made as the protobuf
message itself (guards.py).

Rows hold their items' stream records too (docs/streams.md: 24 hours of them, images
included, in the reserved stream family), so no read of a table's items takes them all: it
reads the item families and the transaction family alone, on Bigtable's side (`item_cells`),
and a writer's read takes the row's newest record with them (`writer_cells`: it numbers the
next one); the guard of a conditional write compares the row through that same view. The
families are named one by one (ColumnRangeFilter), never by a pattern: the emulator
compiles a filter's regular expression for every row it reads (2026-12-07: a pattern
matching every family but the stream's cost 5 ms a read; the families by name, 0.1 ms).
"""

from __future__ import annotations

import os
import time
from collections.abc import AsyncIterator
from typing import Any

from google.api_core import exceptions as google_errors
from google.cloud.bigtable.data import ReadRowsQuery
from google.cloud.bigtable.data import mutations as bt
from google.cloud.bigtable.data import row_filters as rf

from ..bigtable.row_views import items_and_newest_record, items_only
from ..codec.mutations import AddToCell, Cell, DeleteCells, DeleteRow, RowMutation, SetCell
from ..spec.families import STREAM_FAMILY, TXN_FAMILY, TXN_WRITE_COLUMN
from .errors import ServeError, internal, not_found, throttled
from .guards import RawFilter, raw_of, unchanged_filter
from .point_calls import LeanTable, RawMutation, set_cell_message
from .reverse_rows import ReverseReader, ReverseScanRefused

READ_SECONDS = 10.0  # a point read or a page of a query, retries included
ATTEMPT_SECONDS = 5.0
WRITE_SECONDS = 10.0  # one MutateRow or CheckAndMutateRow


def item_cells(families: tuple[str, ...]) -> rf.RowFilter:
    """A read of a table's items: the item families and the transaction family, none of the
    stream's records (row_views.items_only; made once per table, sent as made: RawFilter)."""
    return RawFilter(raw_of(items_only(families)))


def writer_cells(families: tuple[str, ...]) -> rf.RowFilter:
    """A writer's read: `item_cells` and the row's newest stream record, the family's first
    column (records.qualifier: numbers are written inverted; row_views.items_and_newest_record)."""
    return RawFilter(raw_of(items_and_newest_record(families)))


def now_micros() -> int:
    return int(time.time() * 1_000_000)


def live_cells(row: Any, ttl_families: frozenset[str], now: int) -> list[Cell]:
    """A row's cells as the codec reads them, without TTL cells already past their expiry
    (GC collects them lazily, so they can still be there)."""
    return [_codec_cell(c) for c in row if not (c.family in ttl_families and c.timestamp_micros < now)]


def raw_cells(row: Any) -> list[Cell]:
    """Every cell of the row, expired or not: what the guard of a conditional write compares."""
    return [_codec_cell(c) for c in row]


def _codec_cell(cell: Any) -> Cell:
    """The codec's Cell as it is (serve's reads make them: point_calls.merged), any other
    (a data client's) converted."""
    if type(cell) is Cell:
        return cell
    return Cell(cell.family, bytes(cell.qualifier), bytes(cell.value), cell.timestamp_micros)


def in_column_order(mutations: tuple[Any, ...]) -> list[Any]:
    """The mutations with each run of consecutive SetCells in (family, qualifier) order, as a
    row keeps its columns; a stable sort within runs, so every delete keeps its place and
    two writes to one cell keep theirs. The emulator's time for a wide row grows faster than
    its width, much less so for columns that arrive in order: one MutateRow of 20,000 new
    columns took it 4.3 s in the codec's order and 1.9 s in column order (2026-11-29, this
    project's 2-core machine); Bigtable itself stores a row's columns in this order."""
    ordered: list[Any] = []
    run: list[SetCell] = []
    for m in mutations:
        if isinstance(m, SetCell):
            run.append(m)
            continue
        ordered += sorted(run, key=_column)
        run = []
        ordered.append(m)
    return ordered + sorted(run, key=_column)


def _column(cell: SetCell) -> tuple[str, bytes]:
    """A SetCell's place in column order; a row's stream records (columns holding their change
    number inverted: records.qualifier) oldest change first instead, since the emulator stamps
    each server-time cell as it applies it: a newer record applied first could take the earlier
    millisecond and come first in the stream (tests/serve/test_record_cells_order.py)."""
    if cell.family == STREAM_FAMILY:
        return cell.family, bytes(255 - b for b in cell.qualifier)
    return cell.family, cell.qualifier


def client_mutations(row: RowMutation, families: tuple[str, ...] | None = None) -> list[bt.Mutation]:
    """The row's mutations as the client sends them; with `families` (an item's row), a row
    delete is made family by family (the families the row's items use), so cells of other
    families (the transaction family's lock and records) stay, and the write sets the row's
    write stamp (`stamped`)."""
    found = _client_mutations(row, families)
    return found if families is None else stamped(found, row)


def stamped(found: list[bt.Mutation], row: RowMutation) -> list[bt.Mutation]:
    """An item write with the row's write stamp: a value no other write has, in the
    transaction family, which the guard of every conditional write compares by value
    (guards.py). A value longer than the guard compares is matched by its column and time
    alone, and those need not change between two writes: a TTL table stamps every cell with
    its item's expiry (the same far future for every item without one), a spec can stamp
    cells with an attribute's time, and two writes can fall in one millisecond. Without the
    stamp, a worker's read-check-write passed over another's write of long values and wrote
    over it (tests/serve/test_long_values_guard.py). A write that deletes the row's items
    and sets none (a row delete; its stream record aside) takes the stamp away with it, so
    the stamp does not outlive the item; a row empty again is the row as a writer read it,
    and any write there is ordered after the delete. (A wide row's items deleted one by one
    leave its stamp behind.) Random, so that workers and releases need no shared counter;
    8 bytes, so two writes share one with odds of 2**-64. Writers that bypass serve (load,
    replicate) set none: do not run them on a table serve is writing (docs/transactions.md)."""
    sets = any(type(m) is AddToCell or (type(m) is SetCell and m.family != STREAM_FAMILY) for m in row.mutations)
    if not sets and any(isinstance(m, DeleteRow) for m in row.mutations):
        return [*found, bt.DeleteRangeFromColumn(TXN_FAMILY, TXN_WRITE_COLUMN)]
    return [*found, RawMutation(set_cell_message(TXN_FAMILY, TXN_WRITE_COLUMN, os.urandom(8), 0))]


def _client_mutations(row: RowMutation, families: tuple[str, ...] | None) -> list[bt.Mutation]:
    found: list[bt.Mutation] = []
    for m in in_column_order(row.mutations):
        if type(m) is SetCell:
            found.append(RawMutation(set_cell_message(m.family, m.qualifier, m.value, m.timestamp_micros)))
        elif isinstance(m, DeleteRow):
            found += [bt.DeleteAllFromFamily(f) for f in families] if families is not None else [bt.DeleteAllFromRow()]
        elif isinstance(m, DeleteCells):
            found.append(bt.DeleteRangeFromColumn(m.family, m.qualifier, m.start_micros, m.end_micros))
        elif isinstance(m, AddToCell):  # a counter (the codec's counter_write)
            found.append(bt.AddToCell(m.family, m.qualifier, m.amount, m.timestamp_micros))
        else:  # a mutation the codec learned after this: refused loudly, never dropped
            raise TypeError(f"serve cannot write the codec's {type(m).__name__} yet")
    return found


class Store:
    """One Bigtable table through one app profile, its calls bounded and its failures
    turned into DynamoDB's errors (`bigtable_errors`). A table of items names its item
    families (`families`), so its reads leave the stream's records out (the module doc);
    serve's own tables (registries, tokens) hold no records and are read whole. Its reads
    and conditional writes go the lean way (point_calls.py), the rest through the data client's
    table."""

    def __init__(self, handle: Any, name: str, families: tuple[str, ...] | None = None):
        self.handle, self.name = LeanTable(handle), name
        self.items = item_cells(families) if families is not None else None
        self.writer = writer_cells(families) if families is not None else None
        self.reverse: ReverseReader | None = None  # made at the first reverse scan
        self.reverse_refused = False  # the server answered UNIMPLEMENTED to one: read forward from then on

    def view(self, writer: bool) -> rf.RowFilter | None:
        """What a read takes of a row: a writer's view or an item reader's (None: everything)."""
        return self.writer if writer else self.items

    def unchanged(self, cells: list[Cell]) -> rf.RowFilter:
        """The guard of a write over `cells`, as a writer's read saw them."""
        return unchanged_filter(cells, self.writer)

    def any_cell(self) -> rf.RowFilter:
        """Yields a cell while the row holds anything a writer's read would see (the guard of a
        write over an empty read: the false branch of this)."""
        return self.writer if self.writer is not None else rf.PassAllFilter(True)

    async def read_row(self, key: bytes, *, writer: bool = False) -> Any:
        """One row without its stream records; a `writer` (whose write's guard compares the
        row) gets the newest record with it (`writer_cells`)."""
        async with bigtable_errors(self.name):
            return await self.handle.read_row(key, row_filter=self.view(writer),
                                              operation_timeout=READ_SECONDS, attempt_timeout=ATTEMPT_SECONDS)

    async def read_rows(self, keys: list[bytes], *, writer: bool = False) -> dict[bytes, Any]:
        """Rows by key, as `read_row` reads one."""
        query = ReadRowsQuery(row_keys=list(dict.fromkeys(keys)), row_filter=self.view(writer))
        async with bigtable_errors(self.name):
            rows = await self.handle.read_rows(query, operation_timeout=READ_SECONDS, attempt_timeout=ATTEMPT_SECONDS)
        return {row.row_key: row for row in rows}

    async def scan(self, start: bytes | None, end: bytes | None, *, start_open: bool, limit: int,
                   row_filter: rf.RowFilter | None = None) -> list[Any]:
        """Up to `limit` rows of [start, end) in key order (start excluded with `start_open`),
        as an item read sees them, or as `row_filter` (then rows with no cell it passes are left out)."""
        async with bigtable_errors(self.name):
            return await self.handle.read_range(start, end, start_open=start_open, limit=limit,
                                                row_filter=row_filter or self.items, operation_timeout=READ_SECONDS,
                                                attempt_timeout=ATTEMPT_SECONDS)

    async def newest_cells(self, qualifier: bytes, page: int = 500) -> AsyncIterator[tuple[bytes, Any]]:
        """Every row's key and its newest cell of `qualifier` (None when it has none), page by
        page: how serve's registries (created tables, streams) are listed. A table that was
        never made holds no rows."""
        position, start_open = None, False
        while True:
            try:
                rows = await self.scan(position, None, start_open=start_open, limit=page)
            except ServeError as error:
                if error.name == "ResourceNotFoundException":
                    return
                raise
            for row in rows:
                yield row.row_key, max((c for c in row if c.qualifier == qualifier), key=lambda c: c.timestamp_micros,
                                       default=None)
            if len(rows) < page:
                return
            position, start_open = rows[-1].row_key, True

    async def scan_reversed(self, start: bytes | None, end: bytes | None, *, start_open: bool,
                            limit: int) -> list[Any] | None:
        """Up to `limit` rows of [start, end), the last first (reverse_rows.py); None when
        the server refuses reverse scans (asked once per table and profile)."""
        if self.reverse_refused:
            return None
        self.reverse = self.reverse or ReverseReader(self.handle.client)
        async with bigtable_errors(self.name):
            try:
                return await self.reverse.read(self.handle, start, end, start_open=start_open, limit=limit,
                                               row_filter=self.items,
                                               seconds=READ_SECONDS, attempt_seconds=ATTEMPT_SECONDS)
            except ReverseScanRefused:
                self.reverse_refused = True
                return None

    async def write_if_unchanged(self, row: RowMutation, read: list[Cell], families: tuple[str, ...] | None = None
                                 ) -> bool:
        """Write only while the row still holds exactly the cells `read`; False when it changed.
        With `families`, a row delete is made family by family (`client_mutations`)."""
        changes = client_mutations(row, families)
        async with bigtable_errors(self.name):
            if not read:
                matched = await self.handle.check_and_mutate_row(row.key, self.any_cell(),
                                                                 false_case_mutations=changes,
                                                                 operation_timeout=WRITE_SECONDS)
                return not matched
            return bool(await self.handle.check_and_mutate_row(row.key, self.unchanged(read),
                                                               true_case_mutations=changes,
                                                               operation_timeout=WRITE_SECONDS))


class bigtable_errors:  # noqa: N801 - used as a context manager, named for what it catches
    """Bigtable's failures as DynamoDB's: RESOURCE_EXHAUSTED is throttling (the SDK backs off),
    a missing table is ResourceNotFound, a deadline or an unreachable server a 500."""

    def __init__(self, table: str):
        self.table = table

    async def __aenter__(self) -> None:
        return None

    async def __aexit__(self, kind: Any, error: BaseException | None, tb: Any) -> None:
        if error is None or isinstance(error, ServeError):
            return
        cause = _cause(error)
        if isinstance(cause, google_errors.ResourceExhausted):
            raise throttled(f"Bigtable is out of capacity for table {self.table} (RESOURCE_EXHAUSTED): {cause.message}")
        if isinstance(cause, google_errors.NotFound):
            raise not_found(self.table)
        if isinstance(cause, google_errors.GoogleAPIError):
            raise internal(f"Bigtable did not complete the request for table {self.table}: "
                           f"{type(cause).__name__}: {cause}")


def _cause(error: BaseException) -> BaseException:
    """The client wraps retried failures (RetryExceptionGroup, DeadlineExceeded from ...)."""
    inner = getattr(error, "exceptions", None)
    if inner:
        return _cause(inner[-1])
    return error

