"""Cloud stages' mapping of Bigtable change-stream messages to shards and records, on
ReadChangeStreamResponse messages built as google-cloud-bigtable's protos define them."""

from __future__ import annotations

import orjson
from google.cloud.bigtable_v2.types import Mutation, ReadChangeStreamResponse, RowRange, StreamContinuationToken
from google.cloud.bigtable_v2.types import StreamPartition as ProtoPartition
from google.protobuf import timestamp_pb2

from ddb2bigtable.serve.streams import partitions, records
from ddb2bigtable.serve.streams.positions import sequence

R = ReadChangeStreamResponse
KEY = {"pk": {"S": "a"}, "sk": {"N": "1"}}
COMMIT = timestamp_pb2.Timestamp(seconds=1_796_646_375, nanos=747_123_000)


def _set(family: str, qualifier: bytes, value: bytes, info: R.MutationChunk.ChunkInfo | None = None) -> R.MutationChunk:
    return R.MutationChunk(mutation=Mutation(set_cell=Mutation.SetCell(
        family_name=family, column_qualifier=qualifier, value=value, timestamp_micros=1)), chunk_info=info)


def _change(row: bytes, chunks: list[R.MutationChunk], kind=R.DataChange.Type.USER, done=True) -> R:
    return R(data_change=R.DataChange(type_=kind, row_key=row, commit_timestamp=COMMIT, tiebreaker=0,
                                      chunks=chunks, done=done, token="t1"))


def _range(start: bytes, end: bytes) -> ProtoPartition:
    return ProtoPartition(row_range=RowRange(start_key_closed=start, end_key_open=end))


def test_a_data_change_with_a_stream_cell_is_one_record_and_the_items_cells_none() -> None:
    made = records.change(KEY, None, KEY | {"v": {"S": "x"}})
    assert made is not None
    cell = records.stored_cell(made, "NEW_AND_OLD_IMAGES", 3)
    message = _change(b"a#1", [_set("cf", b"v", b"x"), _set(records.FAMILY, cell.qualifier, cell.value)])
    found = partitions.records([message])
    assert [(r.sequence, r.commit_micros, r.record.event) for r in found] == [
        (sequence(1_796_646_375_747_123, b"a#1", 3), 1_796_646_375_747_123, "INSERT")]
    assert orjson.loads(orjson.dumps(found[0].record.new)) == {"pk": {"S": "a"}, "sk": {"N": "1"}, "v": {"S": "x"}}


def test_garbage_collection_heartbeats_and_other_families_make_no_record() -> None:
    made = records.change(KEY, KEY | {"v": {"S": "x"}}, None)
    assert made is not None
    cell = records.stored_cell(made, "KEYS_ONLY", 1)
    aged = _change(b"a#1", [_set(records.FAMILY, cell.qualifier, cell.value)], R.DataChange.Type.GARBAGE_COLLECTION)
    beat = R(heartbeat=R.Heartbeat(continuation_token=StreamContinuationToken(partition=_range(b"a", b"m"),
                                                                              token="where")))
    assert partitions.records([aged, beat, _change(b"a#1", [_set("cf", b"v", b"x")])]) == []
    assert partitions.heartbeat_token(beat) == "where" and partitions.heartbeat_token(aged) is None


def test_a_value_sent_in_chunks_over_two_messages_is_put_back_together() -> None:
    made = records.change(KEY, None, KEY | {"big": {"S": "x" * 5000}})
    assert made is not None
    cell = records.stored_cell(made, "NEW_IMAGE", 1)
    half = len(cell.value) // 2
    info = R.MutationChunk.ChunkInfo
    first = _change(b"a#1", [_set(records.FAMILY, cell.qualifier, cell.value[:half],
                                  info(chunked_value_size=len(cell.value), chunked_value_offset=0))], done=False)
    second = _change(b"a#1", [_set(records.FAMILY, cell.qualifier, cell.value[half:],
                                   info(chunked_value_size=len(cell.value), chunked_value_offset=half,
                                        last_chunk=True))])
    found = partitions.records([first, second])
    assert len(found) == 1 and orjson.loads(orjson.dumps(found[0].record.new))["big"] == {"S": "x" * 5000}


def test_a_split_gives_each_new_partition_the_closed_one_as_parent_and_a_merge_names_one() -> None:
    """Google's example: [B, D) ends, new partitions [A, C) and [C, E), tokens [B, C) and
    [C, D). [C, E) starts inside [B, D): its parent; [A, C) starts in another partition,
    which names it when it closes."""
    closing = partitions.Partition(b"B", b"D")
    close = R(close_stream=R.CloseStream(
        new_partitions=[_range(b"A", b"C"), _range(b"C", b"E")],
        continuation_tokens=[StreamContinuationToken(partition=_range(b"B", b"C"), token="bc"),
                             StreamContinuationToken(partition=_range(b"C", b"D"), token="cd")]))
    found = partitions.children(close, closing, 1_796_646_375_747)
    assert found is not None
    parent = partitions.shard_id(1_796_646_375_747, closing)
    assert [(c.partition, c.parent, c.tokens) for c in found] == [
        (partitions.Partition(b"A", b"C"), None, ("bc",)), (partitions.Partition(b"C", b"E"), parent, ("cd",))]
    assert len({c.shard for c in found} | {parent}) == 3
    assert all(len(c.shard) == 37 and c.shard.startswith("shardId-00000001796646375747-") for c in found)
    assert partitions.children(R(close_stream=R.CloseStream()), closing, 1) == []
    assert partitions.children(close.__class__(heartbeat=R.Heartbeat()), closing, 1) is None


def test_a_streams_shards_follow_its_partitions_splits_and_merges() -> None:
    """[A, C) and [C, E) at first; [C, E) splits into [C, D) and [D, E); then [A, C) and
    [C, D) merge into [A, D): every shard once, the closed ones closed, each child naming the
    parent that held its first row."""
    p = partitions.Partition
    split = R(close_stream=R.CloseStream(new_partitions=[_range(b"C", b"D"), _range(b"D", b"E")],
                                         continuation_tokens=[StreamContinuationToken(partition=_range(b"C", b"D")),
                                                              StreamContinuationToken(partition=_range(b"D", b"E"))]))
    merged = [_range(b"A", b"D")]
    close_ac = R(close_stream=R.CloseStream(new_partitions=merged, continuation_tokens=[
        StreamContinuationToken(partition=_range(b"A", b"C"), token="ac")]))
    close_cd = R(close_stream=R.CloseStream(new_partitions=merged, continuation_tokens=[
        StreamContinuationToken(partition=_range(b"C", b"D"), token="cd")]))
    found = partitions.shards(7, [p(b"A", b"C"), p(b"C", b"E")],
                              [(p(b"C", b"E"), split), (p(b"C", b"D"), close_cd), (p(b"A", b"C"), close_ac)])
    ids = {s.partition: s.id for s in found}
    assert [(s.partition, s.parent, s.closed) for s in found] == [
        (p(b"A", b"C"), None, True), (p(b"C", b"E"), None, True),
        (p(b"C", b"D"), ids[p(b"C", b"E")], True), (p(b"D", b"E"), ids[p(b"C", b"E")], False),
        (p(b"A", b"D"), ids[p(b"A", b"C")], False)]
