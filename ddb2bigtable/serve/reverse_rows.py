"""Bigtable's reverse scan: rows of a range in descending key order, reading only the
rows returned (a `ScanIndexForward: false` Query page with a Limit reads its Limit of rows).

The data client (google-cloud-bigtable 2.50) does not offer it: ReadRowsQuery has no
`reversed`, and its row merger refuses row keys that do not increase
(googleapis/python-bigtable#1063, open). So the request goes through the generated
client over the data client's own transport (same channel, credentials, emulator
address), with `ReadRowsRequest.reversed` set and the `bigtable-features` header saying
the client reads reverse scans, without which Bigtable and the emulator answer
UNIMPLEMENTED "Client doesn't support reverse scans yet" (FeatureFlags.reverse_scans in
google/bigtable/v2/feature_flags.proto). Its chunks are merged into rows as a forward
read's are (point_calls.merged).

A server that still answers UNIMPLEMENTED raises ReverseScanRefused: the caller reads
forward and reverses (query_ops.py). A stream that breaks is read again from the last
row it delivered, within the read's deadline.
"""

from __future__ import annotations

import asyncio
import base64
import time
from typing import Any

from google.api_core import exceptions as google_errors
from google.cloud.bigtable_v2.services.bigtable import BigtableAsyncClient
from google.cloud.bigtable_v2.types import FeatureFlags, ReadRowsRequest, RowRange, RowSet

from ..spec.errors import Ddb2BigtableError
from .point_calls import Row, merged

FEATURES = ("bigtable-features",
            base64.urlsafe_b64encode(FeatureFlags.serialize(FeatureFlags(reverse_scans=True))).decode())
RETRIED = (google_errors.ServiceUnavailable, google_errors.DeadlineExceeded, google_errors.Aborted)
BACKOFF_SECONDS = 0.1


class ReverseScanRefused(Ddb2BigtableError):
    """The server answered UNIMPLEMENTED to a reversed ReadRows (the caller reads forward
    instead: never shown to a user)."""


class ReverseReader:
    """Reversed ReadRows over one data client's transport (one per worker process)."""

    def __init__(self, client: Any):
        self.gapic = BigtableAsyncClient(transport=client.transport)

    async def read(self, table: Any, start: bytes | None, end: bytes | None, *, start_open: bool, limit: int,
                   row_filter: Any, seconds: float, attempt_seconds: float) -> list[Row]:
        """Up to `limit` rows of [start, end) (start excluded with `start_open`), last first,
        each row's cells through `row_filter` (a data client's RowFilter; None: every cell)."""
        rows: list[Row] = []
        deadline = time.monotonic() + seconds
        while True:
            upper = rows[-1].row_key if rows else end
            request = ReadRowsRequest(table_name=table.table_name, app_profile_id=table.app_profile_id or "",
                                      rows=RowSet(row_ranges=[_range(start, upper, start_open)]),
                                      rows_limit=limit - len(rows), reversed=True,
                                      filter=row_filter._to_pb() if row_filter is not None else None)
            left = deadline - time.monotonic()
            try:
                stream = await self.gapic.read_rows(request, timeout=min(attempt_seconds, left), retry=None,
                                                    metadata=[FEATURES])
                async for row in merged(stream, descending=True):
                    rows.append(row)
                return rows
            except google_errors.MethodNotImplemented as refused:
                raise ReverseScanRefused(str(refused)) from None
            except RETRIED:
                if deadline - time.monotonic() <= BACKOFF_SECONDS:
                    raise
                await asyncio.sleep(BACKOFF_SECONDS)


def _range(start: bytes | None, end: bytes | None, start_open: bool) -> RowRange:
    bounds: dict[str, bytes] = {}
    if start:
        bounds["start_key_open" if start_open else "start_key_closed"] = start
    if end is not None:
        bounds["end_key_open"] = end
    return RowRange(**bounds)
