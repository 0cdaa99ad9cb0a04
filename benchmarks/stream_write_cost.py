"""What a stream costs serve's writes: PutItem and UpdateItem on a table with a stream
(NEW_AND_OLD_IMAGES) against the same table without one, same serve, same run (issue #52:
0.8 or more).

One run starts its own Bigtable emulator (127.0.0.1, stopped by PID), an emulator stage
with one spec table (serve's home), serve on it, and two tables made through serve's
CreateTable with the same key schema: `Plain` and `Streamed` (StreamSpecification). Then,
the tables taking turns within each of `--rounds` rounds so the shared machine's noise hits
both: `--threads` threads, each with its own boto3 client, call the operation for
`--seconds` (after one untimed second) on `--items` items of their own: PutItem of an item
that exists (a MODIFY record: the stream's dearest case), PutItem of a new item (an
INSERT) and UpdateItem `SET v = :v ADD n :one` (a MODIFY). Reports each table's operations
per second and p50 per operation, and Streamed / Plain per round and as the median of the
rounds. Run:

    uv run python benchmarks/stream_write_cost.py [--rounds 3] [--seconds 4] [--threads 4] [--items 200]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "0")  # before gRPC's import: the loader forks (load/encoder.py)

from benchmarks.serve_throughput import client, drive  # noqa: E402
from ddb2bigtable.bigtable import emulator  # noqa: E402
from ddb2bigtable.load.local_stage import up  # noqa: E402
from tests.conftest import write_project  # noqa: E402
from tests.serve.conftest import start_serve  # noqa: E402
from tests.serve.streams.conftest import SPEC, STAGE  # noqa: E402

TABLES = ("Plain", "Streamed")
SCHEMA = {"KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
          "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"},
                                   {"AttributeName": "sk", "AttributeType": "N"}]}


def key(n: int) -> dict[str, Any]:
    return {"pk": {"S": f"item-{n}"}, "sk": {"N": str(n)}}


def operations(table: str, items: int) -> dict[str, Any]:
    def put(c: Any, rng: random.Random, n: int) -> None:
        c.put_item(TableName=table, Item=key(rng.randrange(items)) | {"v": {"S": f"put {n}"}, "n": {"N": "1"},
                                                                      "body": {"S": "x" * 200}})

    def insert(c: Any, rng: random.Random, n: int) -> None:  # a key no round wrote (`n` starts again each round)
        c.put_item(TableName=table, Item={"pk": {"S": f"new-{uuid.uuid4().hex}"}, "sk": {"N": str(n)},
                                          "v": {"S": f"new {rng.random()}"}, "n": {"N": "1"}, "body": {"S": "x" * 200}})

    def update(c: Any, rng: random.Random, n: int) -> None:
        c.update_item(TableName=table, Key=key(rng.randrange(items)), UpdateExpression="SET v = :v ADD n :one",
                      ExpressionAttributeValues={":v": {"S": f"update {n}"}, ":one": {"N": "1"}})

    return {"PutItem": put, "PutItem new": insert, "UpdateItem": update}


def prepare(endpoint: str, items: int) -> None:
    """Both tables, the second with a stream, each holding `items` items."""
    db = client(endpoint)
    for table in TABLES:
        stream = {"StreamSpecification": {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}} \
            if table == "Streamed" else {}
        db.create_table(TableName=table, BillingMode="PAY_PER_REQUEST", **SCHEMA, **stream)
        for start in range(0, items, 25):
            db.batch_write_item(RequestItems={table: [{"PutRequest": {"Item": key(n) | {"v": {"S": "first"},
                                                                                        "n": {"N": "1"}}}}
                                                      for n in range(start, min(start + 25, items))]})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--items", type=int, default=200)
    args = parser.parse_args()
    bigtable = emulator.start()
    try:
        with tempfile.TemporaryDirectory() as tmp, emulator.pointed_at(bigtable.address):
            root = Path(tmp)
            write_project(root, {"orders": SPEC}, {"emulator": True, "regions": "home", "deletion_protection": False,
                                                   "autoscaling": False}, stage_name=STAGE)
            assert up(root, STAGE).ok
            process, endpoint = start_serve(root, STAGE)
            try:
                run(endpoint, args)
            finally:
                emulator.stop_process(process)
    finally:
        bigtable.stop()


def run(endpoint: str, args: argparse.Namespace) -> None:
    prepare(endpoint, args.items)
    print(f"{args.threads} client threads, {args.seconds:g} s per operation, table and round, {args.items} items, "
          f"serve --workers 1 on the emulator, {os.cpu_count()} cores", flush=True)
    ratios: dict[str, list[float]] = {"PutItem": [], "PutItem new": [], "UpdateItem": []}
    for round_ in range(1, args.rounds + 1):
        for name in ratios:
            rates = {}
            for table in (TABLES if round_ % 2 else TABLES[::-1]):  # who goes first alternates
                rate, latencies = drive(endpoint, operations(table, args.items)[name], args.threads, args.seconds)
                rates[table] = rate
                print(f"round {round_} {name:10} {table:8} {rate:7.0f}/s  p50 "
                      f"{statistics.median(latencies) * 1000:6.1f} ms", flush=True)
            ratios[name].append(rates["Streamed"] / rates["Plain"])
            print(f"round {round_} {name:10} Streamed / Plain: {ratios[name][-1]:.2f}", flush=True)
    print(", ".join(f"{name} Streamed / Plain: median {statistics.median(r):.2f} of {len(r)} "
                    f"({min(r):.2f}-{max(r):.2f})" for name, r in ratios.items()), flush=True)


if __name__ == "__main__":
    main()
