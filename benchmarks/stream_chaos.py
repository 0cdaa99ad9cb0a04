"""A long check of serve's stream under two workers, TTL and crashes (issue #52's "no record
without its write, no write without its record"): the workload h52t ran in tests' shorter
form, for a long run before a release.

One run starts its own Bigtable emulator (127.0.0.1, stopped by PID), an emulator stage,
two serve processes on it (two workers of one stage, each its own port, so an item's writes
alternate between them and each one's remembered rows go stale: items/known_rows.py) with
`--txn-sweep-seconds 2`, and a table made through CreateTable with a NEW_AND_OLD_IMAGES
stream (and TTL on `exp` with `--ttl`). `--threads` threads, each a boto3 client on its
defaults but for retries, write 5 items for `--seconds`: PutItem, UpdateItem (SET and ADD),
a conditional UpdateItem, DeleteItem, a two-item TransactWriteItems and a two-item
BatchWriteItem, each stamping a unique `tag`; with `--ttl` some write items already
expired. `--chaos kill` SIGKILLs the second worker every 2-4 s and starts it again;
`--chaos stop` pauses it (SIGSTOP, 0.5-3 s, SIGCONT). Then the stream is read from
TRIM_HORIZON through boto3's `dynamodbstreams` and checked:

- per item, sequence numbers increase, INSERT only after no item, each OldImage the
  NewImage before it, no record that changes nothing, the last NewImage the
  item as a consistent Scan finds it;
- each acknowledged write's tag is in exactly one record per item it wrote (a batch's
  UnprocessedItems excepted), a refused write's in none, an unanswered write's in none or
  all of its items.

Prints the counts and every problem; exits 1 when there is one. Run:

    uv run python benchmarks/stream_chaos.py [--seconds 40] [--threads 4] [--ttl] [--chaos kill|stop|none] [--seed 1]
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "0")  # before gRPC's import: the loader forks (load/encoder.py)

import boto3  # noqa: E402
from botocore.config import Config  # noqa: E402
from botocore.exceptions import ClientError  # noqa: E402

from ddb2bigtable.bigtable import emulator  # noqa: E402
from ddb2bigtable.bigtable.emulator import stop_process  # noqa: E402
from ddb2bigtable.load.local_stage import up  # noqa: E402
from tests.conftest import write_project  # noqa: E402
from tests.serve.conftest import start_serve  # noqa: E402
from tests.serve.streams.conftest import SPEC, STAGE  # noqa: E402
from tests.serve.streams.side_by_side import read_boto3  # noqa: E402

TABLE = "Chaos"
KEYS = [f"k{i}" for i in range(5)]
DEFINITE = ("ConditionalCheckFailedException", "TransactionCanceledException", "ValidationException",
            "TransactionConflictException")
SWEEP = ("--txn-sweep-seconds", "2")


def client(endpoint: str, service: str = "dynamodb") -> Any:
    return boto3.client(service, endpoint_url=endpoint, region_name="us-west-2", aws_access_key_id="chaos",
                        aws_secret_access_key="chaos", config=Config(retries={"max_attempts": 1, "mode": "standard"},
                                                                      read_timeout=5, connect_timeout=2))


class Run:
    """The workers, the log of answers and the chaos, for one run."""

    def __init__(self, root: Path, args: argparse.Namespace):
        self.root, self.args = root, args
        self.workers = [start_serve(root, STAGE, *SWEEP) for _ in range(2)]
        self.log: dict[str, list[tuple[str, ...]]] = {"acked": [], "refused": [], "ambiguous": []}
        self.lock = threading.Lock()
        self.stop_at = time.time() + args.seconds

    def endpoint(self, n: int) -> str:
        return self.workers[n % 2][1]

    def write(self, n: int) -> None:
        rnd, i = random.Random(self.args.seed * 100 + n), 0
        while time.time() < self.stop_at:
            i += 1
            c, tag, k = client(self.endpoint(n + i)), f"t{n}-{i}", rnd.choice(KEYS)
            k2 = rnd.choice([x for x in KEYS if x != k])
            exp = {"exp": {"N": str(int(time.time()) - 10)}} if self.args.ttl and rnd.random() < 0.15 else {}
            r = rnd.random()
            kind = "put" if r < 0.3 else "update" if r < 0.65 else "delete" if r < 0.75 else "pair" if r < 0.9 \
                else "batch"
            try:
                kind = self._one(c, r, tag, k, k2, exp)
                self._note("acked", (kind, tag, k))
            except ClientError as error:
                code = error.response["Error"]["Code"]
                self._note("refused" if code in DEFINITE else "ambiguous", (kind, tag, k, code))
            except Exception as error:  # noqa: BLE001 - a dropped connection: the write may or may not be there
                self._note("ambiguous", (kind, tag, k, type(error).__name__))

    def _one(self, c: Any, r: float, tag: str, k: str, k2: str, exp: dict[str, Any]) -> str:
        t = {"S": tag}
        if r < 0.3:
            c.put_item(TableName=TABLE, Item={"pk": {"S": k}, "tag": t, "n": {"N": str(int(r * 10))}} | exp)
            return "put"
        if r < 0.55:
            c.update_item(TableName=TABLE, Key={"pk": {"S": k}}, UpdateExpression="SET tag = :t ADD n :one",
                          ExpressionAttributeValues={":t": t, ":one": {"N": "1"}})
            return "update"
        if r < 0.65:
            c.update_item(TableName=TABLE, Key={"pk": {"S": k}}, UpdateExpression="SET tag = :t",
                          ConditionExpression="attribute_exists(pk)", ExpressionAttributeValues={":t": t})
            return "update"
        if r < 0.75:
            c.delete_item(TableName=TABLE, Key={"pk": {"S": k}})
            return "delete"
        if r < 0.9:
            c.transact_write_items(TransactItems=[
                {"Put": {"TableName": TABLE, "Item": {"pk": {"S": k}, "tag": t} | exp}},
                {"Update": {"TableName": TABLE, "Key": {"pk": {"S": k2}}, "UpdateExpression": "SET tag = :t",
                            "ExpressionAttributeValues": {":t": t}}}])
            return "pair"
        out = c.batch_write_item(RequestItems={TABLE: [{"PutRequest": {"Item": {"pk": {"S": x}, "tag": t}}}
                                                       for x in (k, k2)]})
        return f"batch-{2 - len(out.get('UnprocessedItems', {}).get(TABLE, []))}"

    def _note(self, outcome: str, entry: tuple[str, ...]) -> None:
        with self.lock:
            self.log[outcome].append(entry)

    def chaos(self) -> None:
        rnd = random.Random(self.args.seed)
        while time.time() < self.stop_at - 6:
            time.sleep(rnd.uniform(2, 4))
            process = self.workers[1][0]
            if self.args.chaos == "kill":
                os.kill(process.pid, signal.SIGKILL)
                process.wait()
                self.workers[1] = start_serve(self.root, STAGE, *SWEEP)
            else:
                os.kill(process.pid, signal.SIGSTOP)
                time.sleep(rnd.uniform(0.5, 3))
                os.kill(process.pid, signal.SIGCONT)


def problems(records: list[dict[str, Any]], final: dict[str, Any], log: dict[str, list[tuple[str, ...]]]) -> list[str]:
    """What the stream got wrong (see the module doc)."""
    per: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        per.setdefault(r["dynamodb"]["Keys"]["pk"]["S"], []).append(r)
    found = [f"{k}: an item without records" for k in final if k not in per]
    tags: Counter[str] = Counter()
    for k, chain in per.items():
        found += _chain(k, chain, final.get(k), tags)
    return found + _answers(log, tags)


def _chain(k: str, chain: list[dict[str, Any]], item: Any, tags: Counter[str]) -> list[str]:
    """One item's records: increasing, each following the one before, ending at the item;
    each one's tag counted."""
    found: list[str] = []
    before, last = None, 0
    for r in chain:
        d, event = r["dynamodb"], r["eventName"]
        if int(d["SequenceNumber"]) <= last:
            found.append(f"{k}: sequence number {d['SequenceNumber']} after {last}")
        last = int(d["SequenceNumber"])
        if (event == "INSERT") != (before is None) or (event != "INSERT" and d.get("OldImage") != before):
            found.append(f"{k}: {event} {d['SequenceNumber']} after {before}")
        if event == "MODIFY" and d.get("NewImage") == d.get("OldImage"):
            found.append(f"{k}: a record that changes nothing")
        before = d.get("NewImage")
        if event != "REMOVE":
            tags[d["NewImage"].get("tag", {}).get("S", "")] += 1
    if before != item:
        found.append(f"{k}: the item {item} is not its last NewImage {before}")
    return found


def _answers(log: dict[str, list[tuple[str, ...]]], tags: Counter[str]) -> list[str]:
    """Each write's records as its answer says: acknowledged, once per item it wrote;
    refused, none; unanswered, none or all."""
    found: list[str] = []
    for kind, tag, *_ in log["acked"]:
        want = int(kind.split("-")[1]) if kind.startswith("batch-") else 2 if kind == "pair" else 1
        if kind != "delete" and tags[tag] != want:
            found.append(f"acknowledged {kind} {tag}: {tags[tag]} records, not {want}")
    for kind, tag, _, code in log["refused"]:
        if tags[tag]:
            found.append(f"refused {kind} {tag} ({code}): {tags[tag]} records")
    for kind, tag, _, code in log["ambiguous"]:
        if tags[tag] not in ((0, 2) if kind == "pair" else (0, 1, 2) if kind == "batch" else (0, 1)):
            found.append(f"unanswered {kind} {tag} ({code}): {tags[tag]} records")
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=40.0)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--ttl", action="store_true")
    parser.add_argument("--chaos", choices=("none", "kill", "stop"), default="none")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    running = emulator.start()
    os.environ[emulator.EMULATOR_ENV] = running.address
    run = None
    try:
        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder)
            write_project(root, {"orders": SPEC}, {"emulator": True, "regions": "home", "deletion_protection": False,
                                                   "autoscaling": False}, stage_name=STAGE)
            assert up(root, STAGE).ok
            run = Run(root, args)
            db = client(run.endpoint(0))
            arn = db.create_table(
                TableName=TABLE, BillingMode="PAY_PER_REQUEST", KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
            )["TableDescription"]["LatestStreamArn"]
            if args.ttl:
                db.update_time_to_live(TableName=TABLE, TimeToLiveSpecification={"Enabled": True,
                                                                                 "AttributeName": "exp"})
            time.sleep(1.5)  # the other worker sees the table and its stream (stream_writes.REFRESH_SECONDS)
            threads = [threading.Thread(target=run.write, args=(n,)) for n in range(args.threads)]
            if args.chaos != "none":
                threads.append(threading.Thread(target=run.chaos))
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            time.sleep(15)  # expired locks settled and expired items swept by the workers
            db = client(run.endpoint(0))
            final = {item["pk"]["S"]: item for item in db.scan(TableName=TABLE, ConsistentRead=True)["Items"]}
            records = read_boto3(client(run.endpoint(0), "dynamodbstreams"), arn)
            found = problems(records, final, run.log)
            print(f"{args.seconds:.0f} s, {args.threads} threads, chaos {args.chaos}, ttl {args.ttl}: "
                  f"acknowledged {len(run.log['acked'])}, refused {len(run.log['refused'])}, unanswered "
                  f"{len(run.log['ambiguous'])}, records {len(records)}, problems {len(found)}")
            for line in found[:40]:
                print("  " + line)
            return 1 if found else 0
    finally:
        if run is not None:
            for process, _ in run.workers:
                stop_process(process)
        running.stop()


if __name__ == "__main__":
    sys.exit(main())
