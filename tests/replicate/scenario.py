"""A table in DynamoDB Local with a stream, its snapshot export loaded into the Bigtable
emulator, and the comparison of both sides item for item.

DynamoDB Local cannot export, so the snapshot is a Scan written with the project's
export writer, stamped with the time of the Scan (as AWS stamps exportTime).
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import yaml
from google.cloud.bigtable.data import BigtableDataClientAsync, ReadRowsQuery, RowRange

from ddb2bigtable.bigtable.table_admin import ensure_tables
from ddb2bigtable.codec.codec import Codec
from ddb2bigtable.codec.items import Item
from ddb2bigtable.codec.mutations import Cell, CodecError
from ddb2bigtable.exports.writer import write_export
from ddb2bigtable.load.run import LoadOptions, run_load
from ddb2bigtable.load.state import LoadState, target
from ddb2bigtable.load.verify import canonical
from ddb2bigtable.plan.planner import plan_stage
from ddb2bigtable.replicate.run import ReplicateOptions
from ddb2bigtable.spec.model import TableSpec
from ddb2bigtable.spec.reading import read_spec
from ddb2bigtable.spec.stage import load_stage

from ..conftest import ROOT

PROJECT = "local-project"  # the local stage's gcp:project, so the CLI finds what the tests load

_names = itertools.count()


@dataclass
class Scenario:
    spec_file: Path  # the spec, its source.table renamed to this test's DynamoDB table
    table: TableSpec
    dynamo_table: str
    instance_id: str
    work_dir: Path
    export: Path | None = None

    def replicate_options(self, dynamodb, **kw) -> ReplicateOptions:
        return ReplicateOptions(project=PROJECT, instance_id=self.instance_id, app_profile_id="migration-load",
                                work_dir=self.work_dir, endpoint_url=dynamodb.endpoint, **kw)


def create(dynamodb, tmp: Path, spec_file: str = "movies.yaml", stream: str | None = "NEW_AND_OLD_IMAGES",
           ttl: str | None = None, served_stream: str | None = None) -> Scenario:
    """The spec's first table in DynamoDB Local (with a stream of view `stream`) and in a
    fresh Bigtable instance of the emulator (its spec's `stream:` `served_stream` when given:
    serve's own stream of it, and the plan's family for the records)."""
    n = next(_names)
    document = yaml.safe_load((ROOT / "specs" / spec_file).read_text())
    source = document["tables"][0]["source"]
    source["table"] = name = f"{source['table']}-{n}"
    document["instance"]["id"] = f"{document['instance']['id'][:20]}-r{n}"  # the plan's id: the CLI finds it
    if ttl:
        source["ttl"] = {"attribute": ttl}
    if served_stream:
        source["stream"] = served_stream
    tmp.mkdir(parents=True, exist_ok=True)
    path = tmp / f"{n}.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    spec = read_spec(path)
    table = spec.tables[0]
    (instance,) = plan_stage(load_stage("local", ROOT), [spec]).instances
    ensure_tables(PROJECT, instance)
    keys = [k for k in (table.source.key.partition, table.source.key.sort) if k is not None]
    settings = {"StreamSpecification": {"StreamEnabled": True, "StreamViewType": stream}} if stream else {}
    dynamodb.client().create_table(
        TableName=name, BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": k.name, "AttributeType": k.type} for k in keys],
        KeySchema=[{"AttributeName": k.name, "KeyType": kind} for k, kind in zip(keys, ("HASH", "RANGE"), strict=False)],
        **settings)
    return Scenario(path, table, name, instance.id, tmp / "work")


def scan(dynamodb, name: str) -> list[Item]:
    pages = dynamodb.client().get_paginator("scan").paginate(TableName=name, ConsistentRead=True)
    return [item for page in pages for item in page["Items"]]


def snapshot(dynamodb, scenario: Scenario, dest: Path) -> Path:
    """A Scan written as a full export at the time of the Scan."""
    moment = datetime.now(UTC)
    items = scan(dynamodb, scenario.dynamo_table)
    arn = f"arn:aws:dynamodb:us-west-2:000000000000:table/{scenario.dynamo_table}"
    return write_export(dest, arn, items, export_time=moment, items_per_file=50)


def export_and_load(dynamodb, scenario: Scenario, tmp: Path) -> Path:
    """The snapshot, loaded."""
    scenario.export = snapshot(dynamodb, scenario, tmp / "export")
    report = run_load(scenario.table, str(scenario.export),
                      LoadOptions(project=PROJECT, instance_id=scenario.instance_id, app_profile_id="migration-load",
                                  work_dir=scenario.work_dir))
    assert report.complete, report
    return scenario.export


def _codec(scenario: Scenario) -> Codec:
    """The codec with the types the load recorded (as `verify` decodes)."""
    where = target(PROJECT, scenario.instance_id, scenario.table.id)
    return Codec(scenario.table, LoadState.open(scenario.work_dir / "state.json", "", where)[0].table_types)


def bigtable_rows(scenario: Scenario, codec: Codec | None = None) -> list[list[Item]]:
    """The items of every Bigtable row, decoded; TTL cells past their expiry are dropped
    (the emulator's GC is lazy, as verify allows)."""
    codec = codec or _codec(scenario)
    now, rows = time.time_ns() // 1000, []
    for row in read_all(scenario.instance_id, scenario.table.id):
        cells = [Cell(c.family, c.qualifier, c.value, c.timestamp_micros) for c in row
                 if not (c.family in codec.ttl_families and c.timestamp_micros < now)]
        rows.append(codec.decode(row.row_key, cells) if cells else [])
    return rows


def differences(dynamodb, scenario: Scenario) -> list[str]:
    """Every item that differs between DynamoDB and Bigtable (empty: equal item for item).
    DynamoDB's side is what the codec gives back for each item (`Codec.expected`, as
    `verify` compares): an expired one is absent, and what a design cannot keep (the video
    design's comment ids) is left out, so items are compared as a multiset, not by key."""
    codec, now = _codec(scenario), time.time_ns() // 1000
    ours = Counter(_key(i) for row in bigtable_rows(scenario, codec) for i in row)
    theirs: Counter[str] = Counter()
    found = []
    for item in scan(dynamodb, scenario.dynamo_table):
        try:
            expected = codec.expected(item, now_micros=now)
        except CodecError as error:
            found.append(f"cannot be written: {error}")
            continue
        if expected is not None:
            theirs[_key(expected)] += 1
    found += [f"only in DynamoDB: {i}" for i in (theirs - ours).elements()]
    found += [f"only in Bigtable: {i}" for i in (ours - theirs).elements()]
    return sorted(found)


def _key(item: Item) -> str:
    """An item as text that compares as DynamoDB compares: numbers by value, sets and
    attributes unordered."""
    def frozen(value: object) -> object:
        if isinstance(value, dict):
            return sorted((k, frozen(v)) for k, v in value.items())
        if isinstance(value, (list, tuple)):
            return [frozen(v) for v in value]
        if isinstance(value, frozenset):
            return sorted(map(str, value))
        return str(value)
    return repr(frozen(canonical(item)))


def read_all(instance_id: str, table_id: str) -> list:
    async def go():
        async with BigtableDataClientAsync(project=PROJECT) as client:
            return await client.get_table(instance_id, table_id).read_rows(ReadRowsQuery(row_ranges=[RowRange()]))
    return asyncio.run(go())
