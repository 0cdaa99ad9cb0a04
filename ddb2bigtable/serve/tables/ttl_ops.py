"""DescribeTimeToLive and UpdateTimeToLive.

A spec table's TTL is its spec's (`source.ttl`): the plan stamps its cells with each
item's expiry and gives its families the GC rule that collects them, so it is described
from the spec, and UpdateTimeToLive is refused, saying the spec owns it (change the spec
and deploy). A table serve created (emulator stages) takes UpdateTimeToLive as DynamoDB
does: the attribute is kept in its registry row (created_tables.py), and from then on every
read hides the items whose attribute is a past time (tables.ServedTable.unexpired), in
every worker within a second; disabling it shows them again, since nothing is deleted
(Bigtable's GC cannot collect cells written with their write time).

DynamoDB's rules and words, as DynamoDB Local 1.25.1 answers (checked 2026-11-25): enabling
TTL that is enabled is refused ("already enabled", or "active on a different
AttributeName"), disabling needs the current attribute, disabling TTL that is not enabled
is refused ("already disabled"). DynamoDB also refuses a second change within an hour;
DynamoDB Local does not, nor does serve (tests and local stages toggle it).
"""

from __future__ import annotations

from typing import Any

from ..errors import unsupported, validation
from ..requests import DescribeTimeToLive, UpdateTimeToLive
from ..session import Session
from . import created_tables


async def describe_time_to_live(session: Session, request: DescribeTimeToLive) -> dict[str, Any]:
    await created_tables.resolve_names(session, {request.name}, fresh=True)
    attribute = session.catalog.get(request.name).ttl_attribute
    if attribute is None:
        return {"TimeToLiveDescription": {"TimeToLiveStatus": "DISABLED"}}
    return {"TimeToLiveDescription": {"TimeToLiveStatus": "ENABLED", "AttributeName": attribute}}


async def update_time_to_live(session: Session, request: UpdateTimeToLive) -> dict[str, Any]:
    name, attribute, enabled = request.name, request.attribute, request.enabled
    await created_tables.resolve_names(session, {name}, fresh=True)
    table = session.catalog.get(name)
    if table.created is None:
        raise unsupported(f"UpdateTimeToLive of {name}", "the table's spec owns its TTL (source.ttl, which the "
                          "plan turns into each cell's expiry and its families' GC): change the spec and deploy "
                          "(`pulumi up`, or `ddb2bigtable up` for the local stage)")

    def edit(record: dict[str, Any]) -> dict[str, Any]:
        current = record.get("ttl")
        if current is not None and current != attribute:
            raise validation("TimeToLive is active on a different AttributeName")
        if enabled and current is not None:
            raise validation("TimeToLive is already enabled")
        if not enabled and current is None:
            raise validation("TimeToLive is already disabled")
        return record | {"ttl": attribute if enabled else None}

    await created_tables.change(session, name, edit)
    return {"TimeToLiveSpecification": {"AttributeName": attribute, "Enabled": enabled}}
