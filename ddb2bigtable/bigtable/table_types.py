"""The attribute types a table's cells are written with, recorded with the table.

Bigtable stores bytes, so a cell is read back with the type it was written with. That type
used to live only in the load's work folder, which serve on Cloud Run does not have, which
serve's own new attributes never reached, and which another load's folder could replace
silently. The record lives in the instance itself, in the metadata table
`_ddb2bigtable_types` (plan/model.py `TYPES_TABLE`: the plan, `up` and `pulumi up` make it
beside the tables; `record_types` makes it on first use where an older instance lacks it).
A table's record is its head row (row key: the Bigtable table id, then NUL; no table id
holds a NUL), family `a`: one column per attribute a load recorded (qualifier: the
attribute's name, value its type: `S`, `N`, ..., `counter`, or `mixed` for typed DynamoDB
JSON) and one state column (qualifier STATE, empty: no attribute's name): a version while
loads may still record names, or `mixed` once serve or replicate wrote an attribute no
load recorded. Then every attribute the record does not name is `mixed` (UNNAMED in a
record as read), which is how the codec writes and reads an attribute it has no type for
(codec/compiled.py `stored`): serve and replicate record no names, so a table whose items
bring names made from data (dates, ids) keeps none of them, and a new name costs a write
nothing more, after any number (issue 50, finding 6; benchmarks/serve_new_names.py).

Why one row holds both: a load that infers a plain type for an attribute must not record
it after serve wrote that attribute's cells self-describing. Every load records its names
with one CheckAndMutateRow on the head row whose predicate is "the state is still the one
I read" (it moves on with each load's names), and serve and replicate mark the table with
the same; so of a load and a marking racing, one fails its predicate, reads the record
again and decides over the other's (`record_types`, `mark_unnamed`). A load that finds the
table marked writes its new attributes `mixed` and records nothing
(codec/type_inference.py `with_recorded`), and a spec declaring a plain type for an
attribute the record does not name is refused (`held_types`): its cells, if any, are
self-describing. Marking also records the types the marking writer holds that the record
lacks (the spec's declared types, a work folder's), so declared attributes stay checked.

Records of before this layout are still read, merged by name (the oldest cell of a name
is its type), and never written again: a table's attributes as columns of one row keyed
by the table id (before issue 50), and one row per attribute (table id, NUL, name; issue
50's first layout, whose names serve wrote as `mixed` for every new name).

The work folder's `table_types` stay for resumption; where both exist they must agree
(`agreed`): a disagreement is an error naming both, never a silent pick.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from google.api_core import exceptions
from google.cloud.bigtable.data import ReadRowsQuery, RowRange, mutations, row_filters
from google.cloud.bigtable.data.mutations import RowMutationEntry

from ..codec.cell_values import MIXED
from ..codec.type_inference import UNNAMED, held_types
from ..plan.model import TYPES_TABLE, InstancePlan
from ..spec.errors import InputError, Problem, ServiceError
from ..spec.model import TableSpec
from .deadlines import READ_SECONDS, lookup_table
from .table_admin import ensure_planned_table

FAMILY = TYPES_TABLE.families[0].name
NAMED_READ = 64  # attributes read by name at most; more read the whole record
SEPARATOR = b"\x00"  # between the table id and the attribute's name in a row key
# The head row's state column: the empty qualifier, which Bigtable allows ("May contain any
# byte string, including the empty string", google.bigtable.v2.Column, API reference, read
# 2026-12-07) and no attribute's name is (DynamoDB names are one character or more). Being
# UTF-8, it reads in the release before this layout as one more name, "", that no item
# brings, so that release still starts on a record this one wrote (a byte like 0xff did not
# decode there and stopped its serve).
STATE = b""
MARKED = MIXED.encode()  # the state once attributes the record does not name are mixed
TRIES = 20  # a CheckAndMutateRow of the head row tried again over a fresh read at most so often
SWAP_NAMES = 20_000  # names in one CheckAndMutateRow at most (its limit: 100,000 mutations)


def types_profile(instance: InstancePlan) -> str | None:
    """The app profile the record is written through: CheckAndMutateRow needs single-cluster
    routing with transactional writes, which the plan's `txn-<region>` profiles have; an
    instance without them uses its default profile."""
    return next((p.id for p in instance.app_profiles if p.routing == "single" and p.allow_transactional_writes), None)


def where(instance_id: str, table_id: str) -> str:
    """How errors name a table's record."""
    return f"the table's record of its types (row {table_id} of {instance_id}/{TYPES_TABLE.id})"


@dataclass(frozen=True)
class _Read:
    types: dict[str, str]  # names -> types, with UNNAMED: MIXED once marked
    state: bytes | None  # the head row's state cell as read (None: no load recorded, none marked)


def _oldest(cells: Iterable[Any]) -> _Read:
    found: dict[str, tuple[int, str]] = {}
    state = None
    for cell in cells:
        qualifier = bytes(cell.qualifier)
        if qualifier == STATE:
            state = bytes(cell.value)
            continue
        name, kind = qualifier.decode(), bytes(cell.value).decode()
        if name not in found or (cell.timestamp_micros, kind) < found[name]:
            found[name] = (cell.timestamp_micros, kind)
    types = {name: kind for name, (_, kind) in sorted(found.items())}
    return _Read({**types, UNNAMED: MIXED} if state == MARKED else types, state)


async def read_types(client: Any, instance_id: str, table_id: str, app_profile_id: str | None = None,
                     names: Collection[str] | None = None) -> dict[str, str]:
    """The table's recorded types (empty when none are recorded, or no record table exists),
    with UNNAMED: `mixed` when attributes it does not name are mixed; with `names`, those
    attributes' only, when they are few (NAMED_READ)."""
    return (await _read(client, instance_id, table_id, app_profile_id, names)).types


async def _read(client: Any, instance_id: str, table_id: str, app_profile_id: str | None,
                names: Collection[str] | None) -> _Read:
    handle = lookup_table(client, instance_id, TYPES_TABLE.id, app_profile_id)
    key = table_id.encode()
    names = None if names is None else [name for name in names if name != UNNAMED]
    filtered = _columns(names)  # the named attributes' cells (and the state) in every layout's rows
    query = ReadRowsQuery(row_keys=[key, *(_row(table_id, n) for n in sorted({"", *(names or ())}))],
                          row_filter=filtered) \
        if filtered is not None else ReadRowsQuery(row_keys=[key], row_ranges=[_attribute_rows(table_id)])
    try:
        rows = await handle.read_rows(query)
    except exceptions.NotFound:
        return _Read({}, None)
    except (exceptions.GoogleAPICallError, exceptions.RetryError) as error:
        raise ServiceError(f"Bigtable table {instance_id}/{TYPES_TABLE.id} (the record of {table_id}'s types) did "
                           f"not answer within {READ_SECONDS:g} s ({type(error).__name__}): check that Bigtable (or "
                           f"BIGTABLE_EMULATOR_HOST's emulator) is reachable, then rerun") from None
    return _oldest(cell for row in rows for cell in row)


def _row(table_id: str, name: str) -> bytes:
    """The row of one attribute's type in issue 50's first layout; of the name "" (no
    attribute's), the table's head row (module doc)."""
    return table_id.encode() + SEPARATOR + name.encode()


def _attribute_rows(table_id: str) -> RowRange:
    """The table's head row and its attribute rows of before (its id, then NUL: no other
    table's id sorts there)."""
    return RowRange(table_id.encode() + SEPARATOR, table_id.encode() + b"\x01")


def _columns(names: Collection[str] | None) -> row_filters.RowFilter | None:
    """A filter reading only the columns of `names` and the state (None: the whole rows, also
    for more than NAMED_READ names, whose filter would outgrow the row). Reading a table's
    names one by one, not the whole record, kept a write bringing a new attribute at 14 ms
    where the whole record of 20,000 names took 1.1 s on the emulator
    (benchmarks/serve_new_names.py, issue 50's first layout)."""
    return None if names is None or not names or len(names) > NAMED_READ else _named(names, STATE)


def _named(names: Collection[str], *qualifiers: bytes) -> row_filters.RowFilter:
    """The cells of the columns of `names` (and of `qualifiers`)."""
    columns: list[row_filters.RowFilter] = [
        row_filters.ColumnRangeFilter(FAMILY, column, column, inclusive_start=True, inclusive_end=True)
        for column in sorted({*(name.encode() for name in names), *qualifiers})]
    return row_filters.RowFilterChain([row_filters.FamilyNameRegexFilter(FAMILY), columns[0] if len(columns) == 1
                                       else row_filters.RowFilterUnion(columns)])


def _effective(names: Iterable[str], record: dict[str, str]) -> dict[str, str]:
    """The record, with `mixed` for each of `names` it does not name once it is marked."""
    return {**record, **{name: MIXED for name in names if name not in record and UNNAMED in record}}


def _new(types: dict[str, str], record: dict[str, str]) -> dict[str, str]:
    """The attributes of `types` a load records: those the record lacks, unless it is marked
    (then they are `mixed` by the record, and a plain type can no longer be recorded)."""
    return {} if UNNAMED in record else {name: kind for name, kind in sorted(types.items())
                                          if name not in record and name != UNNAMED}


async def record_types(client: Any, project: str, instance_id: str, table_id: str, types: dict[str, str],
                       app_profile_id: str | None = None, known: dict[str, str] | None = None) -> dict[str, str]:
    """Each attribute of `types` the record lacks written into it (a load's, module doc): the
    record as it then stands for them, which the caller compares with what it meant to
    write; on a marked record an attribute it does not name stands as `mixed`. `known`: the
    record as the caller last read it (saves a read when it holds every one).

    All of them go in one CheckAndMutateRow of the head row, written only while its state
    is the one read with them (first writer wins: another load's names, or a marking,
    between the read and the write make it read and decide again). The record of them is
    then read back: a worker of a release before issue 50 (during an upgrade) records a
    name in the table's row of before, which no predicate here sees, and the oldest cell
    of a name is its type."""
    if known is not None and not _new(types, known):
        return _effective(types, known)
    for _ in range(TRIES):
        read = await _read(client, instance_id, table_id, app_profile_id, types)
        new = _new(types, read.types)
        if not new:
            return _effective(types, {**(known or {}), **read.types})
        batch = dict(list(new.items())[:SWAP_NAMES])
        version = b"%020d" % (int(read.state or b"0") + 1)
        if await _swap(client, project, instance_id, table_id, app_profile_id, read.state, batch, version) \
                and len(batch) == len(new):
            back = await read_types(client, instance_id, table_id, app_profile_id, types)
            return _effective(types, {**(known or {}), **back})
    raise _changing(instance_id, table_id)


async def mark_unnamed(client: Any, project: str, instance_id: str, table_id: str, types: dict[str, str],
                       app_profile_id: str | None = None) -> dict[str, str]:
    """The table's record marked (attributes it does not name are `mixed`, module doc) with
    the attributes of `types` it lacks recorded in the same write: serve's and replicate's
    first write of an attribute the record does not name. The whole record afterwards (with
    the types another writer recorded first, which the caller writes with): the one read
    before the write, which the write's predicate held unchanged, so not read again (with
    20,000 loaded names, the marking took 1.3 s on the emulator reading it again, 0.5 s
    without: benchmarks/serve_new_names.py --loaded 20000)."""
    for _ in range(TRIES):
        read = await _read(client, instance_id, table_id, app_profile_id, None)
        if UNNAMED in read.types:
            return read.types
        missing = {name: kind for name, kind in sorted(types.items()) if name not in read.types and name != UNNAMED}
        if await _swap(client, project, instance_id, table_id, app_profile_id, read.state, missing, MARKED):
            return {**read.types, **missing, UNNAMED: MIXED}
    raise _changing(instance_id, table_id)


def _changing(instance_id: str, table_id: str) -> ServiceError:
    return ServiceError(f"{where(instance_id, table_id)} changed at each of {TRIES} tries to record types in it: "
                        f"other writers record types there without pause; rerun")


async def _swap(client: Any, project: str, instance_id: str, table_id: str, app_profile_id: str | None,
                state: bytes | None, names: dict[str, str], then: bytes) -> bool:
    """`names` written into the head row and its state set to `then`, if its state is still
    `state` (None: no state cell); whether they were. Makes the record table where an
    instance planned before it lacks it."""
    handle = lookup_table(client, instance_id, TYPES_TABLE.id, app_profile_id)
    writes = [*(mutations.SetCell(FAMILY, name.encode(), kind.encode()) for name, kind in names.items()),
              mutations.DeleteRangeFromColumn(FAMILY, STATE), mutations.SetCell(FAMILY, STATE, then)]
    head = _row(table_id, "")
    try:
        if state is None:
            return not await handle.check_and_mutate_row(head, _named((), STATE), false_case_mutations=writes)
        same = row_filters.RowFilterChain([_named((), STATE), row_filters.ValueRangeFilter(
            state, state, inclusive_start=True, inclusive_end=True)])
        return bool(await handle.check_and_mutate_row(head, same, true_case_mutations=writes))
    except exceptions.NotFound:  # an instance planned before the record existed: made on first use
        ensure_planned_table(project, instance_id, TYPES_TABLE)
        return False
    except exceptions.GoogleAPICallError as error:
        raise ServiceError(f"cannot record the types of {instance_id}/{table_id} in {TYPES_TABLE.id} "
                           f"({type(error).__name__}: {str(error)[:200]}): check that Bigtable is reachable and "
                           f"that the app profile {app_profile_id or 'default'} allows single-row "
                           f"transactions") from None


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
