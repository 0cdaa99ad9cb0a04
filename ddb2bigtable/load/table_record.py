"""A load's types and the table's record of them (bigtable/table_types.py).

Before inferring anything, a load takes the table's record into its resume state's
`table_types` (they must agree: another load's work folder is an error naming both), so
an incremental, or the first load after serve wrote new attributes, encodes every
attribute the table already holds in the form its cells are in, and a value that does not
fit is a dead letter saying so. Before its first row, it records the types it will write
(first writer wins); if another writer recorded another type in between, nothing is
written and the load fails saying which, with its types forgotten so that a rerun infers
them again over the record.
"""

from __future__ import annotations

from pathlib import Path

from google.cloud.bigtable.data import BigtableDataClientAsync

from ..bigtable.table_types import agreed, differing, read_types, record_types, where
from ..codec.type_inference import held_types
from ..spec.model import TableSpec
from .state import STATE_FILE, LoadState


async def adopt_record(state: LoadState, project: str, table: TableSpec, instance_id: str, work_dir: Path,
                       app_profile_id: str | None) -> None:
    """The table's recorded types merged into the state's `table_types` (InputError when
    they disagree, or when the spec declares a type the table does not hold: `held_types`)."""
    async with BigtableDataClientAsync(project=project) as client:
        record = await read_types(client, instance_id, table.id, app_profile_id)
    merged = held_types(table, agreed(state.table_types, record, work_dir / STATE_FILE, instance_id, table.id),
                        where(instance_id, table.id))
    if merged != state.table_types:
        state.table_types = merged
        state.save(work_dir / STATE_FILE)


async def record_load_types(state: LoadState, project: str, instance_id: str, table_id: str, work_dir: Path,
                            app_profile_id: str | None) -> str | None:
    """The state's types recorded with the table before any row is written; None, or the
    error that stops the load (another writer recorded another type first)."""
    types = state.types or {}
    async with BigtableDataClientAsync(project=project) as client:
        record = await record_types(client, project, instance_id, table_id, types, app_profile_id)
    wrong = differing(types, record)
    if not wrong:
        return None
    state.types = None  # a rerun infers again, taking the record's types
    state.table_types = {**state.table_types, **record}
    state.save(work_dir / STATE_FILE)
    listed = ", ".join(f"{name} would be written as {mine}, recorded as {theirs}"
                       for name, (mine, theirs) in wrong.items())
    return (f"another writer recorded other types in {where(instance_id, table_id)} while this load inferred its "
            f"own: {listed}; nothing was written: rerun the load, which then writes those attributes as the "
            f"record says (values that do not fit are dead-lettered)")
