"""DescribeTable, ListTables, DescribeTimeToLive; CreateTable of a spec's table answers that
it exists; DeleteTable and any other CreateTable are refused.

The tables serve answers for are the stage's spec tables, described from the spec (key
schema, billing, TTL): the plan, not the application, decides what exists in Bigtable.
"""

from __future__ import annotations

from typing import Any

from ..spec.model import Gsi, KeySchema
from .errors import ServeError, unsupported, validation
from .session import Session
from .tables import ServedTable

ACCOUNT = "000000000000"  # no AWS account behind serve: ARNs carry a placeholder account


def _arn(table: ServedTable) -> str:
    return f"arn:aws:dynamodb:{table.spec.source.region}:{ACCOUNT}:table/{table.name}"


def _key_schema(key: KeySchema) -> list[dict[str, str]]:
    return [{"AttributeName": k.name, "KeyType": kind} for k, kind in ((key.partition, "HASH"), (key.sort, "RANGE"))
            if k is not None]


def _index(table: ServedTable, gsi: Gsi) -> dict[str, Any]:
    if gsi.projection in ("all", "keys_only"):
        projection: dict[str, Any] = {"ProjectionType": str(gsi.projection).upper()}
    else:
        projection = {"ProjectionType": "INCLUDE", "NonKeyAttributes": list(gsi.projection)}
    out: dict[str, Any] = {"IndexName": gsi.name, "KeySchema": _key_schema(gsi.key), "Projection": projection,
                           "IndexStatus": "ACTIVE", "IndexArn": f"{_arn(table)}/index/{gsi.name}"}
    if table.spec.source.billing == "provisioned":
        out["ProvisionedThroughput"] = {"ReadCapacityUnits": gsi.reads or 0, "WriteCapacityUnits": gsi.writes or 0}
    return out


def description(table: ServedTable) -> dict[str, Any]:
    source = table.spec.source
    keys = [k for schema in (source.key, *(g.key for g in source.gsis)) for k in (schema.partition, schema.sort)
            if k is not None]
    out: dict[str, Any] = {
        "TableName": table.name, "TableStatus": "ACTIVE", "TableArn": _arn(table),
        "KeySchema": _key_schema(source.key),
        "AttributeDefinitions": [{"AttributeName": n, "AttributeType": t}
                                 for n, t in dict((k.name, k.type) for k in keys).items()],
        "ItemCount": source.item_count or 0, "TableSizeBytes": int((source.storage_gb or 0) * 1024**3),
        "BillingModeSummary": {"BillingMode": "PROVISIONED" if source.billing == "provisioned" else "PAY_PER_REQUEST"},
    }
    if source.billing == "provisioned":
        out["ProvisionedThroughput"] = {"ReadCapacityUnits": source.reads, "WriteCapacityUnits": source.writes,
                                        "NumberOfDecreasesToday": 0}
    if source.gsis:
        out["GlobalSecondaryIndexes"] = [_index(table, g) for g in source.gsis]
    return out


async def describe_table(session: Session, body: dict[str, Any]) -> dict[str, Any]:
    return {"Table": description(session.catalog.get(body.get("TableName")))}


async def list_tables(session: Session, body: dict[str, Any]) -> dict[str, Any]:
    limit = body.get("Limit", 100)
    if not isinstance(limit, int) or not 1 <= limit <= 100:
        raise validation("1 validation error detected: Value at 'limit' failed to satisfy constraint: "
                         "Member must have value between 1 and 100")
    after = body.get("ExclusiveStartTableName")
    names = [n for n in sorted(session.catalog.tables) if after is None or n > after]
    out: dict[str, Any] = {"TableNames": names[:limit]}
    if len(names) > limit:
        out["LastEvaluatedTableName"] = names[limit - 1]
    return out


async def describe_time_to_live(session: Session, body: dict[str, Any]) -> dict[str, Any]:
    ttl = session.catalog.get(body.get("TableName")).spec.source.ttl
    if ttl is None:
        return {"TimeToLiveDescription": {"TimeToLiveStatus": "DISABLED"}}
    return {"TimeToLiveDescription": {"TimeToLiveStatus": "ENABLED", "AttributeName": ttl.attribute}}


async def create_table(session: Session, body: dict[str, Any]) -> dict[str, Any]:
    """A table of the stage's specs exists already (the plan made it): ResourceInUseException,
    DynamoDB's answer for an existing table, which "create if missing" start-up code expects.
    Any other table is refused: the plan, not the application, decides what exists."""
    name = body.get("TableName")
    table = session.catalog.tables.get(name) if isinstance(name, str) else None
    if table is None:
        raise unsupported("CreateTable", "serve answers for the tables of the stage's specs, which the plan creates "
                          "(`ddb2bigtable up --stage local` on the emulator, `pulumi up` in the cloud); add the "
                          "table to a spec instead")
    try:
        await session.store(table, consistent=False).scan(None, None, start_open=False, limit=1)
    except ServeError as error:
        if error.name != "ResourceNotFoundException":
            raise
        raise validation(f"{name} is in the stage's specs but its Bigtable table {table.spec.id} does not exist: "
                         f"create it with `ddb2bigtable up --stage local` (emulator) or `pulumi up`") from None
    raise ServeError("ResourceInUseException", f"Table already exists: {name}")


async def delete_table(session: Session, body: dict[str, Any]) -> dict[str, Any]:
    raise unsupported("DeleteTable", "the plan owns the stage's tables; remove the table from its spec and deploy")
