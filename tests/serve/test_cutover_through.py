"""`cutover check --through URL`: the sample read back through `serve` as the application
will read it after switching its endpoint_url. The live table is DynamoDB Local holding
the Movies export; Bigtable holds it too, loaded by `up`; serve runs on it. A serve that decodes the same cells into other items (here: one started while the table's
record of its types said the `info` map is a string) is not ready, and the items it gets
wrong are named. (A work folder of another load can no longer do that: serve refuses to
start on it, tests/serve/tables/test_types_record.py.)"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from google.cloud.bigtable.data import BigtableDataClientAsync, mutations

from ddb2bigtable.bigtable.emulator import stop_process
from ddb2bigtable.exports.manifests import open_export
from ddb2bigtable.exports.reader import read_records
from ddb2bigtable.load.local_stage import WORK_DIR
from ddb2bigtable.plan.model import TYPES_TABLE

from ..conftest import ROOT
from ..replicate.conftest import dynamodb  # noqa: F401  (the session's DynamoDB Local)
from ..replicate.test_replicate_cli import environment
from .conftest import STAGE, start_serve


@pytest.fixture(scope="module")
def live(dynamodb, served):  # noqa: F811
    """The live Movies table in DynamoDB Local: the export's items."""
    manifest = open_export(str(ROOT / "exports" / "movies"))
    items = [r.item for f in manifest.files for r in read_records(manifest, f) if r.item is not None]
    client = dynamodb.client()
    client.create_table(TableName="Movies", BillingMode="PAY_PER_REQUEST",
                        AttributeDefinitions=[{"AttributeName": "year", "AttributeType": "N"},
                                              {"AttributeName": "title", "AttributeType": "S"}],
                        KeySchema=[{"AttributeName": "year", "KeyType": "HASH"},
                                   {"AttributeName": "title", "KeyType": "RANGE"}])
    for i in range(0, len(items), 25):
        client.batch_write_item(RequestItems={"Movies": [{"PutRequest": {"Item": item}} for item in items[i:i + 25]]})
    yield dynamodb
    client.delete_table(TableName="Movies")


def check(root: Path, dynamodb, through: str, *extra: str) -> subprocess.CompletedProcess:  # noqa: F811
    return subprocess.run([sys.executable, "-m", "ddb2bigtable", "cutover", "check", str(root / "specs" / "movies.yaml"),
                           "--table", "movies", "--stage", STAGE, "--root", str(root), "--sample", "120",
                           "--endpoint-url", dynamodb.endpoint, "--through", through, *extra],
                          capture_output=True, text=True, env=environment(), timeout=300)


def test_the_sample_read_through_serve_equals_dynamodb(live, served):
    out = check(served.root, live, served.endpoint, "--format", "json")
    report = json.loads(out.stdout)
    # replicate never ran here, so the verdict is "not ready" for the lag alone
    assert report["reasons"] == ["replication lag unknown: replicate has not run"], out.stdout + out.stderr
    assert report["checked"] == report["matches"] == report["through_checked"] >= 100
    assert report["differ_through_serve"] == [] and report["through"] == served.endpoint


def _table_record_says(instance_id: str, attribute: str, kind: str | None) -> None:
    """An older cell (the oldest is the type) in the Movies table's record of types saying
    `kind`, or, with None, that cell deleted again."""
    async def go():
        async with BigtableDataClientAsync(project="test-project") as client:
            table = client.get_table(instance_id, TYPES_TABLE.id)
            change = (mutations.SetCell("a", attribute.encode(), kind.encode(), 1000) if kind is not None else
                      mutations.DeleteRangeFromColumn("a", attribute.encode(), 1000, 2000))
            await table.mutate_row(b"movies", change)
    asyncio.run(go())


def test_a_serve_that_decodes_otherwise_is_not_ready_and_names_the_items(live, served, tmp_path):
    root = tmp_path / "other-types"  # the same stage and specs, no work folder: the table's record alone
    shutil.copytree(served.root, root, ignore=shutil.ignore_patterns("serve.log", WORK_DIR))
    spec = root / "specs" / "movies.yaml"  # a declaration of info would contradict the record: serve would refuse
    spec.write_text(re.sub(r"attributes:\n *- \{name: info, type: M\}[^\n]*", "attributes: []", spec.read_text(), count=1))
    instance_id = next((served.root / WORK_DIR).glob("*/*/movies/state.json")).parent.parent.name
    _table_record_says(instance_id, "info", "S")  # a record another writer got wrong, as a serve reads it
    try:
        process, endpoint = start_serve(root, STAGE)
    finally:
        _table_record_says(instance_id, "info", None)
    try:
        text = check(served.root, live, endpoint)
        as_json = json.loads(check(served.root, live, endpoint, "--format", "json").stdout)
    finally:
        stop_process(process)
    assert text.returncode == 1 and "Traceback" not in text.stderr, text.stdout + text.stderr
    differ = as_json["differ_through_serve"]
    assert differ and {d["detail"] for d in differ} == {"attributes differ: info"}
    assert "item(s) differ through serve" in "; ".join(as_json["reasons"])
    assert as_json["matches"] == as_json["through_checked"] and as_json["mismatches"] == []  # Bigtable itself is right
    named = [line for line in text.stdout.splitlines() if line.startswith("  differs through serve: year=")]
    assert named and all(line.endswith(": attributes differ: info") for line in named)  # each a sampled movie
    assert f"through serve ({endpoint}): 120 read, 120 differ" in text.stdout


def test_an_empty_or_bad_through_is_bad_input(live, served):
    for bad in ("", "127.0.0.1:8000"):
        out = check(served.root, live, bad)
        assert out.returncode == 2 and "--through" in out.stderr and "Traceback" not in out.stderr, out.stderr
