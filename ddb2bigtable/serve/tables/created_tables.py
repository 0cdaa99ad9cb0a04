"""Tables an application creates through serve (CreateTable, DeleteTable), on emulator
stages: the Bigtable table with its families and GC made by the table admin the load uses,
and the table's definition kept in a registry table of the same instance.

Why a registry in the instance: every worker process (`--workers N`, one started later, a
second `serve` on the same emulator) must find a table another one created, and the
instance is the one store they all share; a worker's memory or the work folder is not
(Cloud Run instances have neither). The registry, `_ddb2bigtable_tables`, holds one row
per created table (row key: its DynamoDB name; one cell, `t:table`, JSON): the request's
definition (key schema, attribute definitions, indexes, billing), the Bigtable table id,
the mapping (the default one), the table's id and creation time, its status, and what
UpdateTimeToLive and UpdateTable changed since (`ttl`; billing and indexes in the
definition). It is
the first step of "types kept with the table" (docs/serve.md, Not done yet): the
definition a table is read with lives beside its rows.

A table's status goes CREATING -> ACTIVE -> DELETING -> gone, each step a conditional
write (CheckAndMutateRow on the cell read), so a CreateTable and a DeleteTable of one
name racing in two workers never leave a registry row without its table or a table
without its row: the loser gets ResourceInUseException, as DynamoDB answers a change to a
table being created or deleted. A row left CREATING or DELETING by a worker that died
mid-way for more than STALE_SECONDS may be deleted (DeleteTable takes it over).

A worker reads a created table's row when a request names a table it does not know, and
again when its copy is older than REFRESH_SECONDS, so a table another worker deleted or
re-created is seen within that time.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ...bigtable.table_admin import create_new_table, delete_table, ensure_planned_table
from ...bigtable.table_types import forget_types
from ...codec.cell_values import MIXED
from ...codec.mutations import DeleteRow, RowMutation, SetCell
from ...plan.gc_rules import STREAM_FAMILY_PLAN
from ...plan.model import FamilyPlan, GcPolicy, TablePlan
from ...plan.tables import plan_table
from ...spec.errors import ServiceError, clip
from ..catalog import Created, Home, ServedTable, named_tables, served_table
from ..errors import ServeError, internal, not_found, validation
from ..session import Session
from ..store import Store, now_micros, raw_cells
from .table_requests import MAX_ATTRIBUTE_NAME, bigtable_id, checked_request, legacy_bigtable_id, table_spec

REGISTRY_ID = "_ddb2bigtable_tables"
FAMILY, QUALIFIER = "t", b"table"
CREATING, ACTIVE, DELETING = "CREATING", "ACTIVE", "DELETING"
STALE_SECONDS = 120.0  # past the admin calls' own limits: a row still in transition is abandoned
REFRESH_SECONDS = 1.0
REGISTRY_PLAN = TablePlan(
    id=REGISTRY_ID, source_table="", source_regions=(), change_stream_retention_hours=None, backup=None,
    families=(FamilyPlan(FAMILY, GcPolicy(None, 1), "one version: a row's cell is rewritten at each status change"),),
    deletion_protection=False, materialized_views=(), storage_gib=0.0, ttl_attribute=None,
    why="the definitions of the tables serve created (CreateTable on an emulator stage)")


def _home(session: Session) -> Home:
    if session.catalog.home is None:
        raise internal("the stage lists no spec table, so serve has no instance to create tables in")
    return session.catalog.home


def _registry(session: Session) -> Store:
    home = _home(session)
    return session.table_store(home.instance_id, REGISTRY_ID, home.consistent_profile, REGISTRY_ID)


async def _read(session: Session, name: str) -> tuple[dict[str, Any] | None, list[Any]]:
    """A table's registry record and the cells it was read from (None, [] when absent)."""
    try:
        row = await _registry(session).read_row(name.encode())
    except ServeError as error:
        if error.name == "ResourceNotFoundException":  # no table was ever created: no registry yet
            return None, []
        raise
    if row is None:
        return None, []
    cells = raw_cells(row)
    newest = max((c for c in cells if c.qualifier == QUALIFIER), key=lambda c: c.timestamp_micros, default=None)
    return (_parsed(name, newest.value) if newest else None), cells


def _damaged(name: str, why: str) -> ServeError:
    shown = clip(name, 80)
    return validation(f"the registry row of table {shown} ({REGISTRY_ID}) is damaged ({why}), so serve neither "
                      f"serves, replaces nor deletes it: delete the row (`cbt deleterow {REGISTRY_ID} {shown}`), "
                      f"and the table {clip(bigtable_id(name), 80)} if it holds nothing you keep, then create it again")


def _parsed(name: str, value: bytes) -> dict[str, Any]:
    """A registry record as serve wrote it. A row changed by hand (not JSON, a field missing
    or of another type, a definition DynamoDB would refuse, or a Bigtable id other than the
    name's own, which could name a spec table) is refused: serve acts on no table it did not
    create, whatever the row says."""
    try:
        record = json.loads(value)
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        raise _damaged(name, "not JSON") from None
    if not isinstance(record, dict) or record.get("status") not in (CREATING, ACTIVE, DELETING):
        raise _damaged(name, "no status")
    if record.get("table_id") not in (bigtable_id(name), legacy_bigtable_id(name)):  # older tables keep theirs
        raise _damaged(name, f"its Bigtable table is not {bigtable_id(name)}")
    times = (record.get("created"), record.get("changed"))
    if not isinstance(record.get("table_uuid"), str) or not all(
            isinstance(t, int | float) and not isinstance(t, bool) for t in times):
        raise _damaged(name, "no table id or times")
    definition = record.get("definition")
    if not isinstance(definition, dict) or definition.get("TableName") != name:
        raise _damaged(name, "no definition of this table")
    try:
        checked_request(definition)
    except ServeError as error:
        raise _damaged(name, f"its definition: {error.message}") from None
    ttl = record.get("ttl")
    if ttl is not None and not (isinstance(ttl, str) and 1 <= len(ttl) <= MAX_ATTRIBUTE_NAME):
        raise _damaged(name, "its TTL attribute is not a name")
    return record


def _write(name: str, record: dict[str, Any]) -> RowMutation:
    """The row holding `record` alone, stamped with the time of this status change."""
    value = json.dumps(record | {"changed": round(time.time(), 3)}).encode()
    return RowMutation(name.encode(), (DeleteRow(), SetCell(FAMILY, QUALIFIER, value, now_micros() // 1000 * 1000)))


def _created(record: dict[str, Any]) -> Created:
    return Created(record["definition"], record["table_uuid"], record["created"], record.get("ttl"))


def _served(session: Session, record: dict[str, Any]) -> ServedTable:
    home = _home(session)
    spec = table_spec(record["definition"], record["table_id"], home.region)
    # An index's key attributes are written self-describing, as every other non-key
    # attribute: an index UpdateTable adds or deletes later changes no cell's encoding
    # (ServedTable.check_index_keys enforces the index's type on the values instead).
    keys = {k.name for k in (spec.source.key.partition, spec.source.key.sort) if k is not None}
    mixed = {d["AttributeName"]: MIXED for d in record["definition"]["AttributeDefinitions"]
             if d["AttributeName"] not in keys}
    return served_table(spec, home.instance_id, mixed, (home.serving_profile, home.consistent_profile),
                        _created(record))


def _in_use(name: str, record: dict[str, Any]) -> ServeError:
    doing = "being created" if record["status"] == CREATING else "being deleted"
    return ServeError("ResourceInUseException",
                      f"Attempt to change a resource which is still in use: Table is {doing}: {name}")


async def _admin(call: Any, *args: Any) -> Any:
    """A table-admin call (synchronous, bounded: bigtable/table_admin.py) off the event loop."""
    try:
        return await asyncio.to_thread(call, *args)
    except ServiceError as error:
        raise internal(str(error)) from None


async def create(session: Session, definition: dict[str, Any]) -> ServedTable:
    """The table of a checked request (table_requests.checked_request) created and ACTIVE."""
    name, home = definition["TableName"], _home(session)
    project = session.catalog.project
    record = {"status": CREATING, "definition": definition, "table_id": bigtable_id(name),
              "table_uuid": str(uuid.uuid4()), "created": round(time.time(), 3),
              "mapping": {"delimiter": "#", "default_family": "cf", "rules": []}}
    if not session.registry_ready:
        await _admin(ensure_planned_table, project, home.instance_id, REGISTRY_PLAN)
        session.registry_ready = True
    registry = _registry(session)
    if not await registry.write_if_unchanged(_write(name, record), await _abandoned(session, name)):
        raise ServeError("ResourceInUseException", f"Table already exists: {name}")
    table = _served(session, record)
    plan = _planned(table, home)
    _, claimed = await _read(session, name)
    try:
        made = await _admin(create_new_table, project, home.instance_id, plan)
    except ServeError:
        await registry.write_if_unchanged(RowMutation(name.encode(), (DeleteRow(),)), claimed)
        raise
    if made is None:
        await registry.write_if_unchanged(RowMutation(name.encode(), (DeleteRow(),)), claimed)
        raise ServeError("ResourceInUseException", f"Table already exists: {name} (Bigtable table {plan.id} is there "
                         f"and serve's registry does not know it: delete it, `cbt deletetable {plan.id}`, or choose "
                         f"another name)")
    if not await registry.write_if_unchanged(_write(name, record | {"status": ACTIVE}), claimed):
        raise internal(f"the registry row of table {name} changed while the table was being created")
    session.catalog.created[name] = table
    session.fetched[name] = time.monotonic()
    return table


def _planned(table: ServedTable, home: Home) -> TablePlan:
    """A created table's Bigtable table: its spec's plan and the stream family, which every
    created table has, so that a stream enabled later (UpdateTable) needs no schema change."""
    plan, _ = plan_table(table.spec, home.instance_id, deletion_protection=False)
    return replace(plan, families=(*plan.families, STREAM_FAMILY_PLAN))


async def stream_ready(session: Session, table: ServedTable) -> None:
    """The table has the stream family before its stream is enabled: a table created before
    every created table had it gains it here."""
    home = _home(session)
    await _admin(ensure_planned_table, session.catalog.project, home.instance_id, _planned(table, home))


async def _abandoned(session: Session, name: str) -> list[Any]:
    """The cells CreateTable may replace: none (the name must be free), or those of a row a
    CreateTable left CREATING more than STALE_SECONDS ago (Bigtable went away between its
    writes), so a retry recovers; a Bigtable table that one did make is still never taken
    over (create_new_table finds it and CreateTable refuses)."""
    record, cells = await _read(session, name)
    stale = record is not None and record["status"] == CREATING and time.time() - record["changed"] > STALE_SECONDS
    return cells if stale else []


async def delete(session: Session, name: str) -> ServedTable:
    """A created table deleted with its rows; the table as it was."""
    record, cells = await _read(session, name)
    if record is None:
        raise not_found(name)
    stale = time.time() - record["changed"] > STALE_SECONDS
    if record["status"] != ACTIVE and not stale:
        raise _in_use(name, record)
    registry = _registry(session)
    if not await registry.write_if_unchanged(_write(name, record | {"status": DELETING}), cells):
        raise _in_use(name, record | {"status": DELETING})
    _, marked = await _read(session, name)
    await _admin(delete_table, session.catalog.project, _home(session).instance_id, record["table_id"])
    await forget_types(session.client, _home(session).instance_id, record["table_id"])  # its record of types too
    await registry.write_if_unchanged(RowMutation(name.encode(), (DeleteRow(),)), marked)
    session.catalog.created.pop(name, None)
    session.fetched.pop(name, None)
    return _served(session, record)


async def change(session: Session, name: str, edit: Callable[[dict[str, Any]], dict[str, Any]]) -> ServedTable:
    """An ACTIVE created table's registry record changed by `edit` (UpdateTimeToLive,
    UpdateTable; it raises what the change cannot be), written only if the row is as read;
    the table as changed. A change that met another one is ResourceInUseException."""
    record, cells = await _read(session, name)
    if record is None:
        raise not_found(name)
    if record["status"] != ACTIVE:
        raise _in_use(name, record)
    changed = edit(record)
    if not await _registry(session).write_if_unchanged(_write(name, changed), cells):
        raise ServeError("ResourceInUseException", f"Attempt to change a resource which is still in use: table "
                         f"{name} was changed by another request at the same time; retry")
    table = _served(session, changed)
    session.catalog.created[name] = table
    session.fetched[name] = time.monotonic()
    return table


async def names(session: Session) -> list[str]:
    """Every ACTIVE created table's name (ListTables)."""
    if not session.catalog.emulator or session.catalog.home is None:
        return []
    found: list[str] = []
    async for key, cell in _registry(session).newest_cells(QUALIFIER):
        try:  # a row damaged by hand is left out, not the end of every ListTables (its table refuses it)
            name = key.decode()
            if cell is not None and _parsed(name, cell.value)["status"] == ACTIVE:
                found.append(name)
        except (ServeError, UnicodeDecodeError):
            continue
    return found


async def resolve(session: Session, body: dict[str, Any], *, fresh: bool = False) -> None:
    """The created tables a request's body names, brought up to date (resolve_names)."""
    await resolve_names(session, named_tables(body), fresh=fresh)


async def resolve_names(session: Session, names: set[str], *, fresh: bool = False) -> None:
    """The created tables named, read from the registry into the catalog when this worker
    does not know them or its copy is older than REFRESH_SECONDS (or always, `fresh`:
    DescribeTable, which waiters poll); one that is gone (or not ACTIVE) leaves the
    catalog, so the operation answers ResourceNotFound."""
    catalog = session.catalog
    if not catalog.emulator or catalog.home is None:
        return
    now = time.monotonic()
    for name in names - set(catalog.tables):
        if not fresh and name in catalog.created and now - session.fetched.get(name, 0.0) < REFRESH_SECONDS:
            continue
        record, _ = await _read(session, name)
        if record is not None and record["status"] == ACTIVE:
            known = catalog.created.get(name)
            if known is None or known.created != _created(record):  # new, re-created or changed
                catalog.created[name] = _served(session, record)
            session.fetched[name] = now
        else:
            catalog.created.pop(name, None)
            session.fetched.pop(name, None)
