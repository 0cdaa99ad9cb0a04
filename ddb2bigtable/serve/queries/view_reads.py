"""Reading a GSI's materialized view in DynamoDB's order: one ExecuteQuery (view_rows),
the rows of a page across several (runs of rows equal in the view's order put in exact
order, those a condition refuses left out), and a backward page's last rows found by
halving its sort key's values, since Bigtable's SQL reads only ascending (views.py has
the pages, view_sql.py the statements).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...plan.tables import view_id
from ...spec.model import Gsi
from ..catalog import ServedTable
from ..errors import ServeError, validation
from ..session import Session
from ..store import ATTEMPT_SECONDS, READ_SECONDS, bigtable_errors
from .prepared_views import prepared_queries
from .view_sql import Statement, ViewRow, bytes_between, float_rank, ranked_float, view_row

PAGE_ROWS = 500  # view rows asked of one ExecuteQuery
BACKWARD_ROWS = 100_000  # view rows one backward page may read before its rows (200 ExecuteQuery calls)
STREAMED_ROWS = 2_500  # a backward range this short is read whole rather than halved (5 ExecuteQuery calls)
Position = tuple[Any, ...]  # a place in the view's order: key order values, then the source row key
Maker = Callable[[Position | None, int], Statement]  # the statement of the rows past a position, so many


def key_attributes(gsi: Gsi) -> list[Any]:
    """The index's key attributes, partition key first: the view's key columns in order."""
    return [k for k in (gsi.key.partition, gsi.key.sort) if k is not None]


async def view_rows(session: Session, table: ServedTable, gsi: Gsi, statement: Statement) -> list[ViewRow]:
    """One ExecuteQuery on the view (its PrepareQuery reused per statement shape:
    prepared_views.py), through the serving profile, bounded like every read."""
    keys = tuple(key_attributes(gsi))
    try:
        async with bigtable_errors(table.name):
            rows = await prepared_queries(session.client).rows(statement, table.instance_id, table.serving_profile,
                                                               READ_SECONDS, ATTEMPT_SECONDS)
            return [view_row(row, keys) for row in rows]
    except ServeError as error:  # NOT_FOUND here is the view's: the table was found (catalog, plan)
        if error.name != "ResourceNotFoundException":
            raise
    view = view_id(table.spec.id, gsi.name)
    raise validation(f"The index {gsi.name} of table {table.name} has no materialized view {view} in Bigtable "
                     f"instance {table.instance_id}: create it with `pulumi up` for this stage")


@dataclass(frozen=True)
class Reading:
    """How a page reads the view: `make` the statement of the rows past a view position,
    `place` a row's view position; the rows of one `run` (equal in the view's order) sorted
    by `exact`, those `keep` refuses left out; `backward`: the last rows, last first."""

    make: Maker
    place: Callable[[ViewRow], Position]
    backward: bool = False
    run: Callable[[ViewRow], Any] = lambda row: row
    exact: Callable[[ViewRow], Any] = lambda row: 0
    keep: Callable[[ViewRow], bool] = lambda row: True


async def ordered(session: Session, table: ServedTable, gsi: Gsi, reading: Reading, want: int) -> list[ViewRow]:
    """`want` view rows in DynamoDB's order, reading the statements' rows in the view's
    order, PAGE_ROWS at most per ExecuteQuery; a run is complete at the next run's first
    row, so a forward page ends on a run's end (or the index partition's)."""
    backward, run, exact, keep = reading.backward, reading.run, reading.exact, reading.keep
    found: list[ViewRow] = []
    current: list[ViewRow] = []
    read, after = 0, None
    while True:
        ask = PAGE_ROWS if backward else min(PAGE_ROWS, want - len(found) + 1)
        rows = await view_rows(session, table, gsi, reading.make(after, ask))
        read += len(rows)
        if backward and read > BACKWARD_ROWS:
            raise validation(f"ScanIndexForward false on index {gsi.name} reads the index forward from the start of "
                             f"the key condition's range (Bigtable's SQL reads views only ascending) and read more "
                             f"than {BACKWARD_ROWS} entries: bound the sort key from below in the key condition, "
                             f"or query forward")
        for row in rows:
            if current and run(row) != run(current[0]):
                found += sorted(filter(keep, current), key=exact)
                found = found[-want:] if backward else found  # backward: only the last rows are kept
                current = []
                if not backward and len(found) >= want:
                    return found[:want]
            current.append(row)
        if len(rows) < ask:
            found += sorted(filter(keep, current), key=exact)
            return found[::-1][:want] if backward else found[:want]
        after = reading.place(rows[-1])


@dataclass(frozen=True)
class Halving:
    """A sort key's values as places that can be halved: the `rank` of a value, the
    `value` at a place, a place strictly `between` two (None: there is none)."""

    rank: Callable[[Any], Any]
    value: Callable[[Any], Any]
    between: Callable[[Any, Any], Any]
    most: int  # halvings at most, each one ExecuteQuery, before the last floor is read forward


# a float's 64 bits; 160 bits of a byte string (ISO times under no upper bound took 76 in
# docs/serve.md's measure), still fewer calls than the 200 a forward read of BACKWARD_ROWS makes
NUMBERS = Halving(float_rank, ranked_float, lambda low, high: (low + high) // 2 if high - low > 1 else None, 64)
BYTES = Halving(lambda value: value, lambda value: value, bytes_between, 160)


async def last_rows(session: Session, table: ServedTable, gsi: Gsi, window: Callable[[Any, bool], Reading],
                     want: int, halving: Halving, high: Any) -> list[ViewRow]:
    """A backward page on a sort key, last row first, without reading a long range from
    its start: the values from the range's least to its top (`high`: the place just past
    it) are halved until the rows at or above a floor number `want` to 4 x `want`, which
    are read forward (one ExecuteQuery per halving for Limit up to 123, Halving.most at most),
    and the last `want` of them returned. A range of up to STREAMED_ROWS rows is read
    whole at once; one value holding more rows than a floor can part is read forward from
    it keeping only the last (refused past BACKWARD_ROWS)."""
    most = 4 * want
    rows = await ordered(session, table, gsi, window(None, False), max(most, STREAMED_ROWS) + 1)
    if len(rows) <= max(most, STREAMED_ROWS):
        return rows[::-1][:want]
    low = halving.rank(rows[0].order[1])  # a floor that reads too many rows; `high` reads too few
    for _ in range(halving.most):
        middle = halving.between(low, high)
        if middle is None:
            break
        found = await ordered(session, table, gsi, window(halving.value(middle), False), most + 1)
        if want <= len(found) <= most:
            return found[::-1][:want]
        low, high = (halving.rank(found[0].order[1]), high) if len(found) > most else (low, middle)
    return await ordered(session, table, gsi, window(halving.value(low), True), want)
