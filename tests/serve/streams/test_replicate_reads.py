"""This project's own `replicate` reads serve's stream with its DynamoDB Streams reader and
no change but the endpoint (what `replicate --reverse` does after the write switch)."""

from __future__ import annotations

from ddb2bigtable.replicate.stream import StreamReader

from .test_stream_api import Writer


def test_replicates_reader_follows_serves_stream(streamed, monkeypatch) -> None:
    for name, value in (("AWS_ACCESS_KEY_ID", "test"), ("AWS_SECRET_ACCESS_KEY", "test")):
        monkeypatch.setenv(name, value)
    reader = StreamReader("Orders", "us-west-2", streamed.endpoint)
    stream = reader.stream()  # the spec table's stream starts when serve first serves it
    writer = Writer(streamed)
    first = {"pk": {"S": "replicated"}, "sk": {"N": "7"}}
    writer.write(first, None, first | {"v": {"S": "x"}})
    writer.write(first, first | {"v": {"S": "x"}}, first | {"v": {"S": "y"}})
    shards = reader.shards(stream.arn)
    assert len(shards) == 4 and not any(s.closed or s.parent for s in shards)
    found = [r for shard in shards for page in reader.read(stream.arn, shard, None) for r in page.records]
    mine = [r for r in found if r.keys == first]
    assert [(r.kind, r.new_image) for r in mine] == [("insert", first | {"v": {"S": "x"}}),
                                                      ("modify", first | {"v": {"S": "y"}})]
    assert mine[1].old_image == first | {"v": {"S": "x"}}
    again = [r for shard in shards for page in reader.read(stream.arn, shard, None) for r in page.records]
    assert again == [], "an open shard's next read starts where the last one ended"
