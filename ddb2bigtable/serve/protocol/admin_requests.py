"""Table operations' bodies -> the typed requests of requests.py.

What DynamoDB checks in the body alone, in its order, before the table is looked up:
a DescribeTable, DeleteTable or UpdateTimeToLive TableName against DynamoDB's pattern,
DescribeTimeToLive's only present (a name no table has is ResourceNotFound there, as
DynamoDB answers), ListTables' Limit and ExclusiveStartTableName, UpdateTimeToLive's
specification. The table itself is looked up by the operation, after the registry of
created tables is read (tables/created_tables.py). CreateTable and UpdateTable still
read their bodies: their checks come after the registry's (an existing table is
ResourceInUse before its definition is checked; an index update is checked against
the table's definition as stored).
"""

from __future__ import annotations

from typing import Any

from ..catalog import Catalog
from ..errors import ServeError, validation
from ..requests import DeleteTable, DescribeTable, DescribeTimeToLive, ListTables, UpdateTimeToLive
from ..tables.table_requests import MAX_ATTRIBUTE_NAME, check_name


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
