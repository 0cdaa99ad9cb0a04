"""`replicate --reverse`, the way back after the write switch: a stream of Bigtable's
writes applied to the source DynamoDB table.

serve's DynamoDB Streams API is not on main yet (issue 52, point 1), so a table in
DynamoDB Local stands in for serve's stream here: the application's writes go to that
stand-in table (as they would go through serve), and its DynamoDB Local stream is what
reverse replication reads, with the same reader it will read serve's with. The target is
a table in DynamoDB Local, the source table of the migration. What is tested is the
reverse direction's own part: whole images written in stream order, replays converging,
checkpoints kept apart from forward's and resumed, items DynamoDB refuses as dead
letters (0600), and forward and reverse never writing at once.
"""

from __future__ import annotations

import json
import stat
import threading
import time
from datetime import UTC, datetime, timedelta

import pytest
import yaml

from ddb2bigtable.load.work_folder import LOCK, locked
from ddb2bigtable.replicate.opening import opening_checkpoint
from ddb2bigtable.replicate.reverse.run import reverse_table
from ddb2bigtable.replicate.run import ReplicateOptions
from ddb2bigtable.replicate.shares import REVERSE, Share
from ddb2bigtable.replicate.stream import StreamReader
from ddb2bigtable.spec.errors import InputError
from ddb2bigtable.spec.reading import read_spec

from ..conftest import ROOT
from .scenario import scan
from .test_replicate_emulator import movie

_count = iter(range(10_000))


def movies_spec(tmp_path, name: str):
    document = yaml.safe_load((ROOT / "specs" / "movies.yaml").read_text())
    document["tables"][0]["source"]["table"] = name
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return read_spec(path).tables[0]


def make_table(client, name: str, stream: bool, rank_index: bool = False) -> None:
    extra = {"StreamSpecification": {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}} if stream else {}
    definitions = [{"AttributeName": "year", "AttributeType": "N"}, {"AttributeName": "title", "AttributeType": "S"}]
    if rank_index:  # an index keyed on a number: DynamoDB refuses an item whose rank is a string
        definitions.append({"AttributeName": "rank", "AttributeType": "N"})
        extra["GlobalSecondaryIndexes"] = [{"IndexName": "by-rank", "Projection": {"ProjectionType": "KEYS_ONLY"},
                                            "KeySchema": [{"AttributeName": "rank", "KeyType": "HASH"}]}]
    client.create_table(TableName=name, BillingMode="PAY_PER_REQUEST", AttributeDefinitions=definitions,
                        KeySchema=[{"AttributeName": "year", "KeyType": "HASH"},
                                   {"AttributeName": "title", "KeyType": "RANGE"}], **extra)


@pytest.fixture
def pair(dynamodb, tmp_path, monkeypatch):
    """(spec table, stand-in for serve's stream, options): the target table is the spec's
    source table; the stand-in is another table of the same DynamoDB Local."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "local")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "local")
    n = next(_count)
    target, standin = f"Movies-back-{n}", f"Movies-served-{n}"
    client = dynamodb.client()
    make_table(client, target, stream=False, rank_index=True)
    make_table(client, standin, stream=True)
    table = movies_spec(tmp_path, target)
    time.sleep(0.01)  # the start point after the stand-in's stream was enabled
    options = ReplicateOptions(project="local-project", instance_id="movies", app_profile_id=None,
                               work_dir=tmp_path / "work", endpoint_url=dynamodb.endpoint,
                               since_micros=time.time_ns() // 1000)
    return table, standin, options


def served_writes(client, table: str, first: int, count: int) -> None:
    """What an application writes through serve: puts, updates of every second item, a
    delete of every fifth, one item put three times."""
    for i in range(first, first + count):
        key = {"year": {"N": "2001"}, "title": {"S": f"Back {i}"}}
        client.put_item(TableName=table, Item=movie(2001, f"Back {i}", rank={"N": str(i)}))
        if i % 2:
            client.update_item(TableName=table, Key=key, UpdateExpression="SET n = :n",
                               ExpressionAttributeValues={":n": {"N": str(i)}})
        if i % 5 == 0:
            client.delete_item(TableName=table, Key=key)
    for version in range(3):
        client.put_item(TableName=table, Item=movie(2002, "Thrice", v={"N": str(version)}))


def by_key(items):
    return {(i["year"]["N"], i["title"]["S"]): i for i in items}


def reverse(table, standin, options, dynamodb, **kw):
    stream = StreamReader(standin, table.source.region, dynamodb.endpoint)
    import asyncio

    return asyncio.run(reverse_table(table, options.__class__(**{**options.__dict__, **kw}), stream=stream))


def test_reverse_writes_every_served_write_into_dynamodb_and_resumes(dynamodb, pair):
    table, standin, options = pair
    client = dynamodb.client()
    served_writes(client, standin, 0, 40)
    report = reverse(table, standin, options, dynamodb)
    assert report.stopped == "caught up" and report.dead_letters == 0
    assert (report.counts["insert"], report.counts["modify"], report.counts["remove"]) == (41, 22, 8)
    assert by_key(scan(dynamodb, table.source.table)) == by_key(scan(dynamodb, standin))
    work = options.work_dir
    assert (work / "replicate-reverse.json").is_file() and not (work / "replicate.json").exists()
    served_writes(client, standin, 40, 20)  # more writes through serve: the rerun resumes from the checkpoint
    again = reverse(table, standin, options, dynamodb, since_micros=None)
    assert again.resumed and again.applied == 20 + 10 + 4 + 3
    assert by_key(scan(dynamodb, table.source.table)) == by_key(scan(dynamodb, standin))


def test_a_replay_from_the_start_converges(dynamodb, pair):
    table, standin, options = pair
    client = dynamodb.client()
    served_writes(client, standin, 0, 30)
    reverse(table, standin, options, dynamodb)
    (options.work_dir / "replicate-reverse.json").unlink()
    client.put_item(TableName=table.source.table, Item=movie(2001, "Back 3", n={"N": "-1"}))  # changed meanwhile
    reverse(table, standin, options, dynamodb)  # the whole stream again, from the same start point
    assert by_key(scan(dynamodb, table.source.table)) == by_key(scan(dynamodb, standin))


def test_binary_values_and_every_type_reach_dynamodb_as_written(dynamodb, pair):
    """Reverse writes its BatchWriteItem bodies itself (replicate/aws_clients.py), binary
    values in base64 as DynamoDB's JSON protocol carries them: every type, nested, arrives
    as the stream's image holds it."""
    table, standin, options = pair
    client = dynamodb.client()
    every = {"blob": {"B": b"\x00\xffraw"}, "blobs": {"BS": [b"\x01", b"\x02\x03"]}, "flag": {"BOOL": True},
             "none": {"NULL": True}, "numbers": {"NS": ["1", "2.5"]}, "names": {"SS": ["a", "\u00e9t\u00e9"]},
             "nested": {"M": {"inner": {"L": [{"B": b"\x10"}, {"M": {"deep": {"BS": [b"\x20"]}}}, {"N": "-0.5"}]}}}}
    for i in range(30):  # more than one BatchWriteItem call
        client.put_item(TableName=standin, Item=movie(2004, f"Typed {i}", **every))
    report = reverse(table, standin, options, dynamodb)
    assert report.dead_letters == 0 and report.applied == 30
    held = by_key(scan(dynamodb, table.source.table))
    assert held == by_key(scan(dynamodb, standin)) and held[("2004", "Typed 7")]["blob"] == {"B": b"\x00\xffraw"}


def test_an_item_dynamodb_refuses_is_a_dead_letter_for_its_owner_only(dynamodb, pair):
    table, standin, options = pair
    client = dynamodb.client()
    served_writes(client, standin, 0, 10)
    # written one by one with the refused item (botocore's serializer): binary values as they were
    client.put_item(TableName=standin, Item=movie(2003, "Blob", blob={"B": b"\x00\xff"}, blobs={"BS": [b"\x01"]}))
    client.put_item(TableName=standin, Item=movie(2003, "Bad rank", rank={"S": "first"}))  # the index wants N
    report = reverse(table, standin, options, dynamodb)
    assert report.dead_letters == 1
    path = options.work_dir / "replicate-reverse-dead-letters.jsonl"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    (letter,) = [json.loads(line) for line in path.read_text().splitlines()]
    assert letter["keys"] == {"year": {"N": "2003"}, "title": {"S": "Bad rank"}}
    assert letter["event"] == "insert" and letter["sequence_number"] and letter["shard"]
    assert "ValidationException" in letter["reason"]
    held = by_key(scan(dynamodb, table.source.table))
    assert ("2003", "Bad rank") not in held
    assert held == {k: v for k, v in by_key(scan(dynamodb, standin)).items() if k != ("2003", "Bad rank")}


def test_reverse_holds_its_writes_while_forward_replication_runs(dynamodb, pair):
    table, standin, options = pair
    client = dynamodb.client()
    served_writes(client, standin, 0, 5)
    stop, reports = threading.Event(), []
    forward = locked(options.work_dir, LOCK, "replicate --shards 0/1")
    forward.__enter__()
    try:
        runner = threading.Thread(target=lambda: reports.append(
            reverse(table, standin, options, dynamodb, follow=True, stop=stop)))
        runner.start()
        time.sleep(3)
        assert scan(dynamodb, table.source.table) == []  # nothing written while forward runs
    finally:
        forward.__exit__(None, None, None)
    deadline = time.monotonic() + 30
    while len(scan(dynamodb, table.source.table)) < 5 and time.monotonic() < deadline:
        time.sleep(0.2)
    stop.set()
    runner.join(30)
    assert by_key(scan(dynamodb, table.source.table)) == by_key(scan(dynamodb, standin))
    assert reports[0].held is None


def test_forward_refuses_to_start_while_reverse_runs(tmp_path):
    work = tmp_path / "work"
    with locked(work, Share(prefix=REVERSE).lock_name, "replicate --reverse --shards 0/1"):
        with pytest.raises(InputError, match="reverse replication .* is writing Bigtable's changes into DynamoDB"):
            opening_checkpoint(1, Share(), work / "replicate.json", "arn", {}, None)
        # the reverse direction itself opens its checkpoint
        since = int((datetime.now(UTC) - timedelta(minutes=1)).timestamp() * 1_000_000)
        assert opening_checkpoint(since, Share(prefix=REVERSE), work / "replicate-reverse.json", "arn", {},
                                  None).start_micros == since


def test_reverse_names_apart_from_forward():
    assert Share(prefix=REVERSE).checkpoint_name == "replicate-reverse.json"
    assert Share(1, 3, REVERSE).checkpoint_name == "replicate-reverse-1-of-3.json"
    assert Share(1, 3, REVERSE).dead_letter_name == "replicate-reverse-dead-letters-1-of-3.jsonl"
    assert Share(prefix=REVERSE).lock_name == "replicate-reverse-0-of-1.lock" != Share().lock_name


def test_a_start_before_serves_stream_existed_is_refused_with_what_to_do(dynamodb, pair):
    table, standin, options = pair
    with pytest.raises(InputError, match="after the start point .* serve makes a table's stream when it first "
                                         "serves the table, and keeps 24 hours of it: give --since a time after"):
        reverse(table, standin, options, dynamodb, since_micros=options.since_micros - 3_600_000_000)
    assert not (options.work_dir / "replicate-reverse.json").exists()


def test_a_served_table_without_a_stream_is_refused_with_the_specs_field_not_a_reexport(dynamodb, pair):
    """A spec table's stream on serve is its spec's `stream:`, so that is what reverse
    replication's refusal names (it gave forward's advice: enable a stream, re-export)."""
    table, _, options = pair  # serve's side here: the spec's own table name at DynamoDB Local, made without a stream
    import asyncio

    with pytest.raises(InputError) as refused:
        asyncio.run(reverse_table(table, options.__class__(**{**options.__dict__,
                                                             "stream_endpoint_url": dynamodb.endpoint})))
    message = str(refused.value)
    assert f"serve's stream of table {table.source.table}" in message and "has no stream enabled" in message
    assert "`stream: new_and_old_images`" in message and "re-export" not in message
    assert not (options.work_dir / "replicate-reverse.json").exists()
