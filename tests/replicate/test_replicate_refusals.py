"""What replicate refuses (bad input: a clear error and what to do), what it dead-letters,
and the order it reads shards in, against DynamoDB Local and the Bigtable emulator."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from ddb2bigtable.replicate.lineage import shards_from
from ddb2bigtable.replicate.opening import start_point
from ddb2bigtable.replicate.run import run_replicate
from ddb2bigtable.replicate.stream import Stream
from ddb2bigtable.replicate.stream_records import Page
from ddb2bigtable.spec.errors import InputError

from .scenario import bigtable_rows, create, differences, export_and_load
from .test_replicate_emulator import credentials, movie


def refusal(scenario, dynamodb, **kw) -> str:
    with pytest.raises(InputError) as caught:
        run_replicate(scenario.table, scenario.replicate_options(dynamodb, **kw))
    return str(caught.value)


def test_a_table_without_a_stream_or_with_keys_only_is_refused(dynamodb, bigtable_emulator, tmp_path, monkeypatch):
    credentials(monkeypatch)
    now = start_point(datetime.now(UTC).isoformat())
    without = create(dynamodb, tmp_path / "a", stream=None)
    assert "has no stream enabled" in refusal(without, dynamodb, since_micros=now)
    keys_only = create(dynamodb, tmp_path / "b", stream="KEYS_ONLY")
    message = refusal(keys_only, dynamodb, since_micros=now)
    assert "KEYS_ONLY" in message and "NEW_AND_OLD_IMAGES" in message and "re-export" in message


def test_start_points_the_stream_cannot_reach_and_missing_start_points_are_refused(dynamodb, bigtable_emulator,
                                                                                  tmp_path, monkeypatch):
    credentials(monkeypatch)
    scenario = create(dynamodb, tmp_path)
    assert "load the export first" in refusal(scenario, dynamodb, since_micros=start_point("2020-01-01T00:00:00Z"))
    export = export_and_load(dynamodb, scenario, tmp_path)
    message = refusal(scenario, dynamodb, since_micros=start_point("2020-01-01T00:00:00Z"))
    assert "after the start point 2020-01-01T00:00:00Z" in message and "within 24 h" in message
    assert "give --since the export you loaded" in refusal(scenario, dynamodb)
    run_replicate(scenario.table, scenario.replicate_options(dynamodb, since_micros=start_point(str(export))))
    assert "rerun without --since" in refusal(scenario, dynamodb, since_micros=start_point(str(export)))
    for bad in ("2026-11-24T01:00:00", "no/such/export"):
        with pytest.raises(InputError):
            start_point(bad)


def test_a_record_that_cannot_become_a_row_is_dead_lettered_with_its_shard_and_sequence(dynamodb, bigtable_emulator,
                                                                                       tmp_path, monkeypatch):
    credentials(monkeypatch)
    scenario = create(dynamodb, tmp_path)
    db = dynamodb.client()
    db.put_item(TableName=scenario.dynamo_table, Item=movie(2001, "Fine"))
    export = export_and_load(dynamodb, scenario, tmp_path)
    db.put_item(TableName=scenario.dynamo_table, Item=movie(2001, "Bad") | {"info": {"S": "a string"}})
    db.put_item(TableName=scenario.dynamo_table, Item=movie(2001, "Also fine"))
    report = run_replicate(scenario.table, scenario.replicate_options(dynamodb, since_micros=start_point(str(export))))
    assert report.dead_letters == 1 and report.counts["insert"] == 2
    (letter,) = [json.loads(line) for line in open(report.dead_letter_file)]
    assert letter["shard"].startswith("shardId-") and letter["sequence_number"] and letter["event"] == "insert"
    assert letter["keys"]["title"] == {"S": "Bad"} and "declares it M" in letter["reason"]
    assert differences(dynamodb, scenario) == ["cannot be written: info is S in this item, but the spec declares it M"]


class RecordedStream:
    """A stream that split: DescribeStream's shards (children listed first) and each
    shard's GetRecords answers, as AWS gives them; remembers the order shards are read in."""

    def __init__(self, shards: list[dict], records: dict[str, list[dict]]):
        self._shards, self._records, self.read_order = shards_from(shards), records, []

    def stream(self, fetch_keys_only: bool = False) -> Stream:
        return Stream("arn:aws:dynamodb:us-west-2:000000000000:table/Movies/stream/recorded", None)

    def shards(self, arn: str):
        return self._shards

    def read(self, arn: str, shard, after: str | None):
        self.read_order.append(shard.id)
        records = [r for r in self._records[shard.id]
                   if after is None or int(r["dynamodb"]["SequenceNumber"]) > int(after)]
        for i, one in enumerate(records):  # a page per record: pages are read ahead of their writes
            yield Page([one], shard.id, ended=shard.closed and i == len(records) - 1)
        if not shard.closed or not records:
            yield Page([], shard.id, ended=shard.closed)


def change(kind: str, seq: int, rating: str | None, ttl: bool = False) -> dict:
    data = {"ApproximateCreationDateTime": datetime.now(UTC), "SequenceNumber": str(seq),
            "Keys": {"year": {"N": "2013"}, "title": {"S": "Rush"}}}
    if rating is not None:
        data["NewImage"] = movie(2013, "Rush") | {"info": {"M": {"rating": {"N": rating}}}}
    answer = {"eventName": kind, "dynamodb": data}
    if ttl:
        answer["userIdentity"] = {"Type": "Service", "PrincipalId": "dynamodb.amazonaws.com"}
    return answer


def test_a_child_shards_records_are_applied_after_its_parents(dynamodb, bigtable_emulator, tmp_path, monkeypatch):
    credentials(monkeypatch)
    scenario = create(dynamodb, tmp_path)
    export = export_and_load(dynamodb, scenario, tmp_path)  # an empty snapshot: the types the load recorded
    recorded = RecordedStream(
        [{"ShardId": "child", "ParentShardId": "parent", "SequenceNumberRange": {"StartingSequenceNumber": "20"}},
         {"ShardId": "parent", "SequenceNumberRange": {"StartingSequenceNumber": "1", "EndingSequenceNumber": "19"}}],
        {"parent": [change("INSERT", 1, "5"), change("MODIFY", 2, "6")],
         "child": [change("MODIFY", 20, "9")]})
    options = scenario.replicate_options(dynamodb, since_micros=start_point(str(export)))
    report = run_replicate(scenario.table, options, reader=recorded)
    assert recorded.read_order == ["parent", "child"] and report.counts["modify"] == 2
    (row,) = bigtable_rows(scenario)
    assert row[0]["info"] == {"M": {"rating": {"N": "9"}}}  # the child's image, not the parent's
    checkpoint = json.loads((scenario.work_dir / "replicate.json").read_text())
    assert checkpoint["finished"] == ["parent"] and checkpoint["after"] == {"parent": "2", "child": "20"}
    expired = RecordedStream([{"ShardId": "child", "SequenceNumberRange": {"StartingSequenceNumber": "20"}}],
                             {"child": [change("MODIFY", 20, "9"), change("REMOVE", 21, None, ttl=True)]})
    again = run_replicate(scenario.table, scenario.replicate_options(dynamodb), reader=expired)
    assert again.counts["ttl"] == 1 and again.applied == 1 and bigtable_rows(scenario) == []


def test_a_checkpoint_older_than_the_streams_retention_is_not_resumed(dynamodb, bigtable_emulator, tmp_path,
                                                                      monkeypatch):
    credentials(monkeypatch)
    scenario = create(dynamodb, tmp_path)
    export = export_and_load(dynamodb, scenario, tmp_path)
    run_replicate(scenario.table, scenario.replicate_options(dynamodb, since_micros=start_point(str(export))))
    path = scenario.work_dir / "replicate.json"
    saved = json.loads(path.read_text())
    path.write_text(json.dumps(saved | {"saved_micros": saved["saved_micros"] - 25 * 3600 * 1_000_000}))
    message = refusal(scenario, dynamodb)
    assert "cannot resume from this checkpoint: its last save (" in message and "more than 24 hours ago" in message


def test_writes_that_fail_past_retries_stop_the_run_before_their_checkpoint(dynamodb, bigtable_emulator, tmp_path,
                                                                           monkeypatch):
    """The emulator retries a write to a missing family until the deadline: a transient
    failure, waited out as an outage of Bigtable (outage.py) up to --outage-limit. The page
    is not checkpointed, so the rerun writes it again."""
    from ddb2bigtable.codec.mutations import RowMutation, SetCell
    from ddb2bigtable.load.writer import WriteSettings
    from ddb2bigtable.replicate import apply
    from ddb2bigtable.replicate.apply import Applied
    from ddb2bigtable.spec.errors import ServiceError

    credentials(monkeypatch)
    scenario = create(dynamodb, tmp_path)
    export = export_and_load(dynamodb, scenario, tmp_path)
    db = dynamodb.client()
    for title in ("One", "Two", "Three"):
        db.put_item(TableName=scenario.dynamo_table, Item=movie(2002, title))
    real = apply.record_rows  # what BigtableSink encodes with

    def broken(codec, record, **kw) -> Applied:
        applied = real(codec, record, **kw)
        if record.keys["title"] == {"S": "Two"}:
            return Applied(record, (RowMutation(b"two", (SetCell("no_such_family", b"q", b"v", 1000),)),))
        return applied

    monkeypatch.setattr(apply, "record_rows", broken)
    options = scenario.replicate_options(dynamodb, since_micros=start_point(str(export)),
                                         writer=WriteSettings(operation_timeout_seconds=1), outage_limit=1.5)
    with pytest.raises(ServiceError, match=r"Bigtable table movies in instance .* cannot be written: 1 row\(s\) "
                                           r"failed past the writer's retries .*rerun to resume"):
        run_replicate(scenario.table, options)
    assert json.loads((scenario.work_dir / "replicate.json").read_text())["after"] == {}
    monkeypatch.setattr(apply, "record_rows", real)
    report = run_replicate(scenario.table, scenario.replicate_options(dynamodb))
    assert report.counts["insert"] == 3 and differences(dynamodb, scenario) == []


def test_a_keys_only_stream_replicates_with_fetch_keys_only(dynamodb, bigtable_emulator, tmp_path, monkeypatch):
    credentials(monkeypatch)
    scenario = create(dynamodb, tmp_path, stream="KEYS_ONLY")
    db, name = dynamodb.client(), scenario.dynamo_table
    for i in range(6):
        db.put_item(TableName=name, Item=movie(2005, f"K{i}"))
    export = export_and_load(dynamodb, scenario, tmp_path)
    db.put_item(TableName=name, Item=movie(2006, "New") | {"extra": {"S": "x"}})
    db.update_item(TableName=name, Key={"year": {"N": "2005"}, "title": {"S": "K1"}}, UpdateExpression="SET n = :n",
                   ExpressionAttributeValues={":n": {"N": "1"}})
    db.update_item(TableName=name, Key={"year": {"N": "2005"}, "title": {"S": "K2"}}, UpdateExpression="SET n = :n",
                   ExpressionAttributeValues={":n": {"N": "2"}})
    db.delete_item(TableName=name, Key={"year": {"N": "2005"}, "title": {"S": "K2"}})  # its MODIFY finds it gone
    report = run_replicate(scenario.table, scenario.replicate_options(
        dynamodb, since_micros=start_point(str(export)), fetch_keys_only=True))
    assert report.dead_letters == 0 and report.counts["remove"] == 1 and differences(dynamodb, scenario) == []


def test_busy_shards_take_turns_so_none_starves(dynamodb, bigtable_emulator, tmp_path, monkeypatch):
    from ddb2bigtable.replicate import run

    credentials(monkeypatch)
    monkeypatch.setattr(run, "PAGES_PER_VISIT", 3)
    scenario = create(dynamodb, tmp_path)
    export = export_and_load(dynamodb, scenario, tmp_path)
    open_shards = [{"ShardId": name, "SequenceNumberRange": {"StartingSequenceNumber": "1"}} for name in ("a", "b")]
    recorded = RecordedStream(open_shards, {name: [change("INSERT" if i == 1 else "MODIFY", i, str(i))
                                                   for i in range(1, 8)] for name in ("a", "b")})
    report = run_replicate(scenario.table, scenario.replicate_options(dynamodb, since_micros=start_point(str(export))),
                           reader=recorded)
    assert recorded.read_order == ["a", "b", "a", "b", "a", "b"]  # 3 + 3 + 1 pages each, then caught up
    assert report.applied == 14 and report.stopped == "caught up"
    assert set(report.as_json()["lag_by_shard_seconds"]) == {"a", "b"}
