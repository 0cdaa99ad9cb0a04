"""StreamReader against recorded DynamoDB Streams answers (botocore's Stubber: the real
client, its parsing and its errors, no server): paging, empty stretches of a closed
shard, an expired iterator, the AWS errors that are bad input, and DynamoDB out of reach
past the retries (a service failure, not bad input)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from botocore.exceptions import ClientError, ConnectionClosedError, EndpointConnectionError, NoRegionError
from botocore.stub import Stubber

from ddb2bigtable.replicate.lineage import Shard
from ddb2bigtable.replicate.stream import FIRST_PAGE, PAGE, StreamReader, Unavailable
from ddb2bigtable.spec.errors import InputError, ServiceError

ARN = "arn:aws:dynamodb:us-west-2:123456789012:table/Movies/stream/2026-11-24T00:00:00.000"
ONE, TWO = "shardId-00000001795484604052-68a3d3c5", "shardId-00000001795484699999-0badcafe"


def seq(n: int) -> str:
    """Sequence numbers as AWS writes them: 21 digits or more."""
    return f"{n:021d}"


def record(seq: str) -> dict:
    return {"eventName": "INSERT", "dynamodb": {
        "ApproximateCreationDateTime": datetime(2026, 11, 24, 1, tzinfo=UTC), "SequenceNumber": seq,
        "Keys": {"id": {"S": seq}}, "NewImage": {"id": {"S": seq}}, "StreamViewType": "NEW_AND_OLD_IMAGES"}}


@pytest.fixture
def reader(monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "recorded")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "recorded")
    reader = StreamReader("Movies", "us-west-2", None)
    with Stubber(reader._streams) as streams, Stubber(reader._db) as db:
        yield reader, streams, db
        streams.assert_no_pending_responses()


def test_describe_stream_pages_are_followed_to_the_last_shard(reader):
    reader, streams, _ = reader
    shard = {"ShardId": ONE, "SequenceNumberRange": {"StartingSequenceNumber": seq(1)}}
    streams.add_response("describe_stream", {"StreamDescription": {"Shards": [shard], "LastEvaluatedShardId": ONE}},
                         {"StreamArn": ARN})
    streams.add_response("describe_stream", {"StreamDescription": {"Shards": [shard | {"ShardId": TWO}]}},
                         {"StreamArn": ARN, "ExclusiveStartShardId": ONE})
    assert [s.id for s in reader.shards(ARN)] == [ONE, TWO]


def test_a_closed_shard_is_read_through_empty_stretches_and_an_expired_iterator_to_its_end(reader):
    reader, streams, _ = reader
    streams.add_response("get_shard_iterator", {"ShardIterator": "it-1"},
                         {"StreamArn": ARN, "ShardId": ONE, "ShardIteratorType": "TRIM_HORIZON"})
    streams.add_response("get_records", {"Records": [record(seq(10))], "NextShardIterator": "it-2"},
                         {"ShardIterator": "it-1", "Limit": FIRST_PAGE})  # the shard's first: short
    streams.add_response("get_records", {"Records": [], "NextShardIterator": "it-3"},
                         {"ShardIterator": "it-2", "Limit": PAGE})
    streams.add_client_error("get_records", "ExpiredIteratorException", expected_params={"ShardIterator": "it-3",
                                                                                          "Limit": PAGE})
    streams.add_response("get_shard_iterator", {"ShardIterator": "it-4"},
                         {"StreamArn": ARN, "ShardId": ONE, "ShardIteratorType": "AFTER_SEQUENCE_NUMBER",
                          "SequenceNumber": seq(10)})
    streams.add_response("get_records", {"Records": [record(seq(11))]}, {"ShardIterator": "it-4", "Limit": PAGE})
    pages = list(reader.read(ARN, Shard(ONE, None, closed=True), None))
    assert [([r.sequence for r in p.records], p.ended) for p in pages] == [([seq(10)], False), ([seq(11)], True)]


def test_an_open_shards_empty_page_is_caught_up_and_the_next_poll_goes_on_from_there(reader):
    reader, streams, _ = reader
    streams.add_response("get_shard_iterator", {"ShardIterator": "it-1"},
                         {"StreamArn": ARN, "ShardId": ONE, "ShardIteratorType": "AFTER_SEQUENCE_NUMBER",
                          "SequenceNumber": seq(9)})
    streams.add_response("get_records", {"Records": [], "NextShardIterator": "it-2"},
                         {"ShardIterator": "it-1", "Limit": FIRST_PAGE})
    streams.add_response("get_records", {"Records": [record(seq(12))], "NextShardIterator": "it-3"},
                         {"ShardIterator": "it-2", "Limit": PAGE})
    streams.add_response("get_records", {"Records": [], "NextShardIterator": "it-4"},
                         {"ShardIterator": "it-3", "Limit": PAGE})
    shard = Shard(ONE, None, closed=False)
    assert [(p.records, p.ended) for p in reader.read(ARN, shard, seq(9))] == [([], False)]
    (applied, caught_up) = reader.read(ARN, shard, seq(9))  # the kept iterator, not a new one
    assert [r.sequence for r in applied.records] == [seq(12)] and caught_up.records == []


@pytest.mark.parametrize("code,says", [("ResourceNotFoundException", "check source.table and source.region"),
                                       ("AccessDeniedException", "dynamodb:GetRecords"),
                                       ("TrimmedDataAccessException", "re-export")])
def test_aws_errors_that_are_bad_input_say_what_to_do(reader, code, says):
    reader, streams, db = reader
    if code == "TrimmedDataAccessException":
        streams.add_client_error("get_shard_iterator", code)
        with pytest.raises(InputError, match=says):
            list(reader.read(ARN, Shard(ONE, None, closed=False), seq(5)))
    else:
        db.add_client_error("describe_table", code)
        with pytest.raises(InputError, match=says):
            reader.stream()


@pytest.mark.parametrize("failure,says", [
    (lambda: EndpointConnectionError(endpoint_url="http://127.0.0.1:9"), "cannot be reached: Could not connect"),
    (lambda: ConnectionClosedError(endpoint_url="http://127.0.0.1:9"), "cannot be reached: Connection was closed"),
    (lambda: ClientError({"Error": {"Code": "LimitExceededException"}}, "GetRecords"),
     "keeps refusing requests after 10 attempts \\(LimitExceededException\\)"),
    (lambda: ClientError({"Error": {"Code": "Whatever"}, "ResponseMetadata": {"HTTPStatusCode": 503}},
                         "GetRecords"), "keeps refusing requests")])
def test_dynamodb_out_of_reach_past_the_retries_is_a_service_error_not_bad_input(reader, failure, says):
    """Exit 1 (a rerun, or the run's own wait, may succeed), naming the table and endpoint."""
    reader = reader[0]

    def fails(**_: object) -> None:
        raise failure()
    with pytest.raises(Unavailable, match=f"DynamoDB table Movies \\(us-west-2\\) {says}") as caught:
        reader._call(fails, "Records")
    assert isinstance(caught.value, ServiceError) and caught.value.exit_code == 1


def test_a_configuration_error_of_boto3_is_bad_input(reader):
    def fails(**_: object) -> None:
        raise NoRegionError()
    with pytest.raises(InputError, match="You must specify a region"):
        reader[0]._call(fails, "Table")
