"""DynamoDB Streams through serve (docs/streams.md).

Entry points: `records.change`, `records.next_number` and `records.stored_cell` (what an
item write adds to its own row mutation, so the write and its record are one step),
`records.stream_record` (the Record GetRecords gives), `stream_ops.OPERATIONS`
(ListStreams, DescribeStream, GetShardIterator and GetRecords as the protocol dispatches
them), `registry.enable` and `registry.disable` (a table's stream turned on or off),
`sources.source` (the stage's reader of records: `scan_source` on emulator stages,
`change_source` over Bigtable change streams on cloud stages) and `partitions.records`
(cloud stages' change-stream messages).
"""
