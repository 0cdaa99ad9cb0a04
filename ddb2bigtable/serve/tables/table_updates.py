"""An UpdateTable request applied to a created table's definition, as DynamoDB checks it.

What it changes is only the definition the registry keeps (created_tables.py): the
billing mode and provisioned throughput (recorded and described; Bigtable's capacity is
its nodes, which the plan sizes), and global secondary indexes, created or deleted. On
emulator stages an index is answered from the table itself (index_ops.py), so a new index
holds every existing item that has its key attributes at once, with no backfill, and is
ACTIVE when UpdateTable answers; a deleted one is gone as soon. The new definition then
goes through CreateTable's own checks (table_requests.checked_request), so an update
leaves a definition CreateTable would accept. DynamoDB's limits and words: one index
created or deleted per request (LimitExceededException), an attribute's type never
redefined, a missing index ResourceNotFoundException, an update with nothing to change
refused (AWS, "UpdateTable",
https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_UpdateTable.html, read
2026-11-25).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from ..errors import ServeError, validation
from ..requests import IndexUpdate, TableChanges
from .table_requests import checked_request


def updated_definition(definition: dict[str, Any], changes: TableChanges) -> dict[str, Any]:
    """The definition after the request (checked as CreateTable checks one), or DynamoDB's
    error; what the body alone tells was checked when it was read (protocol/admin_requests.py)."""
    new = dict(definition)
    _billing(new, changes)
    for update in changes.indexes:
        if update.kind == "Create":
            _create(new, update, changes.types)
        else:
            _existing(new, update)
    used = _used(new)
    new["AttributeDefinitions"] = [d for d in new["AttributeDefinitions"] if d["AttributeName"] in used]
    return checked_request({k: v for k, v in new.items() if v is not None})


def _billing(new: dict[str, Any], changes: TableChanges) -> None:
    """BillingMode and ProvisionedThroughput: switching to on-demand drops every throughput."""
    billing = new["BillingMode"] if changes.billing is None else changes.billing
    new["BillingMode"] = billing
    if changes.sets_throughput:
        new["ProvisionedThroughput"] = changes.throughput
    elif billing == "PAY_PER_REQUEST":
        new["ProvisionedThroughput"] = None
    if billing == "PAY_PER_REQUEST" and new.get("GlobalSecondaryIndexes"):
        new["GlobalSecondaryIndexes"] = [{k: v for k, v in g.items() if k != "ProvisionedThroughput"}
                                         for g in new["GlobalSecondaryIndexes"]]


def _names(new: dict[str, Any]) -> list[str]:
    return [i["IndexName"] for f in ("GlobalSecondaryIndexes", "LocalSecondaryIndexes") for i in new.get(f) or []]


def _create(new: dict[str, Any], update: IndexUpdate, given: dict[Any, Any]) -> None:
    name = update.name
    if name in _names(new):
        raise validation(f"One or more parameter values were invalid: Index with name: {name} already exists")
    known = {d["AttributeName"]: d["AttributeType"] for d in new["AttributeDefinitions"]}
    missing = [k for k in update.keys if k not in given]
    if missing:
        raise validation(f"One or more parameter values were invalid: Some index key attributes are not defined in "
                         f"AttributeDefinitions. Keys: [{', '.join(map(str, missing))}], AttributeDefinitions: "
                         f"[{', '.join(map(str, given))}]")
    for key in update.keys:
        if key in known and known[key] != given[key]:
            raise validation(f"One or more parameter values were invalid: Attributes cannot be redefined. Please "
                             f"check that your attribute has the same type as previously defined: {key} is "
                             f"{known[key]}, not {given[key]}")
        known[key] = given[key]
    new["AttributeDefinitions"] = [{"AttributeName": n, "AttributeType": t} for n, t in known.items()]
    new["GlobalSecondaryIndexes"] = [*(new.get("GlobalSecondaryIndexes") or []), update.index]


def _existing(new: dict[str, Any], update: IndexUpdate) -> None:
    """Update (its provisioned throughput) or Delete of a global index the table has."""
    name = update.name
    indexes = new.get("GlobalSecondaryIndexes") or []
    if name not in [g["IndexName"] for g in indexes]:
        raise ServeError("ResourceNotFoundException", f"Requested resource not found: Index: {name} not found")
    if update.kind == "Delete":
        new["GlobalSecondaryIndexes"] = [g for g in indexes if g["IndexName"] != name] or None
        return
    new["GlobalSecondaryIndexes"] = [g | {"ProvisionedThroughput": update.index.get("ProvisionedThroughput")}
                                     if g["IndexName"] == name else g for g in indexes]


def _used(definition: dict[str, Any]) -> set[Any]:
    """The attributes a key schema of the table or of an index names. A created index's
    schema is as sent and may be malformed: what it names is kept for checked_request,
    which then says what is wrong with it, as CreateTable would."""
    indexes = [i for f in ("GlobalSecondaryIndexes", "LocalSecondaryIndexes") for i in definition.get(f) or []]
    schemas = [definition["KeySchema"], *(i.get("KeySchema") for i in indexes)]
    return {k.get("AttributeName") for schema in schemas if isinstance(schema, list) for k in schema
            if isinstance(k, dict) and isinstance(k.get("AttributeName"), Hashable)}
