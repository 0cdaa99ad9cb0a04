"""Zero-downtime migration: a table's DynamoDB stream replicated into Bigtable after the load.

- `run.run_replicate`: read the stream from the export's time (or a checkpoint) and apply it;
  `run.Run` is the loop both directions share, writing through a sink (`pages.Sink`).
- `reverse.run.reverse_table`: the way back after the write switch, serve's stream
  written to the source DynamoDB table (replicate/reverse/).
- `opening.opening_checkpoint`: where a run begins, and the starts it refuses (a stream
  that no longer reaches back, another table's checkpoint, a partition of another N running).
- `pages.PagePipeline`: one shard's pages read, encoded and written in overlapping stages.
- `outage.Outage`: DynamoDB or Bigtable out of reach, waited out up to `--outage-limit`.
- `lineage.ready_shards`, `lineage.unreachable_start`: which shards to read, and whether
  the stream still reaches the start point.
- `apply.record_rows`: one stream record -> row mutations with the load's codec (why
  replays converge, and what cell times replication writes); `apply.BigtableSink` writes them.
- `checkpoint.save_checkpoint`: per-shard positions, saved after Bigtable acknowledged.
- `shares.parse_share`: `--shards I/N`, which shards a process owns; one checkpoint file
  per share, children started after a parent any process finished.
- `cutover.check_cutover`: a random sample of the live table compared with Bigtable, and
  the lag from the checkpoint: ready to switch over, or why not.
- `stream.StreamReader`: the only module that talks to AWS (boto3).
"""
