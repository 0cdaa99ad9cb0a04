"""What a worker knows of the rows it wrote last: each one's cells as a writer's read would
see them right after its write, so the next write of the item can skip that read.

A table with a stream pays a read before every write of an existing item: its record needs
the old item (MODIFY and its OldImage, INSERT or none), where the same PutItem without a
stream is one blind CheckAndMutateRow (docs/streams.md, "Write amplification"). But the
writer that wrote the row last knows what it holds: the cells it read, with its own row
mutation applied (`after_write`: the item's cells and times are the codec's, the
transaction family's are as read). The one cell it cannot know exactly is its own stream
record's commit time (Bigtable's clock stamps it: records.SERVER_TIME), so that cell is kept
with SERVER_TIME, which the guard matches at any time, by column and value
(guards.unchanged_filter). That is enough: the record's column is the row's change number,
which every later record of the row raises, and every other write of the item (a
transaction's lock, a write whose worker saw no stream, a no-op PutItem) sets cells with
new times.

The next write of the row in this worker decides on that image and sends its one
CheckAndMutateRow guarded on it (item_ops._first_write): the row as a read would have shown
it, so the record and the condition are decided as after a read. When anything else wrote
the row since (another worker or instance, a transaction, a TTL sweep), the guard fails,
nothing is written and the write reads the row and goes on as always (resolve.SingleWrite:
a presumed write that lost reads at once, with no pause). The model checker checks that
machine (tests/serve/transactions: a presumed view right and stale).

Bounded: MAX_ROWS rows and MAX_BYTES of cells a worker, the least recently written
forgotten first, and none older than MAX_AGE (far below the stream's 24 hours, after which
a row's change numbers could start again).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Iterable
from typing import Any

from google.cloud.bigtable.data import mutations as bt

from ...codec.mutations import Cell
from ...spec.families import STREAM_FAMILY
from ..guards import SERVER_TIME
from ..point_calls import RawMutation

MAX_ROWS = 4096
MAX_BYTES = 32 * 1024 * 1024
MAX_AGE = 600.0  # seconds

Row = tuple[str, bytes]  # (table, row key)
_known: OrderedDict[Row, tuple[float, int, tuple[Cell, ...]]] = OrderedDict()  # row -> (when, bytes, cells)
_held = [0]  # bytes of cells held


def known(row: Row) -> tuple[Cell, ...] | None:
    """The row's cells as this worker last wrote them, if it remembers them."""
    found = _known.get(row)
    if found is None:
        return None
    if time.monotonic() - found[0] > MAX_AGE:
        forget(row)
        return None
    return found[2]


def remember(row: Row, data: tuple[Cell, ...] | None) -> None:
    """Keep the row's cells as a writer's read would now see them (None: forget the row)."""
    forget(row)
    if data is None:
        return
    size = sum(len(c.value) + len(c.qualifier) + 48 for c in data)
    if size > MAX_BYTES // 8:
        return
    _known[row] = (time.monotonic(), size, data)
    _held[0] += size
    while len(_known) > MAX_ROWS or _held[0] > MAX_BYTES:
        forget(next(iter(_known)))


def forget(row: Row) -> None:
    gone = _known.pop(row, None)
    if gone is not None:
        _held[0] -= gone[1]


def after_write(data: Iterable[Cell], mutations: Iterable[Any]) -> tuple[Cell, ...] | None:
    """The cells a writer's read sees after `mutations` (a single write's, in order) applied
    to a row that held `data` (as that read saw it): the item and transaction families
    whole, the stream family's first column alone (its newest record: store.writer_cells).
    None when a mutation's outcome is not known here (a counter's AddToCell adds to what
    the server holds)."""
    cells = list(data)
    for m in mutations:
        if isinstance(m, RawMutation) and m.message.HasField("set_cell"):
            made = m.message.set_cell
            cell = Cell(made.family_name, made.column_qualifier, made.value, made.timestamp_micros)
        elif isinstance(m, bt.SetCell):
            cell = Cell(m.family, m.qualifier, m.new_value, m.timestamp_micros)
        elif isinstance(m, bt.DeleteAllFromFamily):
            cells = [c for c in cells if c.family != m.family_to_delete]
            continue
        elif isinstance(m, bt.DeleteAllFromRow):
            cells = []
            continue
        elif isinstance(m, bt.DeleteRangeFromColumn):
            start, end = m.start_timestamp_micros or 0, m.end_timestamp_micros or None
            hit = [c for c in cells if (c.family, c.qualifier) == (m.family, m.qualifier)]
            if any(c.timestamp_micros == SERVER_TIME for c in hit):
                return None
            gone = {id(c) for c in hit if c.timestamp_micros >= start and (end is None or c.timestamp_micros < end)}
            cells = [c for c in cells if id(c) not in gone]
            continue
        else:
            return None
        if cell.timestamp_micros != SERVER_TIME:  # a cell of the same column and time is replaced
            cells = [c for c in cells if (c.family, c.qualifier, c.timestamp_micros) !=
                     (cell.family, cell.qualifier, cell.timestamp_micros)]
        cells.append(cell)
    cells.sort(key=_read_order)
    newest = next((c for c in cells if c.family == STREAM_FAMILY), None)
    return tuple(c for c in cells if c.family != STREAM_FAMILY or c is newest)


def _read_order(cell: Cell) -> tuple[str, bytes, int]:
    """Bigtable's order of a row's cells: by family, column, then the newest first (a cell
    the server stamps is newer than any the writer knew)."""
    at = cell.timestamp_micros
    return cell.family, cell.qualifier, -(2**63) if at == SERVER_TIME else -at


def would_hold(known_cells: tuple[Cell, ...], read: tuple[Cell, ...]) -> bool:
    """Whether the guard on `known_cells` would have held on the row as `read` shows it
    (times compared to the millisecond, as the guard does; a SERVER_TIME cell at any time)."""
    if len(known_cells) != len(read):
        return False
    return all(a.family == b.family and a.qualifier == b.qualifier and a.value == b.value and (
        a.timestamp_micros == SERVER_TIME or a.timestamp_micros // 1000 == b.timestamp_micros // 1000)
        for a, b in zip(sorted(known_cells, key=_read_order), sorted(read, key=_read_order), strict=True))
