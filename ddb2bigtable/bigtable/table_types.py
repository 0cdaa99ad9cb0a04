"""The attribute types a table's cells are written with, recorded with the table.

Bigtable stores bytes, so a cell is read back with the type it was written with. That type
used to live only in the load's work folder, which serve on Cloud Run does not have, which
serve's own new attributes never reached, and which another load's folder could replace
silently. The record lives in the instance itself, in the metadata table
`_ddb2bigtable_types` (plan/model.py `TYPES_TABLE`: the plan, `up` and `pulumi up` make it
beside the tables; `record_types` makes it on first use where an older instance lacks it):
one row per table (row key: the Bigtable table id), one column per attribute (family `a`,
qualifier: the attribute's name), the type as the cell's value (`S`, `N`, ..., `counter`,
or `mixed` for typed DynamoDB JSON).

Load, replicate and serve all write it, and all read it. The first writer of an
attribute's type wins: new attributes are written with CheckAndMutateRow whose predicate
is "the column has a cell" (all of them in one call when none has), so of two writers
racing on one attribute only the first writes; both then read the record back and agree. Every version is kept and the
oldest cell is the type, so two clusters of a replicated instance that each took a first
writer settle on the same (earliest) one once replication has passed. A writer whose type
differs from the record's is refused by its caller exactly as a type conflict is: the load
dead-letters the item, serve answers a ValidationException.

The work folder's `table_types` stay for resumption; where both exist they must agree
(`agreed`): a disagreement is an error naming both, never a silent pick.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import Any

from google.api_core import exceptions
from google.cloud.bigtable.data import mutations, row_filters

from ..codec.type_inference import held_types
from ..plan.model import TYPES_TABLE, InstancePlan
from ..spec.errors import InputError, Problem, ServiceError
from ..spec.model import TableSpec
from .deadlines import READ_SECONDS, lookup_table
from .table_admin import ensure_planned_table

FAMILY = TYPES_TABLE.families[0].name
NAMED_READ = 64  # attributes read by name at most; more read the whole record


def types_profile(instance: InstancePlan) -> str | None:
    """The app profile the record is written through: CheckAndMutateRow needs single-cluster
    routing with transactional writes, which the plan's `txn-<region>` profiles have; an
    instance without them uses its default profile."""
    return next((p.id for p in instance.app_profiles if p.routing == "single" and p.allow_transactional_writes), None)


def where(instance_id: str, table_id: str) -> str:
    """How errors name a table's record."""
    return f"the table's record of its types (row {table_id} of {instance_id}/{TYPES_TABLE.id})"


def _oldest(row: Any) -> dict[str, str]:
    cells: dict[str, tuple[int, str]] = {}
    for cell in row:
        name, kind = bytes(cell.qualifier).decode(), bytes(cell.value).decode()
        if name not in cells or (cell.timestamp_micros, kind) < cells[name]:
            cells[name] = (cell.timestamp_micros, kind)
    return {name: kind for name, (_, kind) in sorted(cells.items())}


async def read_types(client: Any, instance_id: str, table_id: str, app_profile_id: str | None = None,
                     names: Collection[str] | None = None) -> dict[str, str]:
    """The table's recorded types (empty when none are recorded, or no record table exists);
    with `names`, those attributes' only, when they are few (NAMED_READ)."""
    handle = lookup_table(client, instance_id, TYPES_TABLE.id, app_profile_id)
    try:
        row = await handle.read_row(table_id.encode(), row_filter=_columns(names))
    except exceptions.NotFound:
        return {}
    except (exceptions.GoogleAPICallError, exceptions.RetryError) as error:
        raise ServiceError(f"Bigtable table {instance_id}/{TYPES_TABLE.id} (the record of {table_id}'s types) did "
                           f"not answer within {READ_SECONDS:g} s ({type(error).__name__}): check that Bigtable (or "
                           f"BIGTABLE_EMULATOR_HOST's emulator) is reachable, then rerun") from None
    return _oldest(row) if row is not None else {}


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

    A load's first export brings every attribute at once; they are written in one
    CheckAndMutateRow whose predicate is "any of them has a cell" (one round trip instead
    of one per attribute: on Cloud Bigtable each is a transactional write). When it wrote
    them, they are the record's, and nothing needs reading back. Only when another writer
    came first for one of them does each go on its own, and the record is read again."""
    record = await read_types(client, instance_id, table_id, app_profile_id, types) if known is None else known
    new = {name: kind for name, kind in sorted(types.items()) if name not in record}
    if not new:
        return record
    handle = lookup_table(client, instance_id, TYPES_TABLE.id, app_profile_id)
    try:
        if not await _recorded(handle, table_id, new):
            return {**record, **new}
        if len(new) > 1:
            for name, kind in new.items():
                await _recorded(handle, table_id, {name: kind})
    except exceptions.NotFound:  # an instance planned before the record existed: made on first use
        ensure_planned_table(project, instance_id, TYPES_TABLE)
        return await record_types(client, project, instance_id, table_id, types, app_profile_id, {})
    except exceptions.GoogleAPICallError as error:
        raise ServiceError(f"cannot record the types of {instance_id}/{table_id} in {TYPES_TABLE.id} "
                           f"({type(error).__name__}: {str(error)[:200]}): check that Bigtable is reachable and "
                           f"that the app profile {app_profile_id or 'default'} allows single-row "
                           f"transactions") from None
    return {**record, **await read_types(client, instance_id, table_id, app_profile_id, types)}


async def _recorded(handle: Any, table_id: str, new: dict[str, str]) -> bool:
    """`new` written into the table's row unless one of its attributes has a cell already
    (then nothing is written): whether one had."""
    return bool(await handle.check_and_mutate_row(table_id.encode(), _named(new), false_case_mutations=[
        mutations.SetCell(FAMILY, name.encode(), kind.encode()) for name, kind in new.items()]))


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
    try:
        await handle.mutate_row(table_id.encode(), mutations.DeleteAllFromRow())
    except exceptions.NotFound:
        return
