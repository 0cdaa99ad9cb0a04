"""A load's types and the table's record of them (bigtable/table_types.py).

Before inferring anything, a load takes the table's record into its resume state's
`table_types` (they must agree: another load's work folder is an error naming both), so
an incremental, or the first load after serve wrote new attributes, encodes every
attribute the table already holds in the form its cells are in, and a value that does not
fit is a dead letter saying so. Before its first row, it records the types it will write
(first writer wins); if another writer recorded another type in between, nothing is
written and the load fails saying which, with its types forgotten so that a rerun infers
them again over the record.

The Dataflow job (beam/dataflow.py) does the same without a work folder: its launch reads
the record (`table_record`), the job infers its types over it and records them
(`record_before_writing`) before its first row.
"""

from __future__ import annotations

from pathlib import Path

from google.cloud.bigtable.data import BigtableDataClientAsync

from ..bigtable.table_types import differing, held_by_table, read_types, record_types, where
from ..codec.type_inference import AttributeTypes, held_types
from ..spec.model import TableSpec
from .state import STATE_FILE, LoadState


async def table_record(project: str, table: TableSpec, instance_id: str,
                       app_profile_id: str | None) -> AttributeTypes:
    """The table's record of its types, checked against the spec's declared types
    (`held_types`: InputError at the declaration that disagrees)."""
    async with BigtableDataClientAsync(project=project) as client:
        record = await read_types(client, instance_id, table.id, app_profile_id)
    return held_types(table, record, where(instance_id, table.id))


async def adopt_record(state: LoadState, project: str, table: TableSpec, instance_id: str, work_dir: Path,
                       app_profile_id: str | None, client: BigtableDataClientAsync | None = None) -> AttributeTypes:
    """The table's recorded types merged into the state's `table_types` (InputError when
    they disagree, or when the spec declares a type the table does not hold: `held_types`);
    the record as read, which spares `record_load_types` reading it again. `client`: the
    load's, when it has one open."""
    if client is None:
        async with BigtableDataClientAsync(project=project) as own:
            return await adopt_record(state, project, table, instance_id, work_dir, app_profile_id, own)
    record = await read_types(client, instance_id, table.id, app_profile_id)
    merged = held_by_table(table, state.table_types, record, work_dir / STATE_FILE, instance_id)
    if merged != state.table_types:
        state.table_types = merged
        state.save(work_dir / STATE_FILE)
    return record


async def record_before_writing(project: str, instance_id: str, table_id: str, types: AttributeTypes,
                                app_profile_id: str | None, rerun: str,
                                client: BigtableDataClientAsync | None = None,
                                known: AttributeTypes | None = None) -> tuple[AttributeTypes, str | None]:
    """`types` recorded with the table before any row is written (first writer wins): the
    record as it then stands, and None, or the error that stops the load when another
    writer recorded another type first (`rerun`: how this load is run again). `client`:
    the writer's, when it has one open (else one is opened for this); `known`: the record
    as last read (`record_types`)."""
    if client is None:
        async with BigtableDataClientAsync(project=project) as own:
            return await record_before_writing(project, instance_id, table_id, types, app_profile_id, rerun, own,
                                               known)
    record = await record_types(client, project, instance_id, table_id, types, app_profile_id, known)
    wrong = differing(types, record)
    if not wrong:
        return record, None
    listed = ", ".join(f"{name} would be written as {mine}, recorded as {theirs}"
                       for name, (mine, theirs) in wrong.items())
    return record, (f"another writer recorded other types in {where(instance_id, table_id)} while this load "
                    f"inferred its own: {listed}; nothing was written: {rerun}, which then writes those attributes "
                    f"as the record says (values that do not fit are dead-lettered)")


async def record_load_types(state: LoadState, project: str, instance_id: str, table_id: str, work_dir: Path,
                            app_profile_id: str | None, client: BigtableDataClientAsync | None = None,
                            known: AttributeTypes | None = None) -> str | None:
    """The state's types recorded before any row is written (`record_before_writing`,
    through the writer's `client` when it has one, over the record `adopt_record` read:
    `known`); when another writer came first, the state forgets its types, so a rerun
    infers them again over the record."""
    record, error = await record_before_writing(project, instance_id, table_id, state.types or {}, app_profile_id,
                                                "rerun the load", client, known)
    if error is not None:
        state.types = None
        state.table_types = {**state.table_types, **record}
        state.save(work_dir / STATE_FILE)
    return error
