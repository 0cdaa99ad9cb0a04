"""How soon a change is readable through GetRecords: serve's stream (emulator stage) against
DynamoDB Local's, same machine, same client, one run (issue #52: p50 within 1 s).

One run starts its own Bigtable emulator and DynamoDB Local (127.0.0.1, stopped by PID), a
stage with one table whose stream keeps new and old images (`--items` items written into
it first through serve's BatchWriteItem, so each GetRecords scans a table of that size),
serve on that stage, and the same table with a stream on DynamoDB Local. Then, the sides
taking turns, `--writes` times: one change is written and a reader that had caught up
polls GetRecords on the change's shard (NextShardIterator, `--poll` seconds apart) until
the change's record arrives. The change is a PutItem on both sides (serve's writes its
item and its record in one row mutation, docs/streams.md), so every filler row holds a
record too, as after a migration's writes. Reports p50 and p99 from write to record, and
serve / DynamoDB Local. Run:

    uv run python benchmarks/stream_visibility.py [--writes 50] [--items 2000] [--poll 0.05]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "0")  # before gRPC's import: the loader forks (load/encoder.py)

import boto3  # noqa: E402
from botocore.config import Config  # noqa: E402

from benchmarks.serve_throughput import ratio_line  # noqa: E402
from ddb2bigtable.bigtable import emulator  # noqa: E402
from ddb2bigtable.load.local_stage import up  # noqa: E402
from ddb2bigtable.serve.catalog import catalog  # noqa: E402
from ddb2bigtable.serve.streams import positions, records  # noqa: E402
from tests.conftest import write_project  # noqa: E402
from tests.replicate import dynamodb_local  # noqa: E402
from tests.serve.conftest import start_serve  # noqa: E402
from tests.serve.streams.conftest import INSTANCE, SPEC, STAGE, TABLE  # noqa: E402

SCHEMA = {"KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
          "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"},
                                   {"AttributeName": "sk", "AttributeType": "N"}]}


GIVE_UP_SECONDS = 30


def client(service: str, endpoint: str) -> Any:
    return boto3.client(service, endpoint_url=endpoint, region_name="us-west-2", aws_access_key_id="local",
                        aws_secret_access_key="local", config=Config(retries={"max_attempts": 3}, read_timeout=30))


def fill(endpoint: str, items: int) -> None:
    db = client("dynamodb", endpoint)
    for start in range(0, items, 25):
        db.batch_write_item(RequestItems={"Orders": [
            {"PutRequest": {"Item": {"pk": {"S": f"filler-{n}"}, "sk": {"N": str(n)}, "v": {"S": "x" * 100}}}}
            for n in range(start, min(start + 25, items))]})


def caught_up(streams: Any, arn: str, shard: str) -> str:
    """An iterator past every record the shard holds now."""
    position = streams.get_shard_iterator(StreamArn=arn, ShardId=shard, ShardIteratorType="LATEST")["ShardIterator"]
    return streams.get_records(ShardIterator=position)["NextShardIterator"]


def seen_after(streams: Any, iterator: str, keys: dict, poll: float, started: float) -> float:
    while time.perf_counter() - started < GIVE_UP_SECONDS:
        page = streams.get_records(ShardIterator=iterator)
        if any(r["dynamodb"]["Keys"] == keys for r in page["Records"]):
            return time.perf_counter() - started
        iterator = page["NextShardIterator"]
        time.sleep(poll)
    raise SystemExit(f"no record of {keys} within {GIVE_UP_SECONDS} s of its write: does the endpoint's write path "
                     "store its records (docs/streams.md)?")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--writes", type=int, default=50)
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--poll", type=float, default=0.05)
    args = parser.parse_args()
    bigtable = emulator.start()
    try:
        local = dynamodb_local.start()
        try:
            with tempfile.TemporaryDirectory() as tmp, emulator.pointed_at(bigtable.address):
                run(Path(tmp), local.endpoint, args)
        finally:
            local.stop()
    finally:
        bigtable.stop()


def run(root: Path, local_endpoint: str, args: argparse.Namespace) -> None:
    from google.cloud.bigtable import Client

    write_project(root, {"orders": SPEC}, {"emulator": True, "regions": "home", "deletion_protection": False,
                                           "autoscaling": False}, stage_name=STAGE)
    assert up(root, STAGE).ok
    bigtable_table = Client(project="test-project", admin=True).instance(INSTANCE).table(TABLE)
    if records.FAMILY not in bigtable_table.list_column_families():  # the plan makes it for a table with a stream
        bigtable_table.column_family(records.FAMILY).create()
    process, endpoint = start_serve(root, STAGE)
    try:
        fill(endpoint, args.items)
        serve_streams = client("dynamodbstreams", endpoint)
        serve_arn = serve_streams.list_streams(TableName="Orders")["Streams"][0]["StreamArn"]
        serve_shards = [s["ShardId"] for s in serve_streams.describe_stream(StreamArn=serve_arn)[
            "StreamDescription"]["Shards"]]
        table = catalog(root, STAGE, {}, "test-project").tables["Orders"]
        serve_db = client("dynamodb", endpoint)
        local_db, local_streams = client("dynamodb", local_endpoint), client("dynamodbstreams", local_endpoint)
        local_arn = local_db.create_table(TableName="Orders", **SCHEMA, BillingMode="PAY_PER_REQUEST",
                                          StreamSpecification={"StreamEnabled": True,
                                                               "StreamViewType": "NEW_AND_OLD_IMAGES"})[
            "TableDescription"]["LatestStreamArn"]
        fill(local_endpoint, args.items)
        local_shard = local_streams.describe_stream(StreamArn=local_arn)["StreamDescription"]["Shards"][0]["ShardId"]
        times: dict[str, list[float]] = {"DynamoDB Local": [], "serve (emulator)": []}
        for n in range(args.writes):
            keys = {"pk": {"S": f"change-{n}"}, "sk": {"N": str(n)}}
            item = keys | {"v": {"S": "new"}}
            iterator = caught_up(local_streams, local_arn, local_shard)
            started = time.perf_counter()
            local_db.put_item(TableName="Orders", Item=item)
            times["DynamoDB Local"].append(seen_after(local_streams, iterator, keys, args.poll, started))
            row = table.row_key(keys)
            iterator = caught_up(serve_streams, serve_arn, serve_shards[positions.shard_of_row(row)])
            started = time.perf_counter()
            serve_db.put_item(TableName="Orders", Item=item)
            times["serve (emulator)"].append(seen_after(serve_streams, iterator, keys, args.poll, started))
        print(f"{args.writes} writes, {args.items} items in the table, polling every {args.poll:g} s, "
              f"{os.cpu_count()} cores")
        for side, seconds in times.items():
            ordered = sorted(seconds)
            print(f"{side:18s} write to record p50 {statistics.median(ordered) * 1000:7.1f} ms   "
                  f"p99 {ordered[int(len(ordered) * 0.99) - 1] * 1000:7.1f} ms")
        print(ratio_line({side: statistics.median(s) for side, s in times.items()}, " p50"))
    finally:
        emulator.stop_process(process)


if __name__ == "__main__":
    main()
