"""Reverse replication, the way back after the write switch: serve's stream (the writes the
application made through serve, so Bigtable's) applied to the source DynamoDB table.

- `run.reverse_table`: forward's run (run.Run) over serve's stream, writing to DynamoDB;
  it holds its writes while forward replication runs in the work folder.
- `writes.DynamoDBSink`: a page's records -> whole-image BatchWriteItem puts and deletes,
  items DynamoDB refuses as dead letters.
- `check.check_reverse`: `cutover check --reverse`, a random sample of Bigtable's items
  looked up in DynamoDB, and the reverse lag: ready to move writes back.
"""
