"""Rows a serve transaction still holds (docs/transactions.md): a lock is not an error of
the load, and the items are read as they were before the transaction (every reader of
items skips the reserved family), so `verify` and `cutover check` say how many rows are
locked and what to do rather than count them as differences.

load must not import serve: the family and the lock's column come from spec/families.py,
read with the Bigtable client directly, a filter on that one column so only lock cells
travel.
"""

from __future__ import annotations

from typing import Any

from google.cloud.bigtable.data import ReadRowsQuery, RowRange
from google.cloud.bigtable.data import row_filters as rf

from ..bigtable.deadlines import SCAN_ATTEMPT_SECONDS, SCAN_SECONDS
from ..spec.families import TXN_FAMILY, TXN_LOCK_COLUMN


async def locked_rows(table: Any) -> int:
    """How many rows of `table` (a data client's table handle) hold a transaction lock."""
    only_locks = rf.RowFilterChain([rf.FamilyNameRegexFilter(TXN_FAMILY),
                                    rf.ColumnQualifierRegexFilter(TXN_LOCK_COLUMN),  # a whole-name match
                                    rf.StripValueTransformerFilter(True)])
    rows = await table.read_rows_stream(ReadRowsQuery(row_ranges=[RowRange()], row_filter=only_locks),
                                        operation_timeout=SCAN_SECONDS, attempt_timeout=SCAN_ATTEMPT_SECONDS)
    return sum([1 async for _ in rows])


def locked_note(count: int) -> str:
    """What a report says of `count` locked rows (none: nothing)."""
    if not count:
        return ""
    return (f"{count:,} row(s) still hold a serve transaction's lock: not an error of the load; their items are "
            f"read here as before that transaction. Start `ddb2bigtable serve` so its sweep settles them "
            f"(docs/transactions.md), or read them through serve, which answers at their transaction's fate")
