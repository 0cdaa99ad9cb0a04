"""serve's part in each table's record of its attribute types (bigtable/table_types.py).

serve starts with each table's record (cli/serve_cmd.py reads it, with the work folder
where there is one, and they must agree). An attribute the record does not hold is written
self-describing (`mixed`: typed DynamoDB JSON, any type reads back), and before its first
cell is written serve records it as `mixed`, so a later load of an export bringing the
same attribute writes it in the same form instead of inferring a plain type serve could
not read. The first writer wins: when a load (or replicate) recorded the attribute with a
plain type first, the table's codec is rebuilt with the record and the write is encoded
with it, so a value of another type is a ValidationException naming the attribute, as for
any attribute with a recorded type.

A cell this worker cannot decode may be one a load wrote after serve started, in a type
recorded since: its table is marked stale and its record read again before the next
request (`refresh_stale`), so the request's retry (a 500 the SDKs retry) reads it.
"""

from __future__ import annotations

from dataclasses import replace

from ...bigtable.table_types import read_types, record_types
from ...codec.cell_values import MIXED
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
    """The attributes of `item` this worker does not know the table's record to hold (no I/O:
    a single-item write's machine asks it while deciding, and `recorded` first when any)."""
    if item is None:
        return []
    known = session.recorded.get((table.instance_id, table.spec.id), set())
    types = table.codec.types
    return [name for name in item if name not in types and name not in known]


async def recorded(session: Session, table: ServedTable, item: Item | None) -> ServedTable:
    """The table to encode `item` with, once every attribute of it is in the table's record:
    the same table when the record held them or took them as `mixed`, else the table
    rebuilt with the types another writer recorded first."""
    new = dict.fromkeys(unrecorded(session, table, item), MIXED)
    if not new:
        return table
    known = session.recorded.setdefault((table.instance_id, table.spec.id), set())
    try:
        record = await record_types(session.client, session.catalog.project, table.instance_id, table.spec.id, new,
                                    table.consistent_profile)
    except ServiceError as error:
        raise internal(str(error)) from None
    known.update(name for name in new if record.get(name) == MIXED)
    if all(record.get(name) == MIXED for name in new):
        return table
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
