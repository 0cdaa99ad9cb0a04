"""Table operations' bodies -> the typed requests of requests.py.

What DynamoDB checks in the body alone, in its order, before the table is looked up:
a DescribeTable, DeleteTable or UpdateTimeToLive TableName against DynamoDB's pattern,
DescribeTimeToLive's only present (a name no table has is ResourceNotFound there, as
DynamoDB answers), ListTables' Limit and ExclusiveStartTableName, UpdateTimeToLive's
specification. The table itself is looked up by the operation, after the registry of
created tables is read (tables/created_tables.py).

CreateTable's and UpdateTable's checks come after that lookup in DynamoDB (a table that
exists is ResourceInUse before its definition is checked, one that does not is
ResourceNotFound before an update's problems), so their requests carry the body's
first problem for the operation to raise at that point. CreateTable's definition is
checked whole here (tables/table_requests.checked_request); of an UpdateTable, what the
body alone tells: parameters serve does not change, an update with nothing to change,
each index update's shape and how many indexes it creates or deletes. What depends on
the table's definition as stored (an index that exists or not, a type redefined, the
new definition as CreateTable would check it) is tables/table_updates.py's.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from ...spec.errors import clip
from ..catalog import Catalog
from ..errors import ServeError, unsupported, validation
from ..requests import (
    CreateTable,
    DeleteTable,
    DescribeTable,
    DescribeTimeToLive,
    IndexUpdate,
    ListTables,
    TableChanges,
    UpdateTable,
    UpdateTimeToLive,
)
from ..streams.records import VIEWS
from ..tables.table_requests import MAX_ATTRIBUTE_NAME, check_name, checked_request

ACTIONS = ("Create", "Update", "Delete")
CHANGES = ("BillingMode", "ProvisionedThroughput", "GlobalSecondaryIndexUpdates", "AttributeDefinitions")


def describe_table(_catalog: Catalog, body: dict[str, Any]) -> DescribeTable:
    return DescribeTable(check_name(body.get("TableName"), "tableName"))


def delete_table(_catalog: Catalog, body: dict[str, Any]) -> DeleteTable:
    return DeleteTable(check_name(body.get("TableName"), "tableName"))


def describe_time_to_live(_catalog: Catalog, body: dict[str, Any]) -> DescribeTimeToLive:
    name = body.get("TableName")
    if not isinstance(name, str) or not name:  # the catalog's words for a missing name
        raise validation("1 validation error detected: Value null at 'tableName' failed to satisfy constraint: "
                         "Member must not be null")
    return DescribeTimeToLive(name)


def update_time_to_live(_catalog: Catalog, body: dict[str, Any]) -> UpdateTimeToLive:
    name = check_name(body.get("TableName"), "tableName")
    return UpdateTimeToLive(name, *_specification(body))


def create_table(_catalog: Catalog, body: dict[str, Any]) -> CreateTable:
    name = body.get("TableName")
    try:
        definition: dict[str, Any] | ServeError = checked_request(body)
    except ServeError as error:
        definition = error
    stream = stream_specification(body) if not isinstance(definition, ServeError) else None
    return CreateTable(name if isinstance(name, str) else None, definition, stream[1] if stream else None)


def update_table(_catalog: Catalog, body: dict[str, Any]) -> UpdateTable:
    name = body.get("TableName")
    try:
        changes: TableChanges | ServeError = _changes(body)
    except ServeError as error:
        changes = error
    return UpdateTable(name if isinstance(name, str) and name else None, changes)


def _changes(body: dict[str, Any]) -> TableChanges:
    """What an UpdateTable changes, or DynamoDB's error for what the body alone tells, in its order."""
    other = sorted(k for k in body if k not in (*CHANGES, "TableName", "StreamSpecification"))
    if other:
        raise unsupported(f"UpdateTable of {', '.join(other)}", "serve keeps a created table's key schema, "
                          "billing, global secondary indexes and stream only; delete and create the table for the "
                          "rest")
    updates = body.get("GlobalSecondaryIndexUpdates") or []
    stream = stream_specification(body)
    if stream is not None and body.get("ProvisionedThroughput") is not None:
        raise validation("Cannot change IOPS and Streams at the same time.")  # DynamoDB Local 1.25.1's words
    if "BillingMode" not in body and "ProvisionedThroughput" not in body and not updates and stream is None:
        raise validation("At least one of ProvisionedThroughput, BillingMode, UpdateStreamEnabled, "
                         "GlobalSecondaryIndexUpdates or SSESpecification or ReplicaUpdates is required")
    indexes = tuple(_index_update(u) for u in (updates if isinstance(updates, list) else [None]))
    if sum(u.kind != "Update" for u in indexes) > 1:
        raise ServeError("LimitExceededException", "Subscriber limit exceeded: Only 1 online index can be created "
                         "or deleted simultaneously per table")
    listed = body.get("AttributeDefinitions")
    types = {d.get("AttributeName"): d.get("AttributeType") for d in listed if isinstance(d, dict)
             and isinstance(d.get("AttributeName"), Hashable)} if isinstance(listed, list) else {}
    billing = ("PROVISIONED" if body["BillingMode"] is None else body["BillingMode"]) if "BillingMode" in body else None
    return TableChanges(billing, body.get("ProvisionedThroughput"), "ProvisionedThroughput" in body, indexes, types,
                        stream)


def stream_specification(body: dict[str, Any]) -> tuple[bool, str | None] | None:
    """StreamSpecification as (enabled, StreamViewType), checked as DynamoDB Local 1.25.1
    checks it (its words); None when the body has none."""
    given = body.get("StreamSpecification")
    if given is None:
        return None
    if not isinstance(given, dict) or not isinstance(given.get("StreamEnabled", False), bool):
        raise ServeError("SerializationException", "StreamSpecification takes StreamEnabled as a boolean and "
                         "StreamViewType as a string")
    enabled, view = given.get("StreamEnabled"), given.get("StreamViewType")
    if enabled is None:
        raise validation("Stream StreamEnabled was null")
    if not enabled and view is not None:
        raise validation("Invalid StreamViewType: Stream StreamEnabled was false but a StreamViewType was present.")
    if enabled and not view:
        raise validation("Invalid StreamViewType: Stream ViewType must not be null or empty when enabling streams.")
    if enabled and view not in VIEWS:
        raise validation(f"Invalid StreamViewType: {clip(str(view))}")
    return enabled, view


def _index_update(update: Any) -> IndexUpdate:
    if not isinstance(update, dict) or len(update) != 1 or next(iter(update)) not in ACTIONS:
        raise validation("One or more parameter values were invalid: a GlobalSecondaryIndexUpdate must hold "
                         "exactly one of Create, Update or Delete")
    (kind, request), = update.items()
    if not isinstance(request, dict) or not isinstance(request.get("IndexName"), str):
        raise validation(f"1 validation error detected: Value null at 'globalSecondaryIndexUpdates.1.member."
                         f"{kind.lower()}.indexName' failed to satisfy constraint: Member must not be null")
    schema = request.get("KeySchema") if kind == "Create" else None  # a malformed one: CreateTable's checks say so
    keys = tuple(k.get("AttributeName") for k in schema if isinstance(k, dict)
                 and isinstance(k.get("AttributeName"), Hashable)) if isinstance(schema, list) else ()
    return IndexUpdate(kind, request["IndexName"], request, keys)


def list_tables(_catalog: Catalog, body: dict[str, Any]) -> ListTables:
    limit = body.get("Limit", 100)
    if not isinstance(limit, int) or not 1 <= limit <= 100:
        raise validation("1 validation error detected: Value at 'limit' failed to satisfy constraint: "
                         "Member must have value between 1 and 100")
    after = body.get("ExclusiveStartTableName")
    if after is not None and not isinstance(after, str):  # compared with names: it was a 500
        raise ServeError("SerializationException", "ExclusiveStartTableName must be a string")
    return ListTables(limit, after)


def _specification(body: dict[str, Any]) -> tuple[str, bool]:
    """The request's TimeToLiveSpecification: (attribute, enabled), checked as DynamoDB does."""
    given = body.get("TimeToLiveSpecification")
    if not isinstance(given, dict):
        raise validation("1 validation error detected: Value null at 'timeToLiveSpecification' failed to satisfy "
                         "constraint: Member must not be null")
    attribute, enabled = given.get("AttributeName"), given.get("Enabled")
    where = "timeToLiveSpecification.attributeName"
    if attribute is None:
        raise validation(f"1 validation error detected: Value null at '{where}' failed to satisfy constraint: "
                         f"Member must not be null")
    if enabled is None:
        raise validation("1 validation error detected: Value null at 'timeToLiveSpecification.enabled' failed to "
                         "satisfy constraint: Member must not be null")
    if not isinstance(attribute, str) or not isinstance(enabled, bool):
        raise ServeError("SerializationException", "TimeToLiveSpecification takes AttributeName as a string and "
                         "Enabled as a boolean")
    if not 1 <= len(attribute) <= MAX_ATTRIBUTE_NAME:
        bound = "greater than or equal to 1" if not attribute else f"less than or equal to {MAX_ATTRIBUTE_NAME}"
        raise validation(f"1 validation error detected: Value '{attribute[:200]}' at '{where}' failed to satisfy "
                         f"constraint: Member must have length {bound}")
    return attribute, enabled
