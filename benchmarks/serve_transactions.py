"""A two-item transfer as one TransactWriteItems against the same two updates as plain
UpdateItems, on `serve` over the Bigtable emulator, in one run (issue 44: at least 0.25 of
their rate; Percolator's paper measured 0.23 of Bigtable's write rate, themis 0.18-0.27).

Each of `--threads` threads owns two accounts of its own (no conflicts: the protocol's cost,
not contention's) and repeats either a transfer between them (`balance >= :a` on the source,
an update of the destination) or the same two updates as two UpdateItems; the two kinds
take turns `--rounds` times, `--seconds` each, so both see the same machine. Reports the
rates and their ratio (transfers/s over pairs of UpdateItems/s), per round and the median.

One run starts its own Bigtable emulator (127.0.0.1, stopped by PID) and `serve --workers 1`
on a stage with the Movies spec (the accounts table is made through serve's CreateTable).

    uv run python benchmarks/serve_transactions.py [--seconds 5] [--threads 8] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "0")  # before gRPC's import: the loader forks (load/encoder.py)

from benchmarks.serve_throughput import client, drive, movies_stage, start_serve  # noqa: E402
from ddb2bigtable.bigtable import emulator  # noqa: E402

TABLE = "BenchAccounts"


def _update(account: str, sign: str, condition: bool) -> dict:
    body = {"TableName": TABLE, "Key": {"id": {"S": account}}, "UpdateExpression": f"SET balance = balance {sign} :a",
            "ExpressionAttributeValues": {":a": {"N": "1"}}}
    return body | ({"ConditionExpression": "balance >= :a"} if condition else {})


def transfer(c, rng, n: int) -> None:
    if n < 0:  # the untimed first call of every thread at once: a read, so lanes never meet
        c.get_item(TableName=TABLE, Key={"id": {"S": "t0a"}})
        return
    lane = n // 1_000_000
    src, dst = (f"t{lane}a", f"t{lane}b") if n % 2 else (f"t{lane}b", f"t{lane}a")
    c.transact_write_items(TransactItems=[{"Update": _update(src, "-", True)}, {"Update": _update(dst, "+", False)}])


def two_updates(c, rng, n: int) -> None:
    if n < 0:
        c.get_item(TableName=TABLE, Key={"id": {"S": "t0a"}})
        return
    lane = n // 1_000_000
    src, dst = (f"t{lane}a", f"t{lane}b") if n % 2 else (f"t{lane}b", f"t{lane}a")
    c.update_item(**_update(src, "-", True))
    c.update_item(**_update(dst, "+", False))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    bigtable, process = emulator.start(), None
    try:
        with tempfile.TemporaryDirectory() as tmp, emulator.pointed_at(bigtable.address):
            root = Path(tmp)
            movies_stage(root)
            process, endpoint = start_serve(root, 1)
            setup = client(endpoint)
            setup.create_table(TableName=TABLE, KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
                               AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
                               BillingMode="PAY_PER_REQUEST")
            for lane in range(args.threads):
                for side in "ab":
                    setup.put_item(TableName=TABLE, Item={"id": {"S": f"t{lane}{side}"}, "balance": {"N": "1000000"}})
            print(f"{args.threads} threads, {args.seconds:g} s per side and round, {os.cpu_count()} cores", flush=True)
            ratios = []
            for r in range(args.rounds):
                pairs = drive(endpoint, two_updates, args.threads, args.seconds)[0]
                transfers = drive(endpoint, transfer, args.threads, args.seconds)[0]
                ratios.append(transfers / pairs)
                print(f"round {r + 1}: two UpdateItems {pairs:7.1f} pairs/s  transfer {transfers:7.1f}/s  "
                      f"ratio {ratios[-1]:.2f}", flush=True)
            print(f"median ratio {statistics.median(ratios):.2f} (at least 0.25 asked)", flush=True)
    finally:
        if process is not None:
            emulator.stop_process(process)
        bigtable.stop()


if __name__ == "__main__":
    main()
