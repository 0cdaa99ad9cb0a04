"""The DynamoDB Streams API of serve on an emulator stage, through boto3's `dynamodbstreams`
client on its defaults: records written into the items' rows exactly as the write path will
write them (records.stored_cell in the row's mutation, Bigtable's server time), read back
shard by shard; the requests' errors side by side with DynamoDB Local 1.25.1."""

from __future__ import annotations

import time
from typing import Any

import pytest
from botocore.exceptions import ClientError

from ddb2bigtable.serve.catalog import catalog
from ddb2bigtable.serve.streams import positions, records

from .conftest import STAGE, TABLE, oracle_client

A = {"pk": {"S": "a"}, "sk": {"N": "1"}}
B = {"pk": {"S": "b"}, "sk": {"N": "2"}}


class Writer:
    """The write path's side of a stream: the row read, each change's cell numbered from it
    (records.next_number) in the row's one mutation."""

    def __init__(self, streamed):
        from google.cloud.bigtable.data import BigtableDataClient

        self.client = BigtableDataClient(project=streamed.project)
        self.table = self.client.get_table(streamed.instance, TABLE)
        self.served = catalog(streamed.root, STAGE, {}, streamed.project).tables["Orders"]

    def write(self, keys: dict, old: dict | None, new: dict | None) -> bytes:
        from google.cloud.bigtable.data import SetCell

        from ddb2bigtable.codec.mutations import Cell

        row = self.served.row_key(keys)
        made = records.change(keys, old, new)
        assert made is not None
        read = self.table.read_row(row)
        cells = [Cell(c.family, c.qualifier, c.value, c.timestamp_micros) for c in (read.cells if read else [])]
        cell = records.stored_cell(made, "NEW_AND_OLD_IMAGES", records.next_number(cells))
        self.table.mutate_row(row, [SetCell("cf", b"v", b"item cells", timestamp_micros=-1),
                                    SetCell(cell.family, cell.qualifier, cell.value, cell.timestamp_micros)])
        return row


def _everything(streams: Any, arn: str, kind: str = "TRIM_HORIZON", limit: int = 1000) -> list[dict]:
    shards = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]
    found = []
    for shard in shards:
        position = streams.get_shard_iterator(StreamArn=arn, ShardId=shard["ShardId"], ShardIteratorType=kind)
        page = streams.get_records(ShardIterator=position["ShardIterator"], Limit=limit)
        while page["Records"]:
            found += page["Records"]
            page = streams.get_records(ShardIterator=page["NextShardIterator"], Limit=limit)
    return found


def test_the_spec_tables_stream_has_four_stable_shards(streamed, arn) -> None:
    streams = streamed.client()
    described = streams.describe_stream(StreamArn=arn)["StreamDescription"]
    assert arn.startswith("arn:aws:dynamodb:us-west-2:000000000000:table/Orders/stream/")
    assert (described["StreamStatus"], described["StreamViewType"], described["TableName"]) == (
        "ENABLED", "NEW_AND_OLD_IMAGES", "Orders")
    assert described["KeySchema"] == [{"AttributeName": "pk", "KeyType": "HASH"},
                                      {"AttributeName": "sk", "KeyType": "RANGE"}]
    table = streamed.client("dynamodb").describe_table(TableName="Orders")["Table"]
    assert (table["LatestStreamArn"], table["LatestStreamLabel"]) == (arn, described["StreamLabel"])
    assert table["StreamSpecification"] == {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}
    ids = [s["ShardId"] for s in described["Shards"]]
    assert len(set(ids)) == positions.SHARDS and all(len(i) == 37 and i.startswith("shardId-") for i in ids)
    assert all("EndingSequenceNumber" not in s["SequenceNumberRange"] and "ParentShardId" not in s
               for s in described["Shards"])
    assert streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"] == described["Shards"]
    page = streams.describe_stream(StreamArn=arn, Limit=3)["StreamDescription"]
    rest = streams.describe_stream(StreamArn=arn, ExclusiveStartShardId=page["LastEvaluatedShardId"])
    assert [s["ShardId"] for s in page["Shards"] + rest["StreamDescription"]["Shards"]] == ids


def test_each_change_is_read_once_in_each_items_order(streamed, arn) -> None:
    writer, streams = Writer(streamed), streamed.client()
    A, B = {"pk": {"S": "order-a"}, "sk": {"N": "1"}}, {"pk": {"S": "order-b"}, "sk": {"N": "2"}}  # this test's own
    later = time.time()
    writer.write(A, None, A | {"v": {"S": "x"}})
    writer.write(B, None, B | {"n": {"N": "1"}})
    writer.write(A, A | {"v": {"S": "x"}}, A | {"v": {"S": "y"}})
    writer.write(A, A | {"v": {"S": "y"}}, None)
    found = [r for r in _everything(streams, arn) if r["dynamodb"]["ApproximateCreationDateTime"].timestamp()
             >= int(later) and r["dynamodb"]["Keys"] in (A, B)]
    of_a = [r for r in found if r["dynamodb"]["Keys"] == A]
    assert [r["eventName"] for r in of_a] == ["INSERT", "MODIFY", "REMOVE"]
    assert of_a[1]["dynamodb"]["OldImage"] == A | {"v": {"S": "x"}}
    assert of_a[1]["dynamodb"]["NewImage"] == A | {"v": {"S": "y"}}
    assert [r["eventName"] for r in found if r["dynamodb"]["Keys"] == B] == ["INSERT"]
    numbers = [r["dynamodb"]["SequenceNumber"] for r in of_a]
    assert numbers == sorted(numbers) and len({r["eventID"] for r in found}) == len(found) == 4
    assert {(r["eventSource"], r["eventVersion"], r["awsRegion"]) for r in found} == {
        ("aws:dynamodb", "1.1", "us-west-2")}
    assert [r["eventID"] for r in _everything(streams, arn, limit=1) if r in found] == [r["eventID"] for r in found]


def test_latest_after_and_at_start_where_dynamodb_does(streamed, arn) -> None:
    writer, streams = Writer(streamed), streamed.client()
    row = writer.write(A, None, A | {"w": {"N": "1"}})
    shard = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"][positions.shard_of_row(row)]
    latest = streams.get_shard_iterator(StreamArn=arn, ShardId=shard["ShardId"], ShardIteratorType="LATEST")
    time.sleep(0.01)
    writer.write(A, A | {"w": {"N": "1"}}, A | {"w": {"N": "2"}})
    page = streams.get_records(ShardIterator=latest["ShardIterator"])
    assert [r["dynamodb"]["NewImage"]["w"] for r in page["Records"]] == [{"N": "2"}]
    number = page["Records"][0]["dynamodb"]["SequenceNumber"]
    for kind, expected in (("AT_SEQUENCE_NUMBER", [number]), ("AFTER_SEQUENCE_NUMBER", [])):
        position = streams.get_shard_iterator(StreamArn=arn, ShardId=shard["ShardId"], ShardIteratorType=kind,
                                              SequenceNumber=number)
        got = streams.get_records(ShardIterator=position["ShardIterator"])["Records"]
        assert [r["dynamodb"]["SequenceNumber"] for r in got] == expected


def _error(call: Any, **kwargs: Any) -> tuple[str, str]:
    with pytest.raises(ClientError) as raised:
        call(**kwargs)
    return raised.value.response["Error"]["Code"], raised.value.response["Error"]["Message"]


def test_an_old_iterator_expires_and_an_old_position_is_trimmed(streamed, arn) -> None:
    streams = streamed.client()
    shard = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"][0]["ShardId"]
    old = positions.iterator(arn, positions.Position(0, "", True, int(time.time() * 1000) - 16 * 60 * 1000))
    assert _error(streams.get_records, ShardIterator=old)[0] == "ExpiredIteratorException"
    day_ago = positions.sequence((int(time.time()) - 25 * 3600) * 1_000_000, b"a", 1)
    assert _error(streams.get_shard_iterator, StreamArn=arn, ShardId=shard, ShardIteratorType="AT_SEQUENCE_NUMBER",
                  SequenceNumber=day_ago)[0] == "TrimmedDataAccessException"
    trimmed = positions.iterator(arn, positions.Position(0, day_ago, False, int(time.time() * 1000)))
    assert _error(streams.get_records, ShardIterator=trimmed)[0] == "TrimmedDataAccessException"
    assert _error(streams.describe_stream, StreamArn=arn + "x")[0] == "ResourceNotFoundException"


def test_bad_requests_are_refused_as_dynamodb_local_refuses_them(streamed, arn, oracle) -> None:
    """The same requests to serve and to DynamoDB Local (client-side checks off): the same
    codes and words. The stream and shard are each side's own."""
    local = oracle_client(oracle, "dynamodb")
    local_arn = local.create_table(TableName="StreamErrors", KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                                   AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                                   BillingMode="PAY_PER_REQUEST", StreamSpecification={
                                       "StreamEnabled": True, "StreamViewType": "KEYS_ONLY"})[
        "TableDescription"]["LatestStreamArn"]
    import boto3
    from botocore.config import Config

    sides = [(boto3.client("dynamodbstreams", endpoint_url=streamed.endpoint, region_name="us-west-2",
                           aws_access_key_id="test", aws_secret_access_key="test",
                           config=Config(parameter_validation=False, retries={"max_attempts": 1})), arn),
             (oracle_client(oracle, "dynamodbstreams", validate=False), local_arn)]
    answers = []
    for client, stream in sides:
        shard = client.describe_stream(StreamArn=stream)["StreamDescription"]["Shards"][0]["ShardId"]
        at = {"StreamArn": stream, "ShardId": shard}
        answers.append([
            _error(client.get_records, ShardIterator="garbage"),
            _error(client.get_records, ShardIterator="garbage", Limit=0),
            _error(client.get_records, ShardIterator=client.get_shard_iterator(
                **at, ShardIteratorType="TRIM_HORIZON")["ShardIterator"], Limit=1001),
            _error(client.get_shard_iterator, **at, ShardIteratorType="NOPE"),
            _error(client.get_shard_iterator, **at, ShardIteratorType="AT_SEQUENCE_NUMBER"),
            _error(client.get_shard_iterator, **at, ShardIteratorType="TRIM_HORIZON", SequenceNumber="1" * 21),
            _error(client.get_shard_iterator, **at, ShardIteratorType="AFTER_SEQUENCE_NUMBER", SequenceNumber="abc"),
            _error(client.get_shard_iterator, StreamArn=stream, ShardId="shardId-00000001234567890123-abcdef12",
                   ShardIteratorType="TRIM_HORIZON"),
            _error(client.describe_stream, StreamArn=stream, Limit=0),
            _error(client.describe_stream, StreamArn=stream, ExclusiveStartShardId="shardId-nope"),
            _error(client.list_streams, Limit=0),
            _error(client.describe_stream, StreamArn="nope"),
        ])
    local.delete_table(TableName="StreamErrors")
    assert answers[0] == answers[1]


def test_a_page_stops_at_one_megabyte_and_the_next_goes_on(streamed, arn) -> None:
    """GetRecords gives at most 1 MB of records (DynamoDB's bound): two changes of 300 KB
    images, old and new, come one a page, the second after the first."""
    writer, streams = Writer(streamed), streamed.client()
    big = {"pk": {"S": "big"}, "sk": {"N": "1"}}
    row = writer.write(big, None, big | {"v": {"S": "a" * 300_000}})
    shard = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"][positions.shard_of_row(row)]
    latest = streams.get_shard_iterator(StreamArn=arn, ShardId=shard["ShardId"], ShardIteratorType="LATEST")
    time.sleep(0.01)
    writer.write(big, big | {"v": {"S": "a" * 300_000}}, big | {"v": {"S": "b" * 300_000}})
    writer.write(big, big | {"v": {"S": "b" * 300_000}}, big | {"v": {"S": "c" * 300_000}})
    time.sleep(0.01)
    first = streams.get_records(ShardIterator=latest["ShardIterator"])
    second = streams.get_records(ShardIterator=first["NextShardIterator"])
    assert [r["dynamodb"]["NewImage"]["v"]["S"][0] for r in first["Records"] + second["Records"]] == ["b", "c"]
    assert len(first["Records"]) == len(second["Records"]) == 1


def test_at_timestamp_and_child_shards_as_botocores_model_has_them(streamed, arn) -> None:
    """AT_TIMESTAMP starts at the first record committed at or after the time (older than the
    trim: the oldest kept; in the future: ValidationException); ShardFilter CHILD_SHARDS
    lists a shard's children: none, emulator shards never split."""
    writer, streams = Writer(streamed), streamed.client()
    keys = {"pk": {"S": "timed"}, "sk": {"N": "1"}}
    row = writer.write(keys, None, keys | {"n": {"N": "1"}})
    time.sleep(0.05)
    since = time.time()
    time.sleep(0.05)
    writer.write(keys, keys | {"n": {"N": "1"}}, keys | {"n": {"N": "2"}})
    shard = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"][positions.shard_of_row(row)]
    at = {"StreamArn": arn, "ShardId": shard["ShardId"], "ShardIteratorType": "AT_TIMESTAMP"}
    timed = streams.get_shard_iterator(**at, Timestamp=since)["ShardIterator"]
    got = [r["dynamodb"]["NewImage"]["n"] for r in streams.get_records(ShardIterator=timed)["Records"]
           if r["dynamodb"]["Keys"] == keys]
    assert got == [{"N": "2"}]
    oldest = streams.get_shard_iterator(**at, Timestamp=time.time() - 30 * 3600)["ShardIterator"]
    found, page = [], streams.get_records(ShardIterator=oldest)
    while page["Records"]:  # other tests' records come first, some pages of 1 MB
        found += [r["dynamodb"]["NewImage"]["n"] for r in page["Records"] if r["dynamodb"]["Keys"] == keys]
        page = streams.get_records(ShardIterator=page["NextShardIterator"])
    assert found == [{"N": "1"}, {"N": "2"}]
    assert _error(streams.get_shard_iterator, **at, Timestamp=time.time() + 3600)[0] == "ValidationException"
    children = streams.describe_stream(StreamArn=arn, ShardFilter={"Type": "CHILD_SHARDS", "ShardId": shard["ShardId"]})
    assert children["StreamDescription"]["Shards"] == []
