"""Which streams each table has had: the registry every worker reads, so all give one ARN.

A stream's label is its creation time, which no worker could derive alone, and a disabled
stream stays readable for 24 hours (DynamoDB's retention) beside the table's next one. So
the instance keeps a registry table, `_ddb2bigtable_streams`, one row per DynamoDB table
name, one cell (`s:streams`, JSON): the table's streams, newest last, each with its label,
creation, view type, region, key schema and the time it was disabled (none while enabled).
Every change is a conditional write on the row as read (CheckAndMutateRow), so two workers
enabling a stream at once make one. A spec table whose `stream:` is set gets its stream the
first time a worker asks (the plan made the table; its stream starts when serve first
serves it). Streams disabled more than 24 hours ago are dropped at the next change.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import asdict, dataclass
from typing import Any

from ...bigtable.table_admin import ensure_planned_table
from ...codec.mutations import DeleteRow, RowMutation, SetCell
from ...plan.model import FamilyPlan, GcPolicy, TablePlan
from ...spec.errors import ServiceError
from ..catalog import ServedTable
from ..errors import ServeError, internal, validation
from ..session import Session
from ..store import Store, raw_cells
from .positions import RETENTION_MICROS, label, stream_arn

REGISTRY_ID = "_ddb2bigtable_streams"
FAMILY, QUALIFIER = "s", b"streams"
REGISTRY_PLAN = TablePlan(
    id=REGISTRY_ID, source_table="", source_regions=(), change_stream_retention_hours=None, backup=None,
    families=(FamilyPlan(FAMILY, GcPolicy(None, 1), "one version: a row's cell is rewritten at each change"),),
    deletion_protection=False, materialized_views=(), storage_gib=0.0, ttl_attribute=None,
    why="the DynamoDB streams of serve's tables (docs/streams.md)")


@dataclass(frozen=True)
class Stream:
    table: str
    region: str
    label: str
    created_ms: int
    view: str  # StreamViewType
    keys: tuple[tuple[str, str], ...]  # (attribute, HASH or RANGE)
    instance_id: str  # where its records are: the table's Bigtable table, so a reader needs no catalog
    table_id: str
    closed_ms: int | None = None  # when it was disabled; None: enabled

    @property
    def arn(self) -> str:
        return stream_arn(self.region, self.table, self.label)


def registry_store(session: Session) -> Store:
    """The instance's registry table (cloud_shards.py keeps cloud streams' shards there too)."""
    home = session.catalog.home
    if home is None:
        raise internal("the stage lists no spec table, so serve has no instance to keep streams in")
    return session.table_store(home.instance_id, REGISTRY_ID, home.consistent_profile, REGISTRY_ID)


def _parsed(name: str, value: bytes) -> list[Stream]:
    try:
        return [Stream(**(entry | {"keys": tuple(tuple(k) for k in entry["keys"])})) for entry in json.loads(value)]
    except (ValueError, TypeError, KeyError):
        raise validation(f"the stream registry's row of table {name} ({REGISTRY_ID}) is damaged: delete it "
                         f"(`cbt deleterow {REGISTRY_ID} {name}`) and enable the stream again") from None


async def _read(session: Session, name: str) -> tuple[list[Stream], list[Any]]:
    try:
        row = await registry_store(session).read_row(name.encode())
    except ServeError as error:
        if error.name == "ResourceNotFoundException":  # no stream was ever made: no registry yet
            return [], []
        raise
    if row is None:
        return [], []
    cells = raw_cells(row)
    newest = max((c for c in cells if c.qualifier == QUALIFIER), key=lambda c: c.timestamp_micros, default=None)
    return (_parsed(name, newest.value) if newest else []), cells


async def _write(session: Session, name: str, streams: list[Stream], read: list[Any]) -> bool:
    now_ms = int(time.time() * 1000)
    kept = [s for s in streams if s.closed_ms is None or (now_ms - s.closed_ms) * 1000 < RETENTION_MICROS]
    value = json.dumps([asdict(s) for s in kept]).encode()
    row = RowMutation(name.encode(), (DeleteRow(), SetCell(FAMILY, QUALIFIER, value, now_ms * 1000)))
    try:
        return await registry_store(session).write_if_unchanged(row, read)
    except ServeError as error:
        if error.name != "ResourceNotFoundException":
            raise
    home = session.catalog.home
    assert home is not None  # _registry found it
    try:
        await asyncio.to_thread(ensure_planned_table, session.catalog.project, home.instance_id, REGISTRY_PLAN)
    except ServiceError as error:
        raise internal(str(error)) from None
    return await registry_store(session).write_if_unchanged(row, read)


def _new(table: ServedTable, view: str) -> Stream:
    created_ms = int(time.time() * 1000)
    keys = tuple((name, kind) for name, kind in zip(table.keys, ("HASH", "RANGE"), strict=False))
    return Stream(table.name, table.spec.source.region, label(created_ms), created_ms, view, keys, table.instance_id,
                  table.spec.id)


async def streams(session: Session, table: ServedTable) -> list[Stream]:
    """The table's streams, oldest first; a spec table's `stream:` made on first sight."""
    found, cells = await _read(session, table.name)
    view = table.spec.source.stream
    if table.created is None and view != "none" and not found:
        await _write(session, table.name, [_new(table, view.upper())], cells)  # the first writer's stays
        found, _ = await _read(session, table.name)
    return found


async def every(session: Session) -> list[Stream]:
    """Every stream of the registry (ListStreams), the spec tables' made first, by table name."""
    for table in session.catalog.tables.values():
        if table.spec.source.stream != "none":
            await streams(session, table)
    found: list[Stream] = []
    async for key, cell in registry_store(session).newest_cells(QUALIFIER):
        if cell is not None:
            found.extend(_parsed(key.decode("utf-8", "replace"), cell.value))
    return found


async def named(session: Session, table_name: str) -> list[Stream]:
    """A table's streams by its name alone (the Streams API's ARN names no more); a spec
    table's made on first sight as `streams` does."""
    table = session.catalog.tables.get(table_name)
    if table is not None:
        return await streams(session, table)
    return (await _read(session, table_name))[0]


def current(found: list[Stream]) -> Stream | None:
    """The enabled stream, if any."""
    return next((s for s in reversed(found) if s.closed_ms is None), None)


async def enable(session: Session, table: ServedTable, view: str) -> Stream:
    """A new stream on `table` (CreateTable or UpdateTable), refused as DynamoDB Local 1.25.1
    refuses one while another is enabled."""
    found, cells = await _read(session, table.name)
    if current(found) is not None:
        raise validation("Table already has an enabled stream")
    made = _new(table, view)
    if not await _write(session, table.name, [*found, made], cells):
        raise ServeError("ResourceInUseException", f"Attempt to change a resource which is still in use: the "
                         f"stream of table {table.name} was changed by another request at the same time; retry")
    return made


async def disable(session: Session, table: ServedTable) -> Stream:
    """The enabled stream closed now (its records stay readable for 24 hours)."""
    found, cells = await _read(session, table.name)
    on = current(found)
    if on is None:
        raise validation("Table has no stream to disable")
    closed = Stream(**(asdict(on) | {"keys": on.keys, "closed_ms": int(time.time() * 1000)}))
    if not await _write(session, table.name, [closed if s == on else s for s in found], cells):
        raise ServeError("ResourceInUseException", f"Attempt to change a resource which is still in use: the "
                         f"stream of table {table.name} was changed by another request at the same time; retry")
    return closed
