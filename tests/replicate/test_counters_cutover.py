"""Counters between DynamoDB Local and the emulator (#35): the video design's Likes/Views
items loaded into the int64 Sum family; `cutover check` reads the sum back as the item's N
(incremented on both sides as an application does during dual writes: DynamoDB's `ADD`,
Bigtable's AddToCell through the codec's `counter_add`), and `replicate` sets the number a
stream record carries, the same after a replay."""

from __future__ import annotations

from ddb2bigtable.codec.app_writes import counter_add
from ddb2bigtable.replicate.cutover import CutoverOptions, run_cutover_check

from .scenario import PROJECT, _codec, bigtable_rows, create, differences, export_and_load
from .test_cutover import plant
from .test_replicate_cli import replicate

LIKES = {"VideoId": {"S": "0123"}, "SK": {"S": "VideoStatsLikes"}}
VIEWS = {"VideoId": {"S": "0123"}, "SK": {"S": "VideoStatsViews"}}


def test_cutover_check_compares_the_summed_counter_with_dynamodbs_number(dynamodb, bigtable_emulator, tmp_path,
                                                                          monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "local")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "local")
    scenario = create(dynamodb, tmp_path, "video-single-table.yaml")
    client = dynamodb.client()
    for keys, count in ((LIKES, "3"), (VIEWS, "156")):
        client.put_item(TableName=scenario.dynamo_table, Item={**keys, "Count": {"N": count}})
    export_and_load(dynamodb, scenario, tmp_path)
    codec = _codec(scenario)

    def add_in_dynamodb(keys: dict, amount: int) -> None:
        client.update_item(TableName=scenario.dynamo_table, Key=keys, UpdateExpression="ADD #c :n",
                           ExpressionAttributeNames={"#c": "Count"},
                           ExpressionAttributeValues={":n": {"N": str(amount)}})

    add_in_dynamodb(LIKES, 5)  # dual writes: the same increments on both sides
    add_in_dynamodb(LIKES, 2)
    plant(scenario, [counter_add(codec, LIKES, "Count", 5, now_micros=0),
                     counter_add(codec, LIKES, "Count", 2, now_micros=0)])
    options = CutoverOptions(project=PROJECT, instance_id=scenario.instance_id, app_profile_id="migration-load",
                             work_dir=scenario.work_dir, sample=10, segments=1, endpoint_url=dynamodb.endpoint)
    report = run_cutover_check(scenario.table, options)
    assert (report.checked, report.matches, report.mismatches, report.missing) == (2, 2, [], [])

    plant(scenario, [counter_add(codec, VIEWS, "Count", 1, now_micros=0)])  # an increment DynamoDB never saw
    report = run_cutover_check(scenario.table, options)
    assert report.matches == 1 and len(report.mismatches) == 1
    (mismatch,) = report.mismatches  # (row 0123 holds both items: the other one's SK is named too)
    assert mismatch["key"] == VIEWS and "Count" in mismatch["attributes"] and not report.ready


def test_replicate_sets_the_counter_from_the_stream_and_a_replay_leaves_it(dynamodb, bigtable_emulator, tmp_path):
    """DynamoDB's ADD after the export reaches Bigtable as the item's new number (set: the
    loaded 3 is not added to), and replaying the stream from the export again changes nothing."""
    scenario = create(dynamodb, tmp_path, "video-single-table.yaml")
    client = dynamodb.client()
    for keys, count in ((LIKES, "3"), (VIEWS, "156")):
        client.put_item(TableName=scenario.dynamo_table, Item={**keys, "Count": {"N": count}})
    export = export_and_load(dynamodb, scenario, tmp_path)
    for amount in (5, 2):
        client.update_item(TableName=scenario.dynamo_table, Key=LIKES, UpdateExpression="ADD #c :n",
                           ExpressionAttributeNames={"#c": "Count"},
                           ExpressionAttributeValues={":n": {"N": str(amount)}})
    for run in range(2):  # the second run replays every record from the export's time
        if run:
            for checkpoint in scenario.work_dir.glob("replicate*.json"):  # what replicate says to do
                checkpoint.unlink()
        out = replicate(scenario, dynamodb, "--since", str(export), "--until-caught-up")
        assert out.returncode == 0, out.stderr
        assert differences(dynamodb, scenario) == []
        counts = {i["SK"]["S"]: i["Count"]["N"] for row in bigtable_rows(scenario) for i in row}
        assert counts == {"VideoStatsLikes": "10", "VideoStatsViews": "156"}
