"""serve's own time per request: serve against the ideal proxy, in one run, one client thread.

The ideal proxy is what no proxy can beat: the same HTTP stack answering with no work (a
ServeApp whose every answer is canned: uvicorn, the same listening socket, the same
framing, the same boto3 client), followed by the raw Bigtable data client's own call for
the operation (the async client serve uses, the same row key and mutations). serve's own
time is its latency minus both; "of ideal" is (canned + raw) / serve (issue 42's goal: at
most 0.3 ms own per GetItem and PutItem, at least 0.9 of the ideal).

One run starts a Bigtable emulator (127.0.0.1, stopped by PID), loads AWS's Movies export
with the loader, starts `serve --workers 1` and the canned endpoint as processes of their
own, then makes `--calls` sequential calls per operation and side, the sides taking turns
call by call so the machine's noise reaches each alike: GetItem of a movie, PutItem of a
movie (the same item each time), Query of year 2013 with Limit 10. Each figure is the
median of a side's calls (a shared machine's pauses move the mean, not the median). Run:

    uv run python benchmarks/serve_overhead.py [--calls 2000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "0")  # before gRPC's import: the loader forks (load/encoder.py)

from serve_throughput import STAGE, client, movies_stage, start_serve  # noqa: E402

from ddb2bigtable.bigtable import emulator  # noqa: E402
from ddb2bigtable.cli.serve_cmd import _tables  # noqa: E402
from ddb2bigtable.serve.catalog import after_prefix, catalog  # noqa: E402
from ddb2bigtable.serve.protocol.app import TARGET_PREFIX, ServeApp, _request  # noqa: E402
from ddb2bigtable.serve.store import client_mutations  # noqa: E402
from ddb2bigtable.serve.wire import item_to_codec  # noqa: E402

CANNED_ENV = "DDB2BIGTABLE_CANNED_ANSWERS"  # the canned endpoint's answers by operation, as JSON
KEY = {"year": {"N": "2013"}, "title": {"S": "Rush"}}
ITEM = {**KEY, "info": {"M": {"rating": {"N": "8.3"}, "plot": {"S": "x" * 200}}}}
QUERY = {"KeyConditionExpression": "#y = :y", "ExpressionAttributeNames": {"#y": "year"},
         "ExpressionAttributeValues": {":y": {"N": "2013"}}, "Limit": 10}
OPERATIONS = ("GetItem", "PutItem", "Query")


class Canned(ServeApp):
    """The do-nothing endpoint: the request read as serve reads it, then a canned answer."""

    def __init__(self, answers: dict[str, Any]):
        super().__init__(lambda: None)  # type: ignore[arg-type, return-value]
        self.answers = answers

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        await super().__call__(scope, receive, send)

    async def _answer(self, scope: dict[str, Any], receive: Any) -> tuple[int, dict[str, Any]]:
        headers, raw = await _request(scope, receive)
        json.loads(raw)
        return 200, self.answers[headers["x-amz-target"].removeprefix(TARGET_PREFIX)]


def canned() -> Canned:
    """uvicorn's factory for the canned endpoint's process."""
    return Canned(json.loads(os.environ[CANNED_ENV]))


def start_canned(root: Path, answers: dict[str, Any]) -> tuple[subprocess.Popen, str]:
    """The canned endpoint on uvicorn with serve's own settings and listening socket."""
    port = emulator.free_port()
    code = ("import uvicorn; from ddb2bigtable.serve.protocol.server import listening_socket; "
            f"c = uvicorn.Config('serve_overhead:canned', factory=True, host='127.0.0.1', port={port}, "
            "log_level='warning', access_log=False, lifespan='on'); "
            f"uvicorn.Server(c).run(sockets=[listening_socket('127.0.0.1', {port})])")
    log = open(root / "canned.log", "ab")  # noqa: SIM115 - kept open while the endpoint runs
    process = subprocess.Popen([sys.executable, "-c", code], stdout=log, stderr=log, cwd=ROOT / "benchmarks",
                               env={**os.environ, CANNED_ENV: json.dumps(answers),
                                    "PYTHONPATH": f"{ROOT}:{ROOT / 'benchmarks'}"})
    emulator.wait_for_port("127.0.0.1", port, 60)
    return process, f"http://127.0.0.1:{port}"


def calls(c: Any) -> dict[str, Callable[[], Any]]:
    return {"GetItem": lambda: c.get_item(TableName="Movies", Key=KEY),
            "PutItem": lambda: c.put_item(TableName="Movies", Item=ITEM),
            "Query": lambda: c.query(TableName="Movies", **QUERY)}


def timed(call: Callable[[], Any]) -> float:
    """Seconds one call took."""
    began = time.perf_counter()
    call()
    return time.perf_counter() - began


class Raw:
    """The raw async data client's calls for the three operations, as serve would make them."""

    def __init__(self, root: Path):
        from google.cloud.bigtable.data import BigtableDataClientAsync, ReadRowsQuery, RowRange

        project, types, _ = _tables(root, STAGE)
        table = catalog(root, STAGE, types, project).get("Movies")
        self.loop = asyncio.new_event_loop()

        async def opened() -> tuple[Any, Any]:  # the client and its table belong to the loop they are made in
            made = BigtableDataClientAsync(project=project)
            return made, made.get_table(table.instance_id, table.spec.id)

        self.client, self.table = self.loop.run_until_complete(opened())
        self.row_key = table.row_key(item_to_codec(KEY))
        now = int(time.time() * 1e6)
        written = table.codec.encode(item_to_codec(ITEM), write_time_micros=now, now_micros=now, replace=True)
        self.mutations = client_mutations(written)
        prefix = table.row_key(item_to_codec({"year": KEY["year"], "title": {"S": ""}}))
        self.query = ReadRowsQuery(row_ranges=[RowRange(prefix, after_prefix(prefix))], limit=10)

    def calls(self) -> dict[str, Callable[[], Any]]:
        run = self.loop.run_until_complete
        return {"GetItem": lambda: run(self.table.read_row(self.row_key)),
                "PutItem": lambda: run(self.table.mutate_row(self.row_key, self.mutations)),
                "Query": lambda: run(self.table.read_rows(self.query))}

    def close(self) -> None:
        self.loop.run_until_complete(self.client.close())
        self.loop.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    bigtable, processes = emulator.start(), []
    try:
        with tempfile.TemporaryDirectory() as tmp, emulator.pointed_at(bigtable.address):
            root = Path(tmp)
            movies_stage(root)
            process, endpoint = start_serve(root, 1)
            processes.append(process)
            serve = calls(client(endpoint))
            answers = {name: {k: v for k, v in call().items() if k != "ResponseMetadata"}
                       for name, call in serve.items()}
            assert answers["GetItem"].get("Item") and len(answers["Query"]["Items"]) == 10, answers
            process, endpoint = start_canned(root, answers)
            processes.append(process)
            raw = Raw(root)
            sides = {"serve": serve, "canned": calls(client(endpoint)), "raw Bigtable": raw.calls()}
            for side in sides.values():
                for call in side.values():
                    for _ in range(20):
                        timed(call)  # connections made, first calls out of the way
            took: dict[tuple[str, str], list[float]] = {}
            for operation in OPERATIONS:
                for _ in range(args.calls):
                    for side, made in sides.items():
                        took.setdefault((operation, side), []).append(timed(made[operation]))
            raw.close()
            print(f"{args.calls} calls per operation and side, one client thread, {os.cpu_count()} cores, "
                  f"load average {os.getloadavg()[0]:.1f}")
            for operation in OPERATIONS:
                ms = {side: statistics.median(took[(operation, side)]) * 1000 for side in sides}
                ideal = ms["canned"] + ms["raw Bigtable"]
                print(f"{operation:8} serve {ms['serve']:5.2f} ms  canned {ms['canned']:5.2f} ms  raw Bigtable "
                      f"{ms['raw Bigtable']:5.2f} ms  serve's own {ms['serve'] - ideal:5.2f} ms  "
                      f"of ideal {ideal / ms['serve']:.2f}", flush=True)
    finally:
        for process in processes:
            emulator.stop_process(process)
        bigtable.stop()


if __name__ == "__main__":
    main()
