"""serve's part in each table's record of its attribute types (bigtable/table_types.py).

serve starts with each table's record (cli/serve_cmd.py reads it, with the work folder
where there is one, and they must agree). An attribute the record does not name is
written self-describing (`mixed`: typed DynamoDB JSON, any type reads back). Before the
first such write, serve marks the table's record: every attribute it does not name is
`mixed`, so a later load of an export bringing one writes it in the same form instead of
inferring a plain type serve could not read. serve records no names, so a table whose
items bring names made from data keeps none of them, and once this worker knows the
record marked, a new name costs it no call at all. Marking reads the record again: when a
load recorded an attribute with a plain type before it, the table's codec is rebuilt with
the record and the write is encoded with it, so a value of another type is a
ValidationException naming the attribute, as for any attribute with a recorded type.

A cell this worker cannot decode may be one a load wrote after serve started, in a type
recorded since: its table is marked stale and its record read again before the next
request (`refresh_stale`), so the request's retry (a 500 the SDKs retry) reads it.
"""

from __future__ import annotations

from dataclasses import replace

from ...bigtable.table_types import mark_unnamed, read_types
from ...codec.codec import Codec
from ...codec.items import Item
from ...spec.errors import ServiceError
from ..catalog import ServedTable
from ..errors import internal
from ..session import Session


def _with_types(session: Session, table: ServedTable, record: dict[str, str]) -> ServedTable:
    """The table with its codec rebuilt over `record`, put in the catalog for later requests."""
    fresh = replace(table, codec=Codec(table.spec, {**table.codec.types, **record}))
    catalog = session.catalog
    (catalog.tables if table.name in catalog.tables else catalog.created)[table.name] = fresh
    return fresh


def unrecorded(session: Session, table: ServedTable, item: Item | None) -> list[str]:
    """The attributes of `item` the table's record does not name, while this worker does
    not know it marked (no I/O: a single-item write's machine asks it while deciding, and
    `recorded` first when any)."""
    if item is None or table.codec.mapping.unnamed_mixed:
        return []
    types = table.codec.types
    return [name for name in item if name not in types]


async def recorded(session: Session, table: ServedTable, item: Item | None) -> ServedTable:
    """The table to encode `item` with, once the table's record says what each attribute of
    it is: the same table when it names them all, else the table rebuilt over the record
    marked (with the types a load recorded before the marking, if any)."""
    if not unrecorded(session, table, item):
        return table
    try:
        record = await mark_unnamed(session.client, session.catalog.project, table.instance_id, table.spec.id,
                                    table.codec.types, table.consistent_profile)
    except ServiceError as error:
        raise internal(str(error)) from None
    return _with_types(session, table, record)


async def refresh_stale(session: Session) -> None:
    """The record read again for each table a decode failed on (see the module docstring)."""
    while session.stale_types:
        name = session.stale_types.pop()
        table = session.catalog.tables.get(name) or session.catalog.created.get(name)
        if table is None:
            continue
        try:
            record = await read_types(session.client, table.instance_id, table.spec.id, table.serving_profile)
        except ServiceError as error:
            raise internal(str(error)) from None
        _with_types(session, table, record)
