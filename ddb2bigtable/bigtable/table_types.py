"""The attribute types a table's cells are written with, recorded with the table.

Bigtable stores bytes, so a cell is read back with the type it was written with. That type
used to live only in the load's work folder, which serve on Cloud Run does not have, which
serve's own new attributes never reached, and which another load's folder could replace
silently. The record lives in the instance itself, in the metadata table
`_ddb2bigtable_types` (plan/model.py `TYPES_TABLE`: the plan, `up` and `pulumi up` make it
beside the tables; `record_types` makes it on first use where an older instance lacks it):
one row per attribute (row key: the Bigtable table id, NUL, the attribute's name; no
table id holds a NUL), one column in it (family `a`, qualifier: the attribute's name), the
type as the cell's value (`S`, `N`, ..., `counter`, or `mixed` for typed DynamoDB JSON).
Before issue 50 a table's attributes were columns of one row (row key: the table id); such
rows are still read, merged with the attributes' own rows, and never written again. One
row per table grew with every name ever written, and recording a new name cost a
CheckAndMutateRow over all of them (a PutItem bringing one took 1.1 s on the emulator
after 20,000 names, against 14 ms for the first: benchmarks/serve_new_names.py); a row of
its own costs the same after any number.

Load, replicate and serve all write it, and all read it. The first writer of an
attribute's type wins: each new attribute is written with a CheckAndMutateRow on its own
row whose predicate is "the column has a cell" (a load's many side by side, RECORDING at a
time), so of two writers racing on one attribute only the first writes; both then read the
record back and agree. Every version is kept and the oldest cell is the type, so two clusters of a
replicated instance that each took a first writer settle on the same (earliest) one once
replication has passed. A writer whose type differs from the record's is refused by its
caller exactly as a type conflict is: the load dead-letters the item, serve answers a
ValidationException.

The work folder's `table_types` stay for resumption; where both exist they must agree
(`agreed`): a disagreement is an error naming both, never a silent pick.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Iterable
from pathlib import Path
from typing import Any

from google.api_core import exceptions
from google.cloud.bigtable.data import ReadRowsQuery, RowRange, mutations, row_filters
from google.cloud.bigtable.data.mutations import RowMutationEntry

from ..codec.type_inference import held_types
from ..plan.model import TYPES_TABLE, InstancePlan
from ..spec.errors import InputError, Problem, ServiceError
from ..spec.model import TableSpec
from .deadlines import READ_SECONDS, lookup_table
from .table_admin import ensure_planned_table

FAMILY = TYPES_TABLE.families[0].name
NAMED_READ = 64  # attributes read by name at most; more read the whole record
# CheckAndMutateRows of one record_types in flight at once. They share the client's channel
# with the caller's own writes (a load's MutateRows), and a channel's HTTP/2 connection
# takes about 100 concurrent streams ("most servers set this limit to 100"; more calls
# queue in the client: Microsoft Learn, "Performance best practices with gRPC",
# https://learn.microsoft.com/en-us/aspnet/core/grpc/performance, read 2026-12-07), so a
# first export of 20,000 attributes would fill the channel with them; 32 keeps room for
# the rest and still records about 32 names per round trip.
RECORDING = 32
SEPARATOR = b"\x00"  # between the table id and the attribute's name in a row key


def types_profile(instance: InstancePlan) -> str | None:
    """The app profile the record is written through: CheckAndMutateRow needs single-cluster
    routing with transactional writes, which the plan's `txn-<region>` profiles have; an
    instance without them uses its default profile."""
    return next((p.id for p in instance.app_profiles if p.routing == "single" and p.allow_transactional_writes), None)


def where(instance_id: str, table_id: str) -> str:
    """How errors name a table's record."""
    return f"the table's record of its types (row {table_id} of {instance_id}/{TYPES_TABLE.id})"


def _oldest(cells: Iterable[Any]) -> dict[str, str]:
    found: dict[str, tuple[int, str]] = {}
    for cell in cells:
        name, kind = bytes(cell.qualifier).decode(), bytes(cell.value).decode()
        if name not in found or (cell.timestamp_micros, kind) < found[name]:
            found[name] = (cell.timestamp_micros, kind)
    return {name: kind for name, (_, kind) in sorted(found.items())}


async def read_types(client: Any, instance_id: str, table_id: str, app_profile_id: str | None = None,
                     names: Collection[str] | None = None) -> dict[str, str]:
    """The table's recorded types (empty when none are recorded, or no record table exists);
    with `names`, those attributes' only, when they are few (NAMED_READ)."""
    handle = lookup_table(client, instance_id, TYPES_TABLE.id, app_profile_id)
    key = table_id.encode()
    filtered = _columns(names)  # the named attributes' rows, and their columns of a row of before
    query = ReadRowsQuery(row_keys=[key, *(_row(table_id, n) for n in sorted(names or ()))], row_filter=filtered) \
        if filtered is not None else ReadRowsQuery(row_keys=[key], row_ranges=[_attribute_rows(table_id)])
    try:
        rows = await handle.read_rows(query)
    except exceptions.NotFound:
        return {}
    except (exceptions.GoogleAPICallError, exceptions.RetryError) as error:
        raise ServiceError(f"Bigtable table {instance_id}/{TYPES_TABLE.id} (the record of {table_id}'s types) did "
                           f"not answer within {READ_SECONDS:g} s ({type(error).__name__}): check that Bigtable (or "
                           f"BIGTABLE_EMULATOR_HOST's emulator) is reachable, then rerun") from None
    return _oldest(cell for row in rows for cell in row)


def _row(table_id: str, name: str) -> bytes:
    """The row of one attribute's type (module doc)."""
    return table_id.encode() + SEPARATOR + name.encode()


def _attribute_rows(table_id: str) -> RowRange:
    """Every attribute's row of the table (its id, then NUL: no other table's id sorts there)."""
    return RowRange(table_id.encode() + SEPARATOR, table_id.encode() + b"\x01")


def _columns(names: Collection[str] | None) -> row_filters.RowFilter | None:
    """A filter reading only the columns of `names` (None: the whole row, also for more than
    NAMED_READ names, whose filter would outgrow the row). A write bringing a new attribute
    reads its own column, not the whole record: with 20,000 names recorded, reading them all
    made such a PutItem take 1.1 s on the emulator instead of 14 ms (benchmarks/serve_new_names.py)."""
    return None if names is None or not names or len(names) > NAMED_READ else _named(names)


def _named(names: Collection[str]) -> row_filters.RowFilter:
    """The cells of the columns of `names`."""
    columns: list[row_filters.RowFilter] = [
        row_filters.ColumnRangeFilter(FAMILY, name.encode(), name.encode(), inclusive_start=True, inclusive_end=True)
        for name in sorted(names)]
    return row_filters.RowFilterChain([row_filters.FamilyNameRegexFilter(FAMILY), columns[0] if len(columns) == 1
                                       else row_filters.RowFilterUnion(columns)])


async def record_types(client: Any, project: str, instance_id: str, table_id: str, types: dict[str, str],
                       app_profile_id: str | None = None, known: dict[str, str] | None = None) -> dict[str, str]:
    """Each attribute of `types` the record lacks written into it (first writer wins); the
    record as it then stands for them, which the caller compares with what it meant to
    write. `known`: the record as the caller last read it (saves a read).

    Each is written in its own row, RECORDING at once (a load's first export brings every
    attribute together: a few round trips' time, not one after another). The record of them
    is then read back, also when this writer wrote every one: a worker of a release before
    issue 50 (during an upgrade) records a name in the table's row of before, which no
    predicate here sees, and the oldest cell of the two is the type (module doc). When every one was
    written, they are the record's, and nothing needs reading back; when another writer
    came first for one, the record of them is read again."""
    record = await read_types(client, instance_id, table_id, app_profile_id, types) if known is None else known
    new = {name: kind for name, kind in sorted(types.items()) if name not in record}
    if not new:
        return record
    handle = lookup_table(client, instance_id, TYPES_TABLE.id, app_profile_id)
    turns = asyncio.BoundedSemaphore(RECORDING)
    try:
        await asyncio.gather(*(_recorded(handle, turns, table_id, name, kind) for name, kind in new.items()))
    except exceptions.NotFound:  # an instance planned before the record existed: made on first use
        ensure_planned_table(project, instance_id, TYPES_TABLE)
        return await record_types(client, project, instance_id, table_id, types, app_profile_id, {})
    except exceptions.GoogleAPICallError as error:
        raise ServiceError(f"cannot record the types of {instance_id}/{table_id} in {TYPES_TABLE.id} "
                           f"({type(error).__name__}: {str(error)[:200]}): check that Bigtable is reachable and "
                           f"that the app profile {app_profile_id or 'default'} allows single-row "
                           f"transactions") from None
    return {**record, **await read_types(client, instance_id, table_id, app_profile_id, types)}


async def _recorded(handle: Any, turns: asyncio.BoundedSemaphore, table_id: str, name: str, kind: str) -> None:
    """`kind` written as the type of `name`, in its own row, unless it has a cell there
    already (then nothing is written). One of RECORDING at a time."""
    async with turns:
        await handle.check_and_mutate_row(_row(table_id, name), _named([name]), false_case_mutations=[
            mutations.SetCell(FAMILY, name.encode(), kind.encode())])


def differing(mine: dict[str, str], record: dict[str, str]) -> dict[str, tuple[str, str]]:
    """Attributes both hold with different types: name -> (mine, the record's)."""
    return {name: (kind, record[name]) for name, kind in sorted(mine.items())
            if name in record and record[name] != kind}


def agreed(folder: dict[str, str], record: dict[str, str], state_file: Path | str, instance_id: str,
           table_id: str) -> dict[str, str]:
    """The types of a table from its work folder's state and its record, which must agree
    on every attribute both hold (InputError naming both otherwise): the union."""
    wrong = differing(folder, record)
    if wrong:
        listed = ", ".join(f"{name} is {mine} there and {theirs} in the table"
                           for name, (mine, theirs) in wrong.items())
        raise InputError([Problem.about(str(state_file), "table_types", (
            f"the work folder's types disagree with {where(instance_id, table_id)}: {listed}; this work folder "
            f"belongs to another load (another table, instance or emulator): give the folder of the load into "
            f"{instance_id}/{table_id}, or move this one away (the table's record is the authority)"))])
    return {**folder, **record}


def held_by_table(table: TableSpec, folder: dict[str, str], record: dict[str, str], state_file: Path | str,
                  instance_id: str) -> dict[str, str]:
    """The types a table's cells hold, from its record and a load's work folder, which must
    agree (`agreed`), checked against the spec's declared types (`held_types`): what load,
    replicate and serve each start from."""
    return held_types(table, agreed(folder, record, state_file, instance_id, table.id), where(instance_id, table.id))


async def forget_types(client: Any, instance_id: str, table_id: str, app_profile_id: str | None = None) -> None:
    """The table's record deleted with the table (serve's DeleteTable): a table created again
    under that id starts with no recorded types."""
    handle = lookup_table(client, instance_id, TYPES_TABLE.id, app_profile_id)
    key = table_id.encode()
    try:
        rows = await handle.read_rows(ReadRowsQuery(row_keys=[key], row_ranges=[_attribute_rows(table_id)],
                                                    row_filter=row_filters.StripValueTransformerFilter(True)))
        if rows:
            await handle.bulk_mutate_rows([RowMutationEntry(row.row_key, [mutations.DeleteAllFromRow()])
                                           for row in rows])
    except exceptions.NotFound:
        return
