"""What the writer takes from google-cloud-bigtable beyond its public API, behind one check.

Two hooks into the client's internals make the write path about 2.5 times faster
(benchmarks/README.md, "load_throughput"):

- `read_responses_raw` wraps a client's `_gapic_client.mutate_rows` so MutateRows answers
  are read as raw protobuf instead of through proto-plus wrappers;
- `RawEntry` is a `RowMutationEntry` holding the protobuf message built once (possibly in
  an encoder process), overriding the batcher's `_to_pb` and `size`.

Both rest on internals of the client version the project locks (TESTED_VERSION). With
any other version, or when one of those internals is gone, `hooks_off` says why, a
RuntimeWarning says so once, and the writer uses the public path: the client's own
`RowMutationEntry` and mutation classes, its own response reading. Slower, never wrong.
tests/load/test_client_hooks.py fails loudly when an upgrade moves a hook.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass
from importlib import metadata
from typing import Any

from google.cloud.bigtable.data import BigtableDataClient, BigtableDataClientAsync, mutations
from google.cloud.bigtable_v2.types import bigtable as bigtable_types

TESTED_VERSION = "2.50.2"  # pyproject.toml's pin
_RESPONSE_PB = bigtable_types.MutateRowsResponse.pb  # a response's raw message, not copied


@dataclass(frozen=True)
class Source:
    """Where a mutation came from, so a rejected row can be dead-lettered with its line."""

    file: str
    line: int


@functools.cache
def hooks_off() -> str | None:
    """Why the private hooks are not used (None: they are), decided once per process."""
    version = metadata.version("google-cloud-bigtable")
    if version != TESTED_VERSION:
        why = f"google-cloud-bigtable {version} is not the tested {TESTED_VERSION}"
    elif not callable(getattr(mutations.RowMutationEntry, "_to_pb", None)):
        why = "the client's RowMutationEntry no longer has _to_pb"
    else:
        return None
    warnings.warn(f"{why}: the loader writes through the client's public API (correct, about 2.5x slower); "
                  f"install the locked version for full speed", RuntimeWarning, stacklevel=2)
    return why


def read_responses_raw(client: BigtableDataClient | BigtableDataClientAsync) -> None:
    """Makes this client's MutateRows operations read Bigtable's answers as raw protobuf.

    For every row sent, the client reads the row's result (`index`, `status.code` twice,
    `status.message`, `status.details`) through proto-plus wrappers: six wrapped lookups
    per row, more CPU than everything else the write path does. The raw message has the
    same field names, so the client's own per-row error handling and retries run
    unchanged on it; only this client's gRPC call is wrapped (the `_gapic_client.mutate_rows`
    that the locked client's MutateRows operation, async and sync, calls per attempt)."""
    gapic: Any = getattr(client, "_gapic_client", None)
    call = getattr(gapic, "mutate_rows", None)
    if hooks_off():
        return
    if call is None:
        warnings.warn("the Bigtable client has no _gapic_client.mutate_rows: it reads its answers itself "
                      "(correct, slower)", RuntimeWarning, stacklevel=2)
        return
    gapic.mutate_rows = _async_raw(call) if isinstance(client, BigtableDataClientAsync) else _sync_raw(call)


def _async_raw(call: Callable[..., Any]) -> Callable[..., Any]:
    async def mutate_rows(*args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        return _raw_stream(await call(*args, **kwargs))
    return mutate_rows


def _sync_raw(call: Callable[..., Any]) -> Callable[..., Any]:
    def mutate_rows(*args: Any, **kwargs: Any) -> Any:
        return map(_RESPONSE_PB, call(*args, **kwargs))
    return mutate_rows


async def _raw_stream(responses: AsyncIterator[Any]) -> AsyncIterator[Any]:
    async for response in responses:
        yield _RESPONSE_PB(response)


class RawEntry(mutations.RowMutationEntry):
    """A row for the batcher, already in the form the client sends.

    The client's own `RowMutationEntry` turns every mutation into proto-plus objects
    twice per flush (`size()` and `_to_pb()`): that was half of the write path's CPU.
    Every mutation the codec writes carries an explicit timestamp (or is a delete), and a
    counter's AddToCell comes after the delete of its column in the same row (the codec's
    `counter_write`), so every entry is idempotent: retries are safe.
    """

    def __init__(self, message: Any, file: str, line: int, size: int | None = None):  # nothing to convert
        self.mutations = message.mutations  # the client asks for its len() four times per row
        self.message, self.file, self.line = message, file, line
        # Asked for twice per row (append, flow control). `size`: the message's serialized
        # length as the encoder wrote it; measuring it here again took a walk of the message.
        self._size = message.ByteSize() if size is None else size

    @property
    def row_key(self) -> bytes:  # type: ignore[override]  # the client's batcher never reads it: a copy on demand
        return self.message.row_key

    @property
    def source(self) -> Source:  # made only for the rare row Bigtable rejects
        return Source(self.file, self.line)

    def _to_pb(self) -> Any:
        return self.message

    def size(self) -> int:
        return self._size

    def is_idempotent(self) -> bool:
        return True


class PublicEntry(mutations.RowMutationEntry):
    """The public path's entry: the client's own class, plus the export line it came from.
    Idempotent as `RawEntry` says (the client judges AddToCell alone, which is not)."""

    def __init__(self, row_key: bytes, row_mutations: list[mutations.Mutation], source: Source):
        super().__init__(row_key, row_mutations)
        self.source = source

    def is_idempotent(self) -> bool:
        return True


def entry(message: Any, file: str, line: int) -> mutations.RowMutationEntry:
    """The batcher's entry for one MutateRowsRequest.Entry message from `file`'s `line`."""
    if hooks_off() is None:
        return RawEntry(message, file, line)
    return PublicEntry(message.row_key, [_public(m) for m in message.mutations], Source(file, line))


def entries(messages: Iterable[Any], file: str, lines: list[int], sizes: list[int]
            ) -> list[mutations.RowMutationEntry]:
    """`entry` for each message of a chunk, its line and its serialized length, the hooks
    checked once for the chunk instead of per row."""
    rows = zip(messages, lines, sizes, strict=True)
    if hooks_off() is None:
        return [RawEntry(m, file, line, size) for m, line, size in rows]
    return [entry(m, file, line) for m, line, _ in rows]


def _public(m: Any) -> mutations.Mutation:
    kind = m.WhichOneof("mutation")
    if kind == "set_cell":
        c = m.set_cell
        return mutations.SetCell(c.family_name, c.column_qualifier, c.value, timestamp_micros=c.timestamp_micros)
    if kind == "delete_from_row":
        return mutations.DeleteAllFromRow()
    if kind == "add_to_cell":
        a = m.add_to_cell
        return mutations.AddToCell(a.family_name, a.column_qualifier.raw_value, a.input.int_value,
                                   a.timestamp.raw_timestamp_micros)
    column = m.delete_from_column
    has_range = column.HasField("time_range")
    start = column.time_range.start_timestamp_micros if has_range else None
    end = column.time_range.end_timestamp_micros if has_range else None
    return mutations.DeleteRangeFromColumn(column.family_name, column.column_qualifier,
                                           start_timestamp_micros=start or None, end_timestamp_micros=end or None)
