"""DescribeTable, ListTables, CreateTable, DeleteTable, UpdateTable (TTL: ttl_ops.py).

The stage's spec tables are the plan's: described from the spec (key schema, billing,
TTL); CreateTable of one answers that it exists, DeleteTable of one is refused. On
emulator stages an application may create and delete tables of its own (created_tables.py),
described from the request that created them; on cloud stages the plan alone decides what
exists in Bigtable (`pulumi up`), so CreateTable and DeleteTable of other tables are refused.
"""

from __future__ import annotations

from typing import Any

from ...spec.model import Gsi, KeySchema, Lsi
from ..catalog import ServedTable
from ..errors import ServeError, unsupported, validation
from ..requests import CreateTable, DeleteTable, DescribeTable, ListTables, UpdateTable
from ..session import Session
from ..streams import registry
from ..streams.registry import Stream
from . import created_tables
from .table_counts import Counts, counted, served_counts
from .table_updates import updated_definition

ACCOUNT = "000000000000"  # no AWS account behind serve: ARNs carry a placeholder account


def _arn(table: ServedTable) -> str:
    return f"arn:aws:dynamodb:{table.spec.source.region}:{ACCOUNT}:table/{table.name}"


def _key_schema(key: KeySchema) -> list[dict[str, str]]:
    return [{"AttributeName": k.name, "KeyType": kind} for k, kind in ((key.partition, "HASH"), (key.sort, "RANGE"))
            if k is not None]


def _index(table: ServedTable, gsi: Gsi, counts: Counts | None) -> dict[str, Any]:
    if gsi.projection in ("all", "keys_only"):
        projection: dict[str, Any] = {"ProjectionType": str(gsi.projection).upper()}
    else:
        projection = {"ProjectionType": "INCLUDE", "NonKeyAttributes": list(gsi.projection)}
    out: dict[str, Any] = {"IndexName": gsi.name, "KeySchema": _key_schema(gsi.key), "Projection": projection,
                           "IndexStatus": "ACTIVE", "IndexArn": f"{_arn(table)}/index/{gsi.name}"}
    out["ProvisionedThroughput"] = {"ReadCapacityUnits": gsi.reads or 0, "WriteCapacityUnits": gsi.writes or 0}
    if table.created is not None:  # counted as the table's own ItemCount (table_counts.py)
        entries, size = counts.indexes.get(gsi.name, (0, 0)) if counts is not None else (0, 0)
        out |= {"IndexSizeBytes": size, "ItemCount": entries}
    return out


def _local_index(table: ServedTable, lsi: Lsi, counts: Counts | None) -> dict[str, Any]:
    out = _index(table, Gsi(lsi.name, KeySchema(table.spec.source.key.partition, lsi.sort), lsi.projection), counts)
    return {k: v for k, v in out.items() if k not in ("IndexStatus", "ProvisionedThroughput")}


def description(table: ServedTable, counts: Counts | None = None, stream: Stream | None = None) -> dict[str, Any]:
    """The table as DescribeTable answers it; a created table's ItemCount and sizes are
    `counts` (0 without: a table just created or deleted); `stream` its latest stream, named
    (LatestStreamArn, LatestStreamLabel) even once disabled, as DynamoDB does."""
    source = table.spec.source
    keys = [k for schema in (source.key, *(g.key for g in source.gsis)) for k in (schema.partition, schema.sort)
            if k is not None] + [s.sort for s in source.lsis]
    out: dict[str, Any] = {
        "TableName": table.name, "TableStatus": "ACTIVE", "TableArn": _arn(table),
        "KeySchema": _key_schema(source.key),
        "AttributeDefinitions": [{"AttributeName": n, "AttributeType": t}
                                 for n, t in dict((k.name, k.type) for k in keys).items()],
        "ItemCount": counts.items if counts else source.item_count or 0,  # counted: table_counts.served_counts
        "TableSizeBytes": counts.size if counts else int((source.storage_gb or 0) * 1024**3),
        "BillingModeSummary": {"BillingMode": "PROVISIONED" if source.billing == "provisioned" else "PAY_PER_REQUEST"},
    }
    if source.billing == "provisioned":
        out["ProvisionedThroughput"] = {"ReadCapacityUnits": source.reads, "WriteCapacityUnits": source.writes,
                                        "NumberOfDecreasesToday": 0}
    if stream is not None:
        if stream.closed_ms is None:
            out["StreamSpecification"] = {"StreamEnabled": True, "StreamViewType": stream.view}
        out |= {"LatestStreamLabel": stream.label, "LatestStreamArn": stream.arn}
    elif source.stream != "none":  # a cloud stage's: its Streams API is not built yet (docs/streams.md)
        out["StreamSpecification"] = {"StreamEnabled": True, "StreamViewType": source.stream.upper()}
    if source.gsis:
        out["GlobalSecondaryIndexes"] = [_index(table, g, counts) for g in source.gsis]
    if source.lsis:
        out["LocalSecondaryIndexes"] = [_local_index(table, s, counts) for s in source.lsis]
    if table.created is not None:  # a table serve created: when, its id, DynamoDB's fields for a new table
        out |= {"CreationDateTime": table.created.created_seconds, "TableId": table.created.table_uuid,
                "DeletionProtectionEnabled": False, "ItemCount": counts.items if counts else 0,
                "TableSizeBytes": counts.size if counts else 0}
        out.setdefault("ProvisionedThroughput", {"ReadCapacityUnits": 0, "WriteCapacityUnits": 0,
                                                 "NumberOfDecreasesToday": 0})
        if source.billing != "provisioned":
            out["BillingModeSummary"]["LastUpdateToPayPerRequestDateTime"] = table.created.created_seconds
    return out


async def latest_stream(session: Session, table: ServedTable) -> Stream | None:
    """The table's latest stream on emulator stages (registry.py); None on cloud stages,
    whose Streams API is not built yet, and for a table that never had one."""
    if not session.catalog.emulator:
        return None
    found = await registry.streams(session, table)
    return found[-1] if found else None


async def describe_table(session: Session, request: DescribeTable) -> dict[str, Any]:
    await created_tables.resolve_names(session, {request.name}, fresh=True)  # created or deleted just now
    table = session.catalog.get(request.name)
    counts = await served_counts(session, table)
    return {"Table": description(table, counts, await latest_stream(session, table))}


async def list_tables(session: Session, request: ListTables) -> dict[str, Any]:
    every = {*session.catalog.tables, *await created_tables.names(session)}
    names = [n for n in sorted(every) if request.after is None or n > request.after]
    out: dict[str, Any] = {"TableNames": names[:request.limit]}
    if len(names) > request.limit:
        out["LastEvaluatedTableName"] = names[request.limit - 1]
    return out


async def create_table(session: Session, request: CreateTable) -> dict[str, Any]:
    """A table of the stage's specs exists already (the plan made it): ResourceInUseException,
    DynamoDB's answer for an existing table, which "create if missing" start-up code expects.
    Another table is created on emulator stages (created_tables.py) and refused on cloud
    stages, where the plan, not the application, decides what exists. Only then is the
    definition's first problem said, as DynamoDB orders them."""
    table = session.catalog.tables.get(request.name) if request.name is not None else None
    if table is not None:
        await _exists(session, table)
    if not session.catalog.emulator:
        raise unsupported("CreateTable", "on a cloud stage the plan makes the tables (`pulumi up`): add the table "
                          "to a spec of the stage and deploy; emulator stages create tables on request")
    if isinstance(request.definition, ServeError):
        raise request.definition
    created = await created_tables.create(session, request.definition)
    session.streams.pop(created.name, None)  # a table of that name deleted since: its stream is not this one's
    stream = await registry.enable(session, created, request.stream) if request.stream else None
    return {"TableDescription": description(created, stream=stream)}


async def _exists(session: Session, table: ServedTable) -> None:
    try:
        await session.store(table, consistent=False).scan(None, None, start_open=False, limit=1)
    except ServeError as error:
        if error.name != "ResourceNotFoundException":
            raise
        raise validation(f"{table.name} is in the stage's specs but its Bigtable table {table.spec.id} does not "
                         f"exist: create it with `ddb2bigtable up --stage local` (emulator) or `pulumi up`") from None
    raise ServeError("ResourceInUseException", f"Table already exists: {table.name}")


async def update_table(session: Session, request: UpdateTable) -> dict[str, Any]:
    """A created table's billing and global indexes changed (table_updates.py) in its
    registry row; a spec table's UpdateTable is refused, saying to change its spec.
    ResourceNotFoundException first for a table that does not exist, as DynamoDB answers,
    then what is wrong with the request."""
    await created_tables.resolve_names(session, {request.name} if request.name else set(), fresh=True)
    table = session.catalog.get(request.name)
    if table.created is None:
        raise unsupported(f"UpdateTable of {table.name}", "the plan owns the tables of the stage's specs: change its "
                          "spec and deploy (`pulumi up`, or `ddb2bigtable up` for the local stage)")
    changes = request.changes
    streaming = changes.stream if not isinstance(changes, ServeError) else None
    if streaming is not None and not isinstance(changes, ServeError) and changes.billing is None \
            and not changes.sets_throughput and not changes.indexes:  # the stream alone
        return {"TableDescription": description(table, await counted(session, table),
                                                await _streamed(session, table, streaming))}

    def edit(record: dict[str, Any]) -> dict[str, Any]:
        if isinstance(changes, ServeError):
            raise changes
        return record | {"definition": updated_definition(record["definition"], changes)}

    changed = await created_tables.change(session, table.name, edit)
    stream = await _streamed(session, changed, streaming) if streaming else await latest_stream(session, changed)
    return {"TableDescription": description(changed, await counted(session, changed), stream)}


async def _streamed(session: Session, table: ServedTable, change: tuple[bool, str | None]) -> Stream:
    """UpdateTable's StreamSpecification applied: a new stream, or the enabled one closed."""
    enabled, view = change
    if enabled and view:
        await created_tables.stream_ready(session, table)
    session.streams.pop(table.name, None)  # this worker's writes see the change at once (items/stream_writes.py)
    return await registry.enable(session, table, view) if enabled and view else await registry.disable(session, table)


async def delete_table(session: Session, request: DeleteTable) -> dict[str, Any]:
    """A table serve created, deleted on emulator stages; DynamoDB's answer: the table's
    name, id, ARN, billing and status DELETING (no key schema), though it is gone already."""
    name = request.name
    if name in session.catalog.tables:
        raise unsupported(f"DeleteTable of {name}", "the plan owns the tables of the stage's specs; remove the "
                          "table from its spec and deploy (`pulumi up`, or `ddb2bigtable up` for the local stage)")
    if not session.catalog.emulator:
        raise unsupported("DeleteTable", "on a cloud stage the plan owns the tables (`pulumi up`)")
    deleted = await created_tables.delete(session, name)
    stream = await latest_stream(session, deleted)
    if stream is not None and stream.closed_ms is None:  # its records stay readable for 24 hours
        await registry.disable(session, deleted)
    gone = description(deleted, stream=stream)
    kept = ("TableName", "TableId", "TableArn", "BillingModeSummary", "ProvisionedThroughput", "ItemCount",
            "TableSizeBytes", "DeletionProtectionEnabled", "StreamSpecification", "LatestStreamLabel",
            "LatestStreamArn")
    return {"TableDescription": {k: gone[k] for k in kept if k in gone} | {"TableStatus": "DELETING"}}
