"""DynamoDB Local answers, with a stream: the ground the replicate tests stand on."""

from __future__ import annotations


def test_a_table_with_a_stream_records_a_put(dynamodb):
    client = dynamodb.client()
    client.create_table(TableName="Probe", BillingMode="PAY_PER_REQUEST",
                        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
                        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
                        StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"})
    client.put_item(TableName="Probe", Item={"id": {"S": "a"}, "n": {"N": "1"}})
    arn = client.describe_table(TableName="Probe")["Table"]["LatestStreamArn"]
    streams = dynamodb.client("dynamodbstreams")
    (shard,) = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]
    iterator = streams.get_shard_iterator(StreamArn=arn, ShardId=shard["ShardId"],
                                          ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
    (record,) = streams.get_records(ShardIterator=iterator)["Records"]
    assert record["eventName"] == "INSERT"
    assert record["dynamodb"]["NewImage"] == {"id": {"S": "a"}, "n": {"N": "1"}}
