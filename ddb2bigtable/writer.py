"""The fast local writer: google-cloud-bigtable's async data client and mutation batcher.

The batcher sends MutateRows in the background, applies flow control (so memory stays
bounded whatever the export's size) and retries transient errors with exponential
backoff. What it cannot write comes back here: a permanent per-row error (the row is
rejected) goes to the dead-letter file with its export line; anything else (the cluster
unreachable past the retry deadline) stops the data file with a clear error, the file is
not marked done, and a rerun writes it again (same keys, same timestamps: idempotent).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

from google.api_core import exceptions as api_exceptions
from google.cloud.bigtable.data import BigtableDataClientAsync, mutations
from google.cloud.bigtable.data.exceptions import MutationsExceptionGroup

from .mutations import DeleteCells, DeleteRow, RowMutation, SetCell

# Errors that say "this row will never be accepted", as opposed to "try again later".
PERMANENT = (api_exceptions.InvalidArgument, api_exceptions.FailedPrecondition, api_exceptions.OutOfRange)


class WriteError(Exception):
    """Writes failed for a reason retries did not fix; the message says what and where."""


@dataclass(frozen=True)
class Source:
    """Where a mutation came from, so a rejected row can be dead-lettered with its line."""

    file: str
    line: int


class _Entry(mutations.RowMutationEntry):
    def __init__(self, row: RowMutation, source: Source):
        super().__init__(row.key, [client_mutation(m) for m in row.mutations])
        self.source = source


def row_entry(row: RowMutation, source: Source) -> mutations.RowMutationEntry:
    """The client's entry for one row, remembering its export line for dead letters."""
    return _Entry(row, source)


def client_mutation(m: SetCell | DeleteRow | DeleteCells) -> mutations.Mutation:
    """The codec's mutation as the Bigtable client's (shared by this writer and the Beam pipeline)."""
    if isinstance(m, SetCell):
        return mutations.SetCell(m.family, m.qualifier, m.value, m.timestamp_micros)
    if isinstance(m, DeleteRow):
        return mutations.DeleteAllFromRow()
    return mutations.DeleteRangeFromColumn(m.family, m.qualifier, m.start_micros, m.end_micros)


@dataclass
class WriteSettings:
    flush_limit_mutation_count: int = 1000
    flow_control_max_mutation_count: int = 20_000
    operation_timeout_seconds: float = 120.0
    # The batcher's append does not wait for flow control, so a slow cluster would let
    # entries pile up; closing the batcher every this many rows waits for them and bounds
    # memory whatever the export's size.
    rows_per_batcher: int = 20_000


class Writer:
    """One table's writer; `write` streams (row, source) pairs and reports rejected rows."""

    def __init__(self, project: str, instance_id: str, table_id: str, app_profile_id: str | None,
                 settings: WriteSettings | None = None):
        self.project, self.instance_id, self.table_id = project, instance_id, table_id
        self.app_profile_id = app_profile_id
        self.settings = settings or WriteSettings()

    async def write(self, rows: AsyncIterator[tuple[RowMutation, Source]],
                    rejected: Callable[[Source, str], None]) -> int:
        """Writes every row; calls `rejected(source, reason)` for rows Bigtable refuses.

        Returns the number of rows sent. Raises WriteError when rows failed transiently
        past the retry deadline.
        """
        s = self.settings
        sent = 0
        stream = rows.__aiter__()
        async with BigtableDataClientAsync(project=self.project) as client:
            table = client.get_table(self.instance_id, self.table_id, app_profile_id=self.app_profile_id)
            more = True
            while more:
                batcher = table.mutations_batcher(
                    flush_limit_mutation_count=s.flush_limit_mutation_count,
                    flow_control_max_mutation_count=s.flow_control_max_mutation_count,
                    batch_operation_timeout=s.operation_timeout_seconds,
                )
                try:
                    async with batcher:
                        for _ in range(s.rows_per_batcher):
                            try:
                                row, source = await stream.__anext__()
                            except StopAsyncIteration:
                                more = False
                                break
                            await batcher.append(_Entry(row, source))
                            sent += 1
                except MutationsExceptionGroup as group:
                    sort_failures(group, self.table_id, rejected)
        return sent


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
        raise WriteError(f"{group}: more rows failed than the client reports one by one, so they cannot be "
                         f"dead-lettered; nothing is lost: rerun the load, it rewrites this data file") from None
    if transient:
        source, cause = transient[0]
        raise WriteError(
            f"{len(transient)} row(s) could not be written to {table_id} after retries "
            f"(first: {source.file} line {source.line}: {_short(cause)}); nothing is lost: "
            f"rerun the load, it resumes with this data file") from None


def _permanent(error: BaseException) -> bool:
    inner = getattr(error, "exceptions", None)  # RetryExceptionGroup: judge by its last attempt
    if inner:
        return _permanent(inner[-1])
    return isinstance(error, PERMANENT)


def _short(error: BaseException) -> str:
    inner = getattr(error, "exceptions", None)
    return _short(inner[-1]) if inner else f"{type(error).__name__}: {error}"[:300]
