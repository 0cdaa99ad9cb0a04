"""Replication's part in the table's record of its attribute types (bigtable/table_types.py).

A stream record may bring an attribute the table's record does not name: the codec writes
it self-describing (`mixed`), and before the page's rows are written the table's record is
marked (attributes it does not name are `mixed`, so a later load of an export holding one
writes it the same way), once per run; no name is recorded, so names made from data do
not pile up in the record. When a load recorded one of them with a plain type before the
marking, the page is encoded again with the record's type, and a value that does not fit
it is a dead letter saying so, as the load's would be.
"""

from __future__ import annotations

from google.cloud.bigtable.data import BigtableDataClientAsync

from ..bigtable.table_types import mark_unnamed
from ..codec.cell_values import MIXED
from ..codec.codec import Codec
from ..load.writer import WriteError
from ..spec.errors import ServiceError


class NewAttributes:
    """Whether this run marked the table's record (or found it marked)."""

    def __init__(self, project: str, instance_id: str, table_id: str, app_profile_id: str | None):
        self.where = (project, instance_id, table_id)
        self.app_profile_id = app_profile_id
        self.marked = False

    async def record(self, codec: Codec, names: set[str]) -> dict[str, str] | None:
        """None when `codec` may write every one of `names` as it does; else the table's
        record, which gave one of them another type first."""
        new = {name for name in names if name not in codec.types}
        if not new or self.marked or codec.mapping.unnamed_mixed:
            return None
        project, instance_id, table_id = self.where
        try:
            async with BigtableDataClientAsync(project=project) as client:
                record = await mark_unnamed(client, project, instance_id, table_id, codec.types, self.app_profile_id)
        except WriteError:
            raise
        except ServiceError as error:  # out of reach: an outage of Bigtable, waited out as a failed write is
            raise WriteError(f"the record of {table_id}'s types", cause=str(error)) from None
        self.marked = True
        return record if any(record.get(name, MIXED) != MIXED for name in new) else None
