// Reads every record of one DynamoDB stream through the JavaScript SDK v3's
// DynamoDBStreamsClient (@aws-sdk/client-dynamodb-streams, installed by
// scripts/js_streams_client.sh), on its defaults but for the endpoint, region and keys, and
// prints them as JSON: the shards in lineage order (parents first), each from TRIM_HORIZON
// until it ends or two pages in a row bring nothing. tests/serve/streams/side_by_side.py
// runs it against serve and DynamoDB Local.
//
//   NODE_PATH=.tools/js-streams-client/node_modules node read_stream.cjs ENDPOINT REGION ARN
"use strict";
const {
  DynamoDBStreamsClient, DescribeStreamCommand, GetShardIteratorCommand, GetRecordsCommand,
} = require("@aws-sdk/client-dynamodb-streams");

async function main() {
  const [endpoint, region, arn] = process.argv.slice(2);
  const client = new DynamoDBStreamsClient({
    endpoint, region, credentials: { accessKeyId: "local", secretAccessKey: "local" },
  });
  const shards = [];
  let after;
  do {
    const page = await client.send(new DescribeStreamCommand({ StreamArn: arn, ExclusiveStartShardId: after }));
    shards.push(...page.StreamDescription.Shards);
    after = page.StreamDescription.LastEvaluatedShardId;
  } while (after);
  const ids = new Set(shards.map((s) => s.ShardId));
  const done = new Set();
  const ordered = [];
  while (ordered.length < shards.length) {  // parents before children
    for (const shard of shards) {
      const parent = shard.ParentShardId;
      if (!done.has(shard.ShardId) && (!parent || !ids.has(parent) || done.has(parent))) {
        ordered.push(shard);
        done.add(shard.ShardId);
      }
    }
  }
  const records = [];
  for (const shard of ordered) {
    let iterator = (await client.send(new GetShardIteratorCommand({
      StreamArn: arn, ShardId: shard.ShardId, ShardIteratorType: "TRIM_HORIZON",
    }))).ShardIterator;
    let empty = 0;
    while (iterator && empty < 2) {
      const page = await client.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: 1000 }));
      for (const record of page.Records) {
        const when = record.dynamodb.ApproximateCreationDateTime;
        record.dynamodb.ApproximateCreationDateTime = when instanceof Date ? when.getTime() / 1000 : when;
        records.push({ shard: shard.ShardId, record });
      }
      empty = page.Records.length ? 0 : empty + 1;
      iterator = page.NextShardIterator;
    }
  }
  process.stdout.write(JSON.stringify(records));
}

main().catch((error) => {
  process.stderr.write(`${error.name}: ${error.message}\n`);
  process.exit(1);
});
