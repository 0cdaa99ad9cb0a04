"""Replication's part in the table's record of its attribute types (bigtable/table_types.py).

A stream record may bring an attribute the table has never held: the codec writes it
self-describing (`mixed`), so before the page's rows are written the attribute is
recorded as `mixed` (first writer wins), and a later load of an export holding it writes
it the same way. When another writer (a load, serve) recorded it first with a plain type,
the page is encoded again with the record's type, and a value that does not fit it is a
dead letter saying so, as the load's would be.
"""

from __future__ import annotations

from google.cloud.bigtable.data import BigtableDataClientAsync

from ..bigtable.table_types import record_types
from ..codec.cell_values import MIXED
from ..codec.codec import Codec
from ..load.writer import WriteError
from ..spec.errors import ServiceError


class NewAttributes:
    """The attributes this run recorded as `mixed` (each is recorded once per run)."""

    def __init__(self, project: str, instance_id: str, table_id: str, app_profile_id: str | None):
        self.where = (project, instance_id, table_id)
        self.app_profile_id = app_profile_id
        self.mixed: set[str] = set()

    async def record(self, codec: Codec, names: set[str]) -> dict[str, str] | None:
        """None when `codec` may write every one of `names` as it does; else the table's
        record, which gave one of them another type first."""
        new = {name: MIXED for name in names if name not in codec.types and name not in self.mixed}
        if not new:
            return None
        project, instance_id, table_id = self.where
        try:
            async with BigtableDataClientAsync(project=project) as client:
                record = await record_types(client, project, instance_id, table_id, new, self.app_profile_id)
        except WriteError:
            raise
        except ServiceError as error:  # out of reach: an outage of Bigtable, waited out as a failed write is
            raise WriteError(f"the record of {table_id}'s types", cause=str(error)) from None
        self.mixed |= {name for name in new if record.get(name) == MIXED}
        return None if all(record.get(name) == MIXED for name in new) else record
