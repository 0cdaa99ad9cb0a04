"""`replicate` end to end: DynamoDB Local's stream applied to the Bigtable emulator after
the snapshot's load, compared item for item with DynamoDB."""

from __future__ import annotations

from ddb2bigtable.replicate.opening import start_point
from ddb2bigtable.replicate.run import run_replicate

from .scenario import create, differences, export_and_load, scan


def movie(year: int, title: str, **extra) -> dict:
    item = {"year": {"N": str(year)}, "title": {"S": title},
            "info": {"M": {"rating": {"N": "7.5"}, "genres": {"L": [{"S": "Drama"}]}}}}
    item |= extra
    return item


def test_writes_after_the_export_reach_bigtable_and_both_sides_are_equal(dynamodb, bigtable_emulator, tmp_path,
                                                                         monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "local")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "local")
    scenario = create(dynamodb, tmp_path)
    db = dynamodb.client()
    for i in range(20):
        db.put_item(TableName=scenario.dynamo_table, Item=movie(2000 + i % 4, f"Film {i}", tags={"SS": ["a", "b"]}))
    export = export_and_load(dynamodb, scenario, tmp_path)
    for i in range(20, 25):  # every type a stream record carries, binary ones as bytes
        db.put_item(TableName=scenario.dynamo_table, Item=movie(2010, f"Film {i}", tags={"SS": ["new"]},
                                                               poster={"B": bytes([0, i, 255])},
                                                               cuts={"BS": [b"\x01", bytes([i])]},
                                                               seen={"BOOL": True}, sequel={"NULL": True},
                                                               scores={"NS": ["1", "2.5"]},
                                                               crew={"L": [{"S": "a"}, {"N": "3"}]}))
    for i in range(5):  # a changed value and a removed attribute: the replaced row loses it
        db.update_item(TableName=scenario.dynamo_table, Key={"year": {"N": str(2000 + i % 4)}, "title": {"S": f"Film {i}"}},
                       UpdateExpression="SET info.rating = :r REMOVE tags", ExpressionAttributeValues={":r": {"N": "9"}})
    for i in range(5, 10):
        db.delete_item(TableName=scenario.dynamo_table, Key={"year": {"N": str(2000 + i % 4)}, "title": {"S": f"Film {i}"}})
    db.update_item(TableName=scenario.dynamo_table, Key={"year": {"N": "2010"}, "title": {"S": "Film 20"}},
                   UpdateExpression="SET tags = :t", ExpressionAttributeValues={":t": {"SS": ["again"]}})
    assert differences(dynamodb, scenario)  # Bigtable is the snapshot until replicated

    report = run_replicate(scenario.table, scenario.replicate_options(dynamodb, since_micros=start_point(str(export))))
    assert differences(dynamodb, scenario) == []
    # The 20 puts before the export are within a minute of it: replayed (harmless), not skipped.
    assert report.counts == {"insert": 25, "modify": 6, "remove": 5, "ttl": 0}
    assert report.dead_letters == 0 and report.stopped == "caught up" and report.lag_seconds is not None


def credentials(monkeypatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "local")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "local")


def test_replaying_from_the_start_gives_the_same_table_and_a_resume_applies_nothing(dynamodb, bigtable_emulator,
                                                                                   tmp_path, monkeypatch):
    credentials(monkeypatch)
    scenario = create(dynamodb, tmp_path)
    db = dynamodb.client()
    for i in range(10):
        db.put_item(TableName=scenario.dynamo_table, Item=movie(1990, f"Old {i}"))
    export = export_and_load(dynamodb, scenario, tmp_path)
    for i in range(10):
        db.update_item(TableName=scenario.dynamo_table, Key={"year": {"N": "1990"}, "title": {"S": f"Old {i}"}},
                       UpdateExpression="SET seen = :s", ExpressionAttributeValues={":s": {"N": str(i)}})
    db.delete_item(TableName=scenario.dynamo_table, Key={"year": {"N": "1990"}, "title": {"S": "Old 3"}})
    since = start_point(str(export))
    first = run_replicate(scenario.table, scenario.replicate_options(dynamodb, since_micros=since))
    assert differences(dynamodb, scenario) == []
    resumed = run_replicate(scenario.table, scenario.replicate_options(dynamodb))
    assert resumed.resumed and resumed.applied == 0 and differences(dynamodb, scenario) == []
    (scenario.work_dir / "replicate.json").unlink()  # from the start again: every record twice
    again = run_replicate(scenario.table, scenario.replicate_options(dynamodb, since_micros=since))
    assert again.counts == first.counts and differences(dynamodb, scenario) == []
    assert oct((scenario.work_dir / "replicate.json").stat().st_mode & 0o777) == "0o600"


def test_a_ttl_table_deletes_items_whose_ttl_passed_and_keeps_the_expiry_as_cell_time(dynamodb, bigtable_emulator,
                                                                                     tmp_path, monkeypatch):
    import time

    from .scenario import bigtable_rows

    credentials(monkeypatch)
    scenario = create(dynamodb, tmp_path, ttl="expiresAt")
    db = dynamodb.client()
    soon, past = int(time.time()) + 3600, int(time.time()) - 60
    for i in range(6):
        db.put_item(TableName=scenario.dynamo_table, Item=movie(2020, f"Short {i}", expiresAt={"N": str(soon)}))
    export = export_and_load(dynamodb, scenario, tmp_path)
    for i in range(3):  # expired in DynamoDB's eyes: its TTL sweep would delete them
        db.update_item(TableName=scenario.dynamo_table, Key={"year": {"N": "2020"}, "title": {"S": f"Short {i}"}},
                       UpdateExpression="SET expiresAt = :e", ExpressionAttributeValues={":e": {"N": str(past)}})
    db.put_item(TableName=scenario.dynamo_table, Item=movie(2020, "Later", expiresAt={"N": str(soon + 60)}))
    assert differences(dynamodb, scenario)
    report = run_replicate(scenario.table, scenario.replicate_options(dynamodb, since_micros=start_point(str(export))))
    assert differences(dynamodb, scenario) == [] and report.dead_letters == 0
    assert len([r for r in bigtable_rows(scenario) if r]) == 4  # 3 of 6 expired, one more put


def test_the_video_designs_comments_stay_timestamped_cells_through_replication(dynamodb, bigtable_emulator,
                                                                            tmp_path, monkeypatch):
    from ddb2bigtable.exports.manifests import open_export
    from ddb2bigtable.exports.reader import read_records

    from ..conftest import ROOT

    credentials(monkeypatch)
    scenario = create(dynamodb, tmp_path, "video-single-table.yaml")
    db, name = dynamodb.client(), scenario.dynamo_table
    seed = open_export(str(ROOT / "exports/videos"))
    for item in (r.item for f in seed.files for r in read_records(seed, f)):
        db.put_item(TableName=name, Item=item)
    export = export_and_load(dynamodb, scenario, tmp_path)
    comments = [i for i in scan(dynamodb, name) if i["SK"]["S"].startswith("VideoComment#")]
    db.put_item(TableName=name, Item={"VideoId": {"S": "0123"}, "SK": {"S": "VideoComment#11111111"},
                                      "Content": {"S": "New here"}, "PostedAt": {"S": "2024-01-02T03:04:05"}})
    db.update_item(TableName=name, Key={k: comments[0][k] for k in ("VideoId", "SK")},
                   UpdateExpression="SET Content = :c", ExpressionAttributeValues={":c": {"S": "edited"}})
    db.delete_item(TableName=name, Key={k: comments[1][k] for k in ("VideoId", "SK")})
    db.update_item(TableName=name, Key={"VideoId": {"S": "0123"}, "SK": {"S": "VideoStatsLikes"}},
                   UpdateExpression="ADD #c :one", ExpressionAttributeNames={"#c": "Count"},
                   ExpressionAttributeValues={":one": {"N": "1"}})
    assert differences(dynamodb, scenario)  # a comment added, one edited, one deleted, a like
    report = run_replicate(scenario.table, scenario.replicate_options(dynamodb, since_micros=start_point(str(export))))
    assert report.dead_letters == 0 and differences(dynamodb, scenario) == []


def test_a_write_in_the_exports_own_minute_replicated_passes_verify(dynamodb, bigtable_emulator, tmp_path,
                                                                    monkeypatch):
    """Issue #53: DynamoDB Local dates stream records to the minute, and replicate stamped a
    record dated before the export at the export's very time, so a write made after the
    export in its own minute read as the load's: verify (and re-running `up`) failed. The
    record is stamped a millisecond after the start point now: a later write."""
    import time as clock

    from ddb2bigtable.load.verify import run_verify

    from .scenario import PROJECT

    credentials(monkeypatch)
    scenario = create(dynamodb, tmp_path)
    db = dynamodb.client()
    for i in range(5):
        db.put_item(TableName=scenario.dynamo_table, Item=movie(2001, f"Film {i}"))
    if clock.time() % 60 > 40:  # export and writes in one minute, so the records are dated before the export
        clock.sleep(61 - clock.time() % 60)
    export = export_and_load(dynamodb, scenario, tmp_path)
    db.put_item(TableName=scenario.dynamo_table, Item=movie(2001, "Film new"))
    db.update_item(TableName=scenario.dynamo_table, Key={"year": {"N": "2001"}, "title": {"S": "Film 0"}},
                   UpdateExpression="SET info.rating = :r", ExpressionAttributeValues={":r": {"N": "9"}})
    run_replicate(scenario.table, scenario.replicate_options(dynamodb, since_micros=start_point(str(export))))
    assert differences(dynamodb, scenario) == []
    report = run_verify(scenario.table, str(export), project=PROJECT, instance_id=scenario.instance_id,
                        work_dir=scenario.work_dir)
    assert report.ok, report.reasons
    assert (report.changed_after, report.added_after, report.not_in_export) == (1, 1, 0)
