"""Bigtable's calls on serve's request path, made lean: ReadRows and CheckAndMutateRow sent
as prepared protobuf messages on a gRPC channel of their own (issue 54).

The data client (google-cloud-bigtable 2.50) wraps each call in its retry machinery, a
row merger with its own validation, proto-plus messages converted per call and a
client-side metrics interceptor on its channel: py-spy put 24 % of a GetItem loop's samples
in its `read_row`, more than the call's own gRPC work. serve gives each call its own
deadline (store.py) and answers a failure as DynamoDB would, so it needs none of that:
`LeanTable` makes the request once from raw protobuf classes, sends it on a channel with
no interceptor (the emulator's plain one, or Google's default credentials as the data
client itself uses them), retries a read on the errors the data client retries reads on
(UNAVAILABLE, DEADLINE_EXCEEDED of an attempt, ABORTED) within the call's deadline, and
merges chunks into rows (`Row`: a key and its cells, iterated as the data client's Row is)
of the codec's own Cell, the form every reader converts to: a data client Cell converted
again was two objects a cell, a BatchGetItem of 25 rows a fifth of its decoding (issue 54).
A cell's labels are not kept (serve's filters apply none). CheckAndMutateRow is never
retried (the data client does not either: it is not idempotent). Every other call
(MutateRow, sample_row_keys, ...) goes to the data client's table, unchanged. The channel
is not refreshed every 45 minutes as the data client's is: a connection Bigtable closes is
opened again by gRPC on the next call, which pays that one handshake.
"""

from __future__ import annotations

import asyncio
import os
import time
import weakref
from collections import OrderedDict
from collections.abc import AsyncIterator, Iterator
from typing import Any

import grpc  # type: ignore[import-untyped]
from google.api_core import exceptions as google_errors
from google.api_core import gapic_v1
from google.cloud.bigtable.data import mutations as bt
from google.cloud.bigtable_v2.services.bigtable.transports import BigtableGrpcAsyncIOTransport
from google.cloud.bigtable_v2.types import bigtable as bigtable_types
from google.cloud.bigtable_v2.types import data as data_types
from google.protobuf.message import Message  # type: ignore[import-untyped]

from ..codec.mutations import Cell
from .guards import RawFilter

READ_SECONDS = 10.0  # as store.py's: a read's whole time, retries included
ATTEMPT_SECONDS = 5.0
WRITE_SECONDS = 10.0
RETRIED = (google_errors.ServiceUnavailable, google_errors.DeadlineExceeded, google_errors.Aborted)
BACKOFF_SECONDS = 0.1
HOST = "bigtable.googleapis.com:443"
# unlimited messages both ways, as the data client's transport sets them (a wide row's cells)
OPTIONS = [("grpc.max_send_message_length", -1), ("grpc.max_receive_message_length", -1)]
FILTERS = 64  # converted filters kept per table (a store's fixed views are not among them)
_READ = bigtable_types.ReadRowsRequest.pb()
_READ_ANSWER = bigtable_types.ReadRowsResponse.pb()
_CHECK = bigtable_types.CheckAndMutateRowRequest.pb()
_CHECK_ANSWER = bigtable_types.CheckAndMutateRowResponse.pb()
_MUTATION = data_types.Mutation.pb()


class Row:
    """A row as read: its key and its cells (the codec's), iterated in the order read."""

    __slots__ = ("row_key", "cells")

    def __init__(self, row_key: bytes, cells: list[Cell]):
        self.row_key, self.cells = row_key, cells

    def __iter__(self) -> Iterator[Cell]:
        return iter(self.cells)

    def __len__(self) -> int:
        return len(self.cells)


def raw(message: Any) -> Message:
    """A protobuf message as the raw class (proto-plus messages are wrappers around one)."""
    return message if isinstance(message, Message) else type(message).pb(message)


class Channel:
    """One channel to Bigtable's data API per data client (a worker has one), and the two
    calls as multicallables made once."""

    def __init__(self) -> None:
        emulator = os.environ.get("BIGTABLE_EMULATOR_HOST")
        self.channel = (grpc.aio.insecure_channel(emulator, options=OPTIONS) if emulator
                        else BigtableGrpcAsyncIOTransport.create_channel(HOST, options=OPTIONS))
        self.read_rows = self.channel.unary_stream("/google.bigtable.v2.Bigtable/ReadRows",
                                                   request_serializer=_READ.SerializeToString,
                                                   response_deserializer=_READ_ANSWER.FromString)
        self.check_and_mutate = self.channel.unary_unary("/google.bigtable.v2.Bigtable/CheckAndMutateRow",
                                                         request_serializer=_CHECK.SerializeToString,
                                                         response_deserializer=_CHECK_ANSWER.FromString)


_CHANNELS: weakref.WeakKeyDictionary[Any, Channel] = weakref.WeakKeyDictionary()


def channel_of(client: Any) -> Channel:
    """The lean channel beside a data client, made at its first use."""
    made = _CHANNELS.get(client)
    if made is None:
        made = _CHANNELS[client] = Channel()
    return made


async def close(client: Any) -> None:
    """Close the lean channel beside a data client, if one was made (the worker's shutdown)."""
    made = _CHANNELS.pop(client, None)
    if made is not None:
        await made.channel.close()


class LeanTable:
    """A data client's table (TableAsync) whose read_row, read_rows and check_and_mutate_row
    go the lean way (module doc); any other attribute is the table's own."""

    def __init__(self, table: Any):
        self.table = table
        self.calls = channel_of(table.client)
        self.name, self.profile = table.table_name, table.app_profile_id or ""
        params = {"table_name": self.name, "app_profile_id": self.profile}
        self.metadata = (gapic_v1.routing_header.to_grpc_metadata(params),
                         table.client.client_info.to_grpc_metadata())
        # other filters converted once, the least recently used dropped first past FILTERS
        self._filters: OrderedDict[int, tuple[Any, Message]] = OrderedDict()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.table, name)

    def _filter(self, row_filter: Any) -> Message | None:
        """The filter's raw message: a store's fixed views (guards.RawFilter: made as their
        message) as they are, never held here; any other converted once and held while
        recently used, so a caller's filter made per call (the TTL sweep's time range, one a
        pass) takes the place of an older one of its kind, never of a filter in use (the
        whole dict was emptied when full)."""
        if row_filter is None:
            return None
        if isinstance(row_filter, RawFilter):
            return row_filter.message
        held = self._filters.get(id(row_filter))
        if held is None or held[0] is not row_filter:
            held = self._filters[id(row_filter)] = (row_filter, raw(row_filter._to_pb()))
            if len(self._filters) > FILTERS:
                self._filters.popitem(last=False)
        else:
            self._filters.move_to_end(id(row_filter))
        return held[1]

    async def read_row(self, row_key: bytes, *, row_filter: Any = None, operation_timeout: float = READ_SECONDS,
                       attempt_timeout: float = ATTEMPT_SECONDS) -> Row | None:
        request = _READ(table_name=self.name, app_profile_id=self.profile, rows_limit=1)
        request.rows.row_keys.append(row_key)
        if (made := self._filter(row_filter)) is not None:
            request.filter.CopyFrom(made)
        rows = await self._read(request, operation_timeout, attempt_timeout)
        return rows[0] if rows else None

    async def read_rows(self, query: Any, *, operation_timeout: float = READ_SECONDS,
                        attempt_timeout: float = ATTEMPT_SECONDS) -> list[Row]:
        """The rows of a data client's ReadRowsQuery (its keys, ranges, limit and filter)."""
        return await self._read(self.request(query), operation_timeout, attempt_timeout)

    async def read_range(self, start: bytes | None, end: bytes | None, *, start_open: bool, limit: int,
                         row_filter: Any, operation_timeout: float = READ_SECONDS,
                         attempt_timeout: float = ATTEMPT_SECONDS) -> list[Row]:
        """`read_rows` of one range's query, without making the query: the rows of [start, end)
        (start excluded with `start_open`; None: unbounded), at most `limit` (0: all)."""
        return await self._read(self.range_request(start, end, start_open=start_open, limit=limit,
                                                   row_filter=row_filter), operation_timeout, attempt_timeout)

    def range_request(self, start: bytes | None, end: bytes | None, *, start_open: bool, limit: int,
                      row_filter: Any) -> Message:
        """The request of ReadRowsQuery(row_ranges=[RowRange(start, end, start_is_inclusive=not
        start_open)], limit=limit, row_filter=row_filter), refused as RowRange refuses a start
        past the end."""
        if start and end and start > end:
            raise ValueError("start_key must be less than or equal to end_key")
        request = _READ(table_name=self.name, app_profile_id=self.profile, rows_limit=limit or 0)
        bounds = request.rows.row_ranges.add()
        if start:
            setattr(bounds, "start_key_open" if start_open else "start_key_closed", start)
        if end:
            bounds.end_key_open = end
        if (made := self._filter(row_filter)) is not None:
            request.filter.CopyFrom(made)
        return request

    def request(self, query: Any) -> Message:
        """The ReadRowsRequest the query's own `_to_pb` makes, built from raw protobuf with the
        filter converted once per store view (`_filter`): the query's proto-plus conversion
        and its filter's were a tenth of a one-page Query's CPU."""
        request = _READ(table_name=self.name, app_profile_id=self.profile, rows_limit=query.limit or 0)
        request.rows.row_keys.extend(query.row_keys)
        request.rows.row_ranges.extend(raw(r._to_pb()) for r in query.row_ranges)
        if (made := self._filter(query.filter)) is not None:
            request.filter.CopyFrom(made)
        return request

    async def _read(self, request: Message, seconds: float, attempt_seconds: float | None) -> list[Row]:
        """Every row of the request; a retried attempt starts over (its rows are dropped),
        so a limit and the keys' order hold whatever broke."""
        deadline = time.monotonic() + seconds
        while True:
            left = deadline - time.monotonic()
            try:
                call = self.calls.read_rows(request, timeout=min(attempt_seconds or left, left),
                                            metadata=self.metadata)
                return [row async for row in merged(call)]
            except grpc.aio.AioRpcError as error:
                failure = google_errors.from_grpc_error(error)
                if not isinstance(failure, RETRIED) or deadline - time.monotonic() <= BACKOFF_SECONDS:
                    raise failure from None
            await asyncio.sleep(BACKOFF_SECONDS)

    async def check_and_mutate_row(self, row_key: bytes, predicate: Any, *, true_case_mutations: Any = None,
                                   false_case_mutations: Any = None,
                                   operation_timeout: float = WRITE_SECONDS) -> bool:
        request = _CHECK(table_name=self.name, app_profile_id=self.profile, row_key=row_key)
        if predicate is not None:
            request.predicate_filter.CopyFrom(raw(predicate._to_pb()))
        request.true_mutations.extend(mutation_message(m) for m in _listed(true_case_mutations))
        request.false_mutations.extend(mutation_message(m) for m in _listed(false_case_mutations))
        try:
            answer = await self.calls.check_and_mutate(request, timeout=operation_timeout, metadata=self.metadata)
        except grpc.aio.AioRpcError as error:
            raise google_errors.from_grpc_error(error) from None
        return bool(answer.predicate_matched)


class RawMutation(bt.Mutation):
    """A mutation made straight as the raw protobuf Mutation the client sends: `_to_pb` gives
    the message itself, which `raw` passes through. serve's cells (store.client_mutations),
    the transactions' lock cells and an intent read back (transactions/cells.py) are made so.
    The client's own SetCell makes a proto-plus message per cell, which its request then
    converts again: for a PutItem of 20,000 attributes that was 0.34 s of cProfile's 2.1 s,
    more than encoding the item (2026-11-29, issue 43)."""

    __slots__ = ("message",)

    def __init__(self, message: Any):
        self.message = message

    def _to_pb(self) -> Any:
        return self.message

    def _to_dict(self) -> dict[str, Any]:
        return dict(data_types.Mutation.to_dict(data_types.Mutation.wrap(self.message)))


def set_cell_message(family: str, qualifier: bytes, value: bytes, timestamp_micros: int) -> Message:
    """SetCell(family, qualifier, value, timestamp_micros) as the raw Mutation its `_to_pb`
    makes, its fields set one by one (half the time of nested keyword arguments)."""
    made = _MUTATION()
    cell = made.set_cell
    cell.family_name, cell.column_qualifier = family, qualifier
    cell.timestamp_micros, cell.value = timestamp_micros, value
    return made


def mutation_message(mutation: Any) -> Message:
    """A data client's mutation as the raw Mutation its `_to_pb` makes, the deletes built field
    by field: `_to_pb` goes through a dict and a proto-plus message, 10 us a DeleteAllFromFamily,
    and a PutItem sends one per item family (store.client_mutations). The rest (serve's raw
    cells, AddToCell) convert themselves as before."""
    kind = type(mutation)
    if kind is bt.DeleteAllFromFamily:
        return delete_family_message(mutation.family_to_delete)
    if kind is bt.DeleteRangeFromColumn:
        return delete_column_message(mutation.family, mutation.qualifier, mutation.start_timestamp_micros,
                                     mutation.end_timestamp_micros)
    if kind is bt.DeleteAllFromRow:
        made = _MUTATION()
        made.delete_from_row.SetInParent()
        return made
    return raw(mutation._to_pb())


def delete_family_message(family: str) -> Message:
    """DeleteAllFromFamily(family) as the raw Mutation its `_to_pb` makes."""
    made = _MUTATION()
    made.delete_from_family.family_name = family
    return made


def delete_column_message(family: str, qualifier: bytes, start: int | None = None,
                          end: int | None = None) -> Message:
    """DeleteRangeFromColumn(family, qualifier, start, end) as the raw Mutation its `_to_pb`
    makes: the time range present even when empty (every version)."""
    made = _MUTATION()
    column = made.delete_from_column
    column.family_name, column.column_qualifier = family, qualifier
    column.time_range.SetInParent()
    if start is not None:
        column.time_range.start_timestamp_micros = start
    if end is not None:
        column.time_range.end_timestamp_micros = end
    return made


def _listed(mutations: Any) -> list[Any]:
    if mutations is None:
        return []
    return mutations if isinstance(mutations, list) else [mutations]


async def merged(stream: Any, *, descending: bool = False) -> AsyncIterator[Row]:
    """ReadRows chunks as rows: a cell's value may come in several chunks (value_size),
    family and qualifier are sent only when they change, a row ends at commit_row and is
    dropped at reset_row. Rows must come in strictly increasing key order (decreasing for a
    reversed scan): a server that breaks it is a DataLoss, never rows silently repeated."""
    last: bytes | None = None
    key, family, qualifier, timestamp = b"", "", b"", 0
    cells: list[Cell] = []
    parts: list[bytes] = []
    async for response in stream:
        for chunk in raw(response).chunks:
            if chunk.reset_row:
                key, cells, parts = b"", [], []
                continue
            if chunk.row_key:
                key = chunk.row_key
            if chunk.HasField("family_name"):
                family = chunk.family_name.value
            if chunk.HasField("qualifier"):
                qualifier = chunk.qualifier.value
            if not parts:
                timestamp = chunk.timestamp_micros
            parts.append(chunk.value)
            if chunk.value_size > 0:
                continue  # more of this cell's value follows
            cells.append(Cell(family, qualifier, parts[0] if len(parts) == 1 else b"".join(parts), timestamp))
            parts = []
            if chunk.commit_row:
                if last is not None and (key >= last if descending else key <= last):
                    raise google_errors.DataLoss(f"ReadRows returned row {key!r} after {last!r}")
                yield Row(key, cells)
                last, cells = key, []
