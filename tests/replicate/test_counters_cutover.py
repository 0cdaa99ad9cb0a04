"""`cutover check` reads a counter family's sum back as the item's N (#35): the video design's
Likes/Views items in DynamoDB Local, loaded into the emulator's int64 Sum family, then
incremented on both sides as an application does during dual writes (DynamoDB's `ADD`,
Bigtable's AddToCell through the codec's `counter_add`)."""

from __future__ import annotations

from ddb2bigtable.replicate.cutover import CutoverOptions, run_cutover_check

from .scenario import PROJECT, _codec, create, export_and_load
from .test_cutover import plant

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
    plant(scenario, [codec.counter_add(LIKES, "Count", 5, now_micros=0), codec.counter_add(LIKES, "Count", 2,
                                                                                            now_micros=0)])
    options = CutoverOptions(project=PROJECT, instance_id=scenario.instance_id, app_profile_id="migration-load",
                             work_dir=scenario.work_dir, sample=10, segments=1, endpoint_url=dynamodb.endpoint)
    report = run_cutover_check(scenario.table, options)
    assert (report.checked, report.matches, report.mismatches, report.missing) == (2, 2, [], [])

    plant(scenario, [codec.counter_add(VIEWS, "Count", 1, now_micros=0)])  # an increment DynamoDB never saw
    report = run_cutover_check(scenario.table, options)
    assert report.matches == 1 and len(report.mismatches) == 1
    (mismatch,) = report.mismatches  # (row 0123 holds both items: the other one's SK is named too)
    assert mismatch["key"] == VIEWS and "Count" in mismatch["attributes"] and not report.ready
