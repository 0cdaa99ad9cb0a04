"""Shard lineage and the start point, with DescribeStream-shaped answers as AWS gives
them (DynamoDB Local never splits a shard), and stream records as boto3 parses them."""

from __future__ import annotations

from datetime import UTC, datetime

from ddb2bigtable.replicate.lineage import (
    RETENTION_MICROS,
    START_MARGIN_MICROS,
    before_start,
    ready_shards,
    shards_from,
    unreachable_start,
)
from ddb2bigtable.replicate.stream_records import parse_record

# A stream whose first shard closed and split in two, one child of which split again;
# DescribeStream lists shards in no promised order (here children before their parents).
SPLIT = [
    {"ShardId": "shardId-3", "ParentShardId": "shardId-1",
     "SequenceNumberRange": {"StartingSequenceNumber": "300"}},
    {"ShardId": "shardId-2", "ParentShardId": "shardId-1",
     "SequenceNumberRange": {"StartingSequenceNumber": "200", "EndingSequenceNumber": "299"}},
    {"ShardId": "shardId-4", "ParentShardId": "shardId-2",
     "SequenceNumberRange": {"StartingSequenceNumber": "400"}},
    {"ShardId": "shardId-1",
     "SequenceNumberRange": {"StartingSequenceNumber": "100", "EndingSequenceNumber": "199"}},
]


def test_a_child_waits_for_its_parent_and_a_trimmed_parent_frees_it():
    shards = shards_from(SPLIT)
    assert [(s.id, s.parent, s.closed) for s in shards][1] == ("shardId-2", "shardId-1", True)
    assert [s.id for s in ready_shards(shards, set())] == ["shardId-1"]
    assert [s.id for s in ready_shards(shards, {"shardId-1"})] == ["shardId-3", "shardId-2"]
    assert [s.id for s in ready_shards(shards, {"shardId-1", "shardId-2"})] == ["shardId-3", "shardId-4"]
    trimmed = shards_from(SPLIT[:3])  # shardId-1 is past the 24 h retention: no longer listed
    assert [s.id for s in ready_shards(trimmed, set())] == ["shardId-3", "shardId-2"]


def test_reading_in_passes_visits_every_shard_after_its_parent():
    shards, finished, order = shards_from(SPLIT), set(), []
    while ready := ready_shards(shards, finished):
        for shard in ready:
            order.append(shard.id)
            finished.add(shard.id)  # open shards too, for this walk through the tree
    assert order.index("shardId-1") < order.index("shardId-2") < order.index("shardId-4")
    assert order.index("shardId-1") < order.index("shardId-3") and sorted(order) == sorted(s.id for s in shards)


def test_a_start_point_the_stream_cannot_reach_is_refused_with_what_to_do():
    now = 1_800_000_000_000_000
    assert unreachable_start(now - 3600_000_000, now - 7200_000_000, now) is None
    before_stream = unreachable_start(now - 7200_000_000, now - 3600_000_000, now)
    assert "enabled" in before_stream and "re-export" in before_stream and "within 24 h" in before_stream
    too_old = unreachable_start(now - RETENTION_MICROS - 1, None, now)
    assert "more than 24 hours ago" in too_old and "re-export" in too_old


def test_records_a_little_before_the_start_point_are_applied_because_their_time_is_rounded_down():
    start = 1_800_000_000_000_000
    assert not before_start(start - START_MARGIN_MICROS, start)
    assert before_start(start - START_MARGIN_MICROS - 1, start)


def test_a_ttl_expiry_is_a_remove_by_the_dynamodb_service():
    raw = {"eventName": "REMOVE", "userIdentity": {"Type": "Service", "PrincipalId": "dynamodb.amazonaws.com"},
           "dynamodb": {"ApproximateCreationDateTime": datetime(2027, 1, 1, tzinfo=UTC), "SequenceNumber": "7",
                        "Keys": {"id": {"S": "a"}}, "OldImage": {"id": {"S": "a"}, "ttl": {"N": "1"}}}}
    record = parse_record("shardId-1", raw)
    assert (record.kind, record.sequence, record.old_image["ttl"]) == ("ttl", "7", {"N": "1"})
    assert record.micros == int(datetime(2027, 1, 1, tzinfo=UTC).timestamp()) * 1_000_000
    user_delete = parse_record("shardId-1", {k: v for k, v in raw.items() if k != "userIdentity"})
    assert user_delete.kind == "remove"
