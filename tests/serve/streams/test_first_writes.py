"""A write on a table with a stream tries an empty row first (items/item_ops._first_write):
while most of a table's recent writes found their row empty, the write is one
CheckAndMutateRow that writes the item and its INSERT only on a row nothing a writer reads
is in; elsewhere it writes nothing and the write reads, checks and writes as before. On the
emulator, in this process over serve's stage (the steps the driver performs counted), the
records read back through serve's Streams API with boto3."""

from __future__ import annotations

import asyncio
import json
from collections import OrderedDict
from typing import Any

import pytest
from botocore.exceptions import ClientError
from google.cloud.bigtable.data import BigtableDataClientAsync

from ddb2bigtable.cli.serve_cmd import _tables
from ddb2bigtable.serve.catalog import catalog
from ddb2bigtable.serve.errors import ServeError
from ddb2bigtable.serve.items import item_ops, known_rows
from ddb2bigtable.serve.protocol import app
from ddb2bigtable.serve.session import Session
from ddb2bigtable.serve.transactions import driver

from . import side_by_side
from .conftest import STAGE

TABLE = "Orders"


def _key(pk: str) -> dict[str, Any]:
    return side_by_side.key(pk, 7)


def _put(pk: str, v: str, **more: Any) -> tuple[str, dict[str, Any]]:
    return "PutItem", {"TableName": TABLE, "Item": _key(pk) | {"v": {"S": v}}, **more}


def _steps(streamed, monkeypatch, requests: list[tuple[str, dict[str, Any]]], *, remembering: bool = False,
           before: Any = None) -> list[list[str] | str]:
    """Each request answered in this process: the steps the driver performed for it (an
    error's name instead when it was refused). The worker remembers none of the rows it
    wrote unless `remembering` (known_rows.py, test_known_rows.py); `before(n)`, when given,
    runs before the nth request."""
    project, types, _ = _tables(streamed.root, STAGE)
    tables = catalog(streamed.root, STAGE, types, project)
    performed: list[str] = []
    perform = driver.Rows.perform

    async def counted(self, step):
        performed.append(type(step).__name__)
        return await perform(self, step)

    monkeypatch.setattr(driver.Rows, "perform", counted)
    monkeypatch.setattr(item_ops, "_fresh", {})  # the table's guess as in a worker that wrote none of it yet
    monkeypatch.setattr(item_ops, "_right", {})
    monkeypatch.setattr(known_rows, "_known", OrderedDict())  # and no row it wrote
    monkeypatch.setattr(known_rows, "_held", [0])
    if not remembering:
        monkeypatch.setattr(known_rows, "remember", lambda row, data: None)

    async def run() -> list[list[str] | str]:
        out: list[list[str] | str] = []
        async with BigtableDataClientAsync(project=project) as client:
            session = Session(tables, client)
            for n, (operation, body) in enumerate(requests):
                if before is not None:
                    before(n)
                performed.clear()
                try:
                    await app.operation(operation)(session, body)
                    out.append(list(performed))
                except ServeError as error:
                    out.append(error.name)
        return out

    return asyncio.run(run())


def _records(streamed, arn: str, pk: str) -> list[dict[str, Any]]:
    keys = json.dumps(_key(pk), sort_keys=True)
    return side_by_side.by_item({TABLE: side_by_side.read_boto3(streamed.client(), arn)}).get(f"{TABLE} {keys}", [])


def test_a_new_item_is_one_write_with_its_insert_and_an_existing_one_still_gets_its_modify(streamed, arn,
                                                                                            monkeypatch) -> None:
    steps = _steps(streamed, monkeypatch, [_put("first-new", "a"), _put("first-new", "b")])
    assert steps[0] == ["WriteIfUnchanged"]  # no read first (before: Read, then the write)
    assert steps[1][0] == "WriteIfUnchanged" and steps[1][-2:] == ["Read", "WriteIfUnchanged"]  # refused, then as before
    found = _records(streamed, arn, "first-new")
    assert [(r["eventName"], r.get("OldImage", {}).get("v"), r["NewImage"]["v"]) for r in found] == [
        ("INSERT", None, {"S": "a"}), ("MODIFY", {"S": "a"}, {"S": "b"})]


def test_a_table_whose_writes_find_items_reads_first_again(streamed, arn, monkeypatch) -> None:
    """Six writes in a row that found their item bring the guess under one half: the next
    write of an existing item reads first, and one of a new item then does too."""
    setup = [_put(f"first-many-{n}", "a") for n in range(3)]
    steps = _steps(streamed, monkeypatch, [*setup, *(_put(f"first-many-{n % 3}", f"again {n}") for n in range(6)),
                                           _put("first-many-0", "last"), _put("first-many-new", "new")])
    assert steps[:3] == [["WriteIfUnchanged"]] * 3
    assert all(s[0] == "WriteIfUnchanged" for s in steps[3:9])  # tried empty, refused
    assert steps[9:] == [["Read", "WriteIfUnchanged"]] * 2
    assert [r["eventName"] for r in _records(streamed, arn, "first-many-0")] == ["INSERT", "MODIFY", "MODIFY",
                                                                                   "MODIFY"]
    assert [r["eventName"] for r in _records(streamed, arn, "first-many-new")] == ["INSERT"]


def test_a_put_only_if_new_is_refused_on_an_existing_item_with_no_record(streamed, arn, monkeypatch) -> None:
    only_new = {"ConditionExpression": "attribute_not_exists(pk)"}
    steps = _steps(streamed, monkeypatch, [_put("first-once", "a", **only_new), _put("first-once", "b", **only_new)])
    assert steps == [["WriteIfUnchanged"], "ConditionalCheckFailedException"]
    assert [r["eventName"] for r in _records(streamed, arn, "first-once")] == ["INSERT"]
    with pytest.raises(ClientError):
        streamed.client("dynamodb").put_item(TableName=TABLE, Item=_key("first-once"),
                                             ConditionExpression="attribute_not_exists(pk)")
