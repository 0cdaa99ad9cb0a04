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

from typing import Any

from ..errors import ServeError, unsupported, validation
from .table_requests import checked_request

ACTIONS = ("Create", "Update", "Delete")
CHANGES = ("BillingMode", "ProvisionedThroughput", "GlobalSecondaryIndexUpdates", "AttributeDefinitions")


def updated_definition(definition: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
    """The definition after the request (checked as CreateTable checks one), or DynamoDB's error."""
    other = sorted(k for k in body if k not in (*CHANGES, "TableName"))
    stream = body.get("StreamSpecification")
    if isinstance(stream, dict) and not stream.get("StreamEnabled") and other == ["StreamSpecification"]:
        other = []  # turning off a stream that was never on changes nothing
    if other:
        raise unsupported(f"UpdateTable of {', '.join(other)}", "serve keeps a created table's key schema, "
                          "billing and global secondary indexes only; delete and create the table for the rest")
    updates = body.get("GlobalSecondaryIndexUpdates") or []
    if "BillingMode" not in body and "ProvisionedThroughput" not in body and not updates:
        raise validation("At least one of ProvisionedThroughput, BillingMode, UpdateStreamEnabled, "
                         "GlobalSecondaryIndexUpdates or SSESpecification or ReplicaUpdates is required")
    new = dict(definition)
    _billing(new, body)
    actions = [_action(u) for u in (updates if isinstance(updates, list) else [None])]
    if sum(kind != "Update" for kind, _ in actions) > 1:
        raise ServeError("LimitExceededException", "Subscriber limit exceeded: Only 1 online index can be created "
                         "or deleted simultaneously per table")
    for kind, request in actions:
        if kind == "Create":
            _create(new, request, body.get("AttributeDefinitions"))
        else:
            _existing(new, request, kind)
    used = _used(new)
    new["AttributeDefinitions"] = [d for d in new["AttributeDefinitions"] if d["AttributeName"] in used]
    return checked_request({k: v for k, v in new.items() if v is not None})


def _billing(new: dict[str, Any], body: dict[str, Any]) -> None:
    """BillingMode and ProvisionedThroughput: switching to on-demand drops every throughput."""
    billing = body.get("BillingMode", new["BillingMode"])
    if "BillingMode" in body:
        new["BillingMode"] = billing
    if "ProvisionedThroughput" in body:
        new["ProvisionedThroughput"] = body["ProvisionedThroughput"]
    elif billing == "PAY_PER_REQUEST":
        new["ProvisionedThroughput"] = None
    if billing == "PAY_PER_REQUEST" and new.get("GlobalSecondaryIndexes"):
        new["GlobalSecondaryIndexes"] = [{k: v for k, v in g.items() if k != "ProvisionedThroughput"}
                                         for g in new["GlobalSecondaryIndexes"]]


def _action(update: Any) -> tuple[str, dict[str, Any]]:
    if not isinstance(update, dict) or len(update) != 1 or next(iter(update)) not in ACTIONS:
        raise validation("One or more parameter values were invalid: a GlobalSecondaryIndexUpdate must hold "
                         "exactly one of Create, Update or Delete")
    (kind, request), = update.items()
    if not isinstance(request, dict) or not isinstance(request.get("IndexName"), str):
        raise validation(f"1 validation error detected: Value null at 'globalSecondaryIndexUpdates.1.member."
                         f"{kind.lower()}.indexName' failed to satisfy constraint: Member must not be null")
    return kind, request


def _names(new: dict[str, Any]) -> list[str]:
    return [i["IndexName"] for f in ("GlobalSecondaryIndexes", "LocalSecondaryIndexes") for i in new.get(f) or []]


def _create(new: dict[str, Any], request: dict[str, Any], definitions: Any) -> None:
    name = request["IndexName"]
    if name in _names(new):
        raise validation(f"One or more parameter values were invalid: Index with name: {name} already exists")
    listed = definitions if isinstance(definitions, list) else []  # another JSON type was a 500
    given = {d.get("AttributeName"): d.get("AttributeType") for d in listed if isinstance(d, dict)}
    known = {d["AttributeName"]: d["AttributeType"] for d in new["AttributeDefinitions"]}
    keys = [k.get("AttributeName") for k in request.get("KeySchema") or [] if isinstance(k, dict)]
    missing = [k for k in keys if k not in given]
    if missing:
        raise validation(f"One or more parameter values were invalid: Some index key attributes are not defined in "
                         f"AttributeDefinitions. Keys: [{', '.join(map(str, missing))}], AttributeDefinitions: "
                         f"[{', '.join(map(str, given))}]")
    for key in keys:
        if key in known and known[key] != given[key]:
            raise validation(f"One or more parameter values were invalid: Attributes cannot be redefined. Please "
                             f"check that your attribute has the same type as previously defined: {key} is "
                             f"{known[key]}, not {given[key]}")
        known[key] = given[key]
    new["AttributeDefinitions"] = [{"AttributeName": n, "AttributeType": t} for n, t in known.items()]
    new["GlobalSecondaryIndexes"] = [*(new.get("GlobalSecondaryIndexes") or []), request]


def _existing(new: dict[str, Any], request: dict[str, Any], kind: str) -> None:
    """Update (its provisioned throughput) or Delete of a global index the table has."""
    name = request["IndexName"]
    indexes = new.get("GlobalSecondaryIndexes") or []
    if name not in [g["IndexName"] for g in indexes]:
        raise ServeError("ResourceNotFoundException", f"Requested resource not found: Index: {name} not found")
    if kind == "Delete":
        new["GlobalSecondaryIndexes"] = [g for g in indexes if g["IndexName"] != name] or None
        return
    new["GlobalSecondaryIndexes"] = [g | {"ProvisionedThroughput": request.get("ProvisionedThroughput")}
                                     if g["IndexName"] == name else g for g in indexes]


def _used(definition: dict[str, Any]) -> set[str]:
    """The attributes a key schema of the table or of an index names."""
    schemas = [definition["KeySchema"], *(i["KeySchema"] for f in ("GlobalSecondaryIndexes", "LocalSecondaryIndexes")
                                          for i in definition.get(f) or [])]
    return {k["AttributeName"] for schema in schemas for k in schema}
