"""The fast local writer: google-cloud-bigtable's async data client and mutation batcher.

The batcher sends MutateRows in the background, applies flow control (so memory stays
bounded whatever the export's size) and retries transient errors with exponential
backoff. What it cannot write comes back here: a permanent per-row error (the row is
rejected) goes to the dead-letter file with its export line; anything else (the cluster
unreachable past the retry deadline) stops the data file with a clear error, the file is
not marked done, and a rerun writes it again (same keys, same timestamps: idempotent).
"""

from __future__ import annotations

import asyncio
import gc
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from google.api_core import exceptions as api_exceptions
from google.cloud.bigtable.data import BigtableDataClientAsync, mutations
from google.cloud.bigtable.data.exceptions import MutationsExceptionGroup
from google.cloud.bigtable_v2.types import bigtable as bigtable_types

from ..codec.mutations import AddToCell, DeleteRow, RowCells, RowMutation, SetCell
from ..spec.errors import ServiceError
from .client_hooks import Source, entries, entry, read_responses_raw
from .entry_bytes import EntryBytes

# Errors that say "this row will never be accepted", as opposed to "try again later".
PERMANENT = (api_exceptions.InvalidArgument, api_exceptions.FailedPrecondition, api_exceptions.OutOfRange)


class WriteError(ServiceError):
    """Writes failed for a reason retries did not fix; the message says what and where.

    In parts, because the load and replicate say different things about the same failure:
    `what` failed (`rows`, the `first` one's source and its `cause` when the client named
    them), and `hint`, what a load's user does about it (rerun the load). replicate
    waits the failure out as an outage and words its own message from the parts."""

    def __init__(self, what: str, hint: str = "", *, rows: int | None = None, first: Source | None = None,
                 cause: str = ""):
        super().__init__(f"{what}; {hint}" if hint else what)
        self.what, self.hint = what, hint
        self.rows, self.first, self.cause = rows, first, cause


_ENTRY = bigtable_types.MutateRowsRequest.Entry.pb()
_REQUEST = bigtable_types.MutateRowsRequest.pb()


def fill_entry(message: Any, row: RowMutation) -> None:
    """Writes the codec's row into an empty MutateRowsRequest.Entry protobuf message."""
    message.row_key = row.key
    add = message.mutations.add
    for m in row.mutations:
        if isinstance(m, SetCell):
            cell = add().set_cell
            cell.family_name, cell.column_qualifier = m.family, m.qualifier
            cell.value, cell.timestamp_micros = m.value, m.timestamp_micros
        elif isinstance(m, AddToCell):  # a counter, its column deleted just before (counter_write)
            cell = add().add_to_cell
            cell.family_name, cell.column_qualifier.raw_value = m.family, m.qualifier
            cell.timestamp.raw_timestamp_micros, cell.input.int_value = m.timestamp_micros, m.amount
        elif isinstance(m, DeleteRow):
            add().delete_from_row.SetInParent()
        else:
            column = add().delete_from_column
            column.family_name, column.column_qualifier = m.family, m.qualifier
            if m.start_micros is not None or m.end_micros is not None:
                column.time_range.SetInParent()
            if m.start_micros is not None:
                column.time_range.start_timestamp_micros = m.start_micros
            if m.end_micros is not None:
                column.time_range.end_timestamp_micros = m.end_micros


def row_entry(row: RowMutation | RowCells, source: Source, cells: EntryBytes | None = None
              ) -> mutations.RowMutationEntry:
    """The client's entry for one row, remembering its export line for dead letters. The
    compiled encoder's rows are parsed from the wire bytes `cells` writes (see `Packer`)."""
    if isinstance(row, RowCells):
        message = _ENTRY.FromString((cells or EntryBytes()).entry(row))
    else:
        message = _ENTRY()
        fill_entry(message, row)
    return entry(message, source.file, source.line)


class Packer:
    """Rows of one data file packed as one serialized MutateRowsRequest: how the encoder
    process ships them to the writer (one C-level parse per chunk on the other side). The
    compiled encoder's rows (`RowCells`) are written as wire bytes by `cells` (one per
    encoder process: the heads it keeps serve all its files); other rows are filled into a
    request message, serialized when a `RowCells` row comes next or the chunk is taken. A
    request that holds only entries serializes as the join of its entries, so the chunk is
    the join of those parts, rows in order. Each row's serialized length goes with it
    (`sizes`): the batcher asks for it, and the writer would otherwise measure every
    message again (`message.ByteSize()`, a walk of the message)."""

    def __init__(self, cells: EntryBytes | None = None) -> None:
        self._cells = cells or EntryBytes()
        self._parts: list[bytes] = []
        self._request: Any = None  # the RowMutations since the last part
        self.lines: list[int] = []
        self.sizes: list[int] = []

    def add(self, row: RowMutation | RowCells, line: int) -> None:
        if isinstance(row, RowCells):
            if self._request is not None:
                self._serialize()
            self.sizes.append(self._cells.add(self._parts, row))
        else:
            if self._request is None:
                self._request = _REQUEST()
            message = self._request.entries.add()
            fill_entry(message, row)
            self.sizes.append(message.ByteSize())
        self.lines.append(line)

    def _serialize(self) -> None:
        self._parts.append(self._request.SerializeToString())
        self._request = None

    def take(self) -> tuple[bytes, list[int], list[int]]:
        """The chunk, its rows' export lines and their serialized lengths; the packer starts over."""
        if self._request is not None:
            self._serialize()
        packed, lines, sizes = b"".join(self._parts), self.lines, self.sizes
        self._parts, self.lines, self.sizes = [], [], []
        return packed, lines, sizes


def unpack(packed: bytes, file: str, lines: list[int], sizes: list[int]) -> list[mutations.RowMutationEntry]:
    """`Packer.take`'s chunk as batcher entries."""
    return entries(_REQUEST.FromString(packed).entries, file, lines, sizes)


@dataclass
class WriteSettings:
    flush_limit_mutation_count: int = 1000
    flow_control_max_mutation_count: int = 20_000
    # A batch's MutateRows, its retries included, and each try of it (a silent cluster
    # ends a data file after operation_timeout_seconds; bigtable/deadlines.py has the others).
    operation_timeout_seconds: float = 120.0
    attempt_timeout_seconds: float = 60.0  # the client's own default, explicit
    # The batcher's append does not wait for flow control, so a slow cluster would let
    # entries pile up; a data file's rows go through batchers of `rows_per_batcher` rows,
    # and a new one opens only while fewer than `batchers_in_flight` are still closing
    # (waiting for their rows to be acknowledged): at most 1,000 rows of a file in flight,
    # whatever the export's size, in four MutateRows that wait for their answers side by
    # side. One batcher of 1,000 rows at a time sent a file's rows one round trip at a
    # time: with answers 50 ms late, as from a distant cluster, the loader fell to 15,400
    # rows/s of generated 1 KB items where it makes 27,000 now and 32,000-34,000 on the
    # emulator's own answers, where the two ways measure the same (benchmarks/README.md).
    rows_per_batcher: int = 250
    batchers_in_flight: int = 4
    # Rows acknowledged between two full garbage collections (`Collections` says why).
    rows_per_collection: int = 5_000


class Collections:
    """Full garbage collections on a row count, for both writers (local and Beam).

    The client's MutateRows operation (async and sync alike) is a reference cycle: its
    retry lambda holds the operation. So every row it sent (entry, protobuf message, and
    the 500-row chunk the message was parsed from) stays in memory until a full
    collection, which Python ran only every tens of thousands of rows: that backlog was
    the part of the peak that grew with the export. A collection after every
    `rows_per_collection` acknowledged rows bounds it, at a small cost measured in
    benchmarks/README.md."""

    def __init__(self, every: int):
        self.every = every
        self._uncollected = 0

    def acknowledged(self, rows: int) -> None:
        """Call when a batcher has closed: its rows are acknowledged (or sorted as failures)."""
        self._uncollected += rows
        if self._uncollected >= self.every:
            self._uncollected = 0
            gc.collect()


class Writer:
    """One table's writer, one client for the whole load (`async with`); `write` sends one
    data file's entries through a batcher of its own, so its failures stay its own."""

    def __init__(self, project: str, instance_id: str, table_id: str, app_profile_id: str | None,
                 settings: WriteSettings | None = None):
        self.project, self.instance_id, self.table_id = project, instance_id, table_id
        self.app_profile_id = app_profile_id
        self.settings = settings or WriteSettings()
        self._collections = Collections(self.settings.rows_per_collection)

    async def __aenter__(self) -> Writer:
        self._client = BigtableDataClientAsync(project=self.project)
        read_responses_raw(self._client)
        self._table = self._client.get_table(self.instance_id, self.table_id, app_profile_id=self.app_profile_id)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self._client.close()

    @property
    def client(self) -> BigtableDataClientAsync:
        """The open client, for the load's other calls to the same instance (one channel
        per load: on Cloud Bigtable each new one is a TLS and auth handshake)."""
        return self._client

    async def write(self, chunks: AsyncIterator[list[mutations.RowMutationEntry]],
                    rejected: Callable[[Source, str], None]) -> int:
        """Writes every entry; calls `rejected(source, reason)` for rows Bigtable refuses.

        Returns the number of rows sent, once every one is acknowledged. Raises WriteError
        when rows failed transiently past the retry deadline; an error of `chunks` (the
        export) is raised once the rows read before it have landed.
        """
        s = self.settings
        sent = 0
        stream = chunks.__aiter__()
        closing: deque[asyncio.Future[None]] = deque()  # batchers whose rows are landing, oldest first
        try:
            more = True
            while more:
                batcher = self._table.mutations_batcher(
                    flush_limit_mutation_count=s.flush_limit_mutation_count,
                    flow_control_max_mutation_count=s.flow_control_max_mutation_count,
                    batch_operation_timeout=s.operation_timeout_seconds,
                    batch_attempt_timeout=min(s.attempt_timeout_seconds, s.operation_timeout_seconds),
                )
                in_batcher = 0
                try:
                    while in_batcher < s.rows_per_batcher:
                        try:
                            chunk = await stream.__anext__()
                        except StopAsyncIteration:
                            more = False
                            break
                        for entry in chunk:
                            await batcher.append(entry)
                        in_batcher += len(chunk)
                        sent += len(chunk)
                finally:
                    closing.append(asyncio.ensure_future(self._close(batcher, in_batcher, rejected)))
                if len(closing) >= s.batchers_in_flight:
                    await closing.popleft()
        finally:
            # Every batcher closes whatever happened (its rows land or are sorted as failures);
            # the first failure is raised, after an error of the export's if there was one.
            failures = await asyncio.gather(*closing, return_exceptions=True)
        failure = next((f for f in failures if isinstance(f, BaseException)), None)
        if failure is not None:
            raise failure
        return sent

    async def _close(self, batcher: Any, rows: int, rejected: Callable[[Source, str], None]) -> None:
        try:
            await batcher.close()
        except MutationsExceptionGroup as group:
            sort_failures(group, self.table_id, rejected)
        self._collections.acknowledged(rows)


def sort_failures(group: MutationsExceptionGroup, table_id: str, rejected: Callable[[Source, str], None]) -> None:
    """Sorts a batcher's failures: `rejected(source, reason)` for each permanent one, then
    WriteError when any failed transiently past the retries (shared with the Beam pipeline)."""
    transient: list[tuple[Source, BaseException]] = []
    for failure in group.exceptions:
        cause = failure.__cause__ or failure
        source = getattr(failure.entry, "source", Source("?", 0))
        if _permanent(cause):
            rejected(source, f"Bigtable rejected the row: {cause}")
        else:
            transient.append((source, cause))
    if "truncated)" in str(group):  # the client kept only some failures: the rest have no row to name
        first, cause = transient[0] if transient else (None, group)
        raise WriteError(f"{group}: more rows failed than the client reports one by one, so they cannot be "
                         "dead-lettered", "nothing is lost: rerun the load, it rewrites this data file",
                         rows=_failed_rows(group), first=first, cause=_short(cause)) from None
    if transient:
        source, cause = transient[0]
        raise WriteError(
            f"{len(transient)} row(s) could not be written to {table_id} after retries "
            f"(first: {source.file} line {source.line}: {_short(cause)})",
            "nothing is lost: rerun the load, it resumes with this data file",
            rows=len(transient), first=source, cause=_short(cause)) from None


def _failed_rows(group: MutationsExceptionGroup) -> int | None:
    """How many rows failed, truncated list or not: the group's message begins with it
    ("300 failed entries from 300 attempted (first 10 and last 10 ...")."""
    count = group.message.split(" ", 1)[0]
    return int(count) if count.isdigit() else None


def _permanent(error: BaseException) -> bool:
    inner = getattr(error, "exceptions", None)  # RetryExceptionGroup: judge by its last attempt
    if inner:
        return _permanent(inner[-1])
    return isinstance(error, PERMANENT)


def _short(error: BaseException) -> str:
    inner = getattr(error, "exceptions", None)
    return _short(inner[-1]) if inner else f"{type(error).__name__}: {error}"[:300]
