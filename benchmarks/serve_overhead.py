"""serve's own time per request: serve against the ideal proxy, in one run, one client thread.

The ideal proxy is what no proxy can beat: the same HTTP stack answering with no work (a
ServeApp whose every answer is canned: uvicorn with serve's own protocol, settings and
listening socket, the same boto3 client), followed by the Bigtable calls the operation
cannot do without, made by the *synchronous* raw client (the GAPIC `BigtableClient` of
google-cloud-bigtable on one plain gRPC channel: no retry wrapper, no row merger, no
client-side metrics): the physical floor (issue 54). serve's own time is its latency
minus both; "ratio" is (canned + raw) / serve (issue 54's goal: at most 0.3 ms own per
GetItem and PutItem, a ratio of about 0.8, at most 0.5 ms on the others).

Beside it, as issue 42 measured it ("async ideal"): canned plus the *async data client*
serve itself used until issue 54 (`BigtableDataClientAsync`, the same calls with its
retries, row merging and metrics), which counts that client's own Python as ideal.

The calls per operation, on the emulator with AWS's Movies export loaded:

| operation | serve's request | the floor's calls |
|---|---|---|
| GetItem | a movie by key | ReadRows of its row (serve's item filter) |
| PutItem | the same movie item each time | MutateRow of the item's cells |
| UpdateItem | `SET plays = :n` if `attribute_exists(title)` | ReadRows of the row, then CheckAndMutateRow |
| Query | year 2013, Limit 10 (one page) | ReadRows of the year's key range, limit 10 |
| BatchGetItem | 25 movies by key | ReadRows of the 25 rows |

One run starts a Bigtable emulator (127.0.0.1, stopped by PID), loads Movies with the
loader, starts `serve --workers 1` and the canned endpoint as processes of their own, then
makes `--calls` sequential calls per operation and side in each of `--rounds` rounds, the
sides taking turns call by call so the machine's noise reaches each alike. Each figure is
the median of a side's calls (a shared machine's pauses move the mean, not the median).
Run:

    uv run python benchmarks/serve_overhead.py [--calls 1000] [--rounds 3] [--tree CHECKOUT] [--before CHECKOUT]

(`--tree`: serve's code from another checkout, such as `git archive` of an earlier commit;
`--before CHECKOUT` adds that checkout's serve as a fifth side, "serve before", taking its
turn with the others: a before and after in one run.)
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
from ddb2bigtable.serve.catalog import ServedTable, after_prefix, catalog  # noqa: E402
from ddb2bigtable.serve.protocol.app import TARGET_PREFIX, ServeApp, _request  # noqa: E402
from ddb2bigtable.serve.store import client_mutations, item_cells, raw_cells, unchanged_filter  # noqa: E402
from ddb2bigtable.serve.wire import item_to_codec  # noqa: E402

CANNED_ENV = "DDB2BIGTABLE_CANNED_ANSWERS"  # the canned endpoint's answers by operation, as JSON
KEY = {"year": {"N": "2013"}, "title": {"S": "Rush"}}
ITEM = {**KEY, "info": {"M": {"rating": {"N": "8.3"}, "plot": {"S": "x" * 200}}}}
QUERY = {"KeyConditionExpression": "#y = :y", "ExpressionAttributeNames": {"#y": "year"},
         "ExpressionAttributeValues": {":y": {"N": "2013"}}, "Limit": 10}
UPDATE = {"UpdateExpression": "SET plays = :n", "ConditionExpression": "attribute_exists(title)",
          "ExpressionAttributeValues": {":n": {"N": "1"}}}
BATCH = 25
OPERATIONS = ("GetItem", "PutItem", "UpdateItem", "Query", "BatchGetItem")
SECONDS = 10.0  # every raw call's deadline
FLOOR = ("canned", "raw sync", "raw async")


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
    """The canned endpoint on uvicorn with serve's own protocol, settings and listening socket."""
    port = emulator.free_port()
    code = ("import uvicorn; from ddb2bigtable.serve.protocol.server import listening_socket; "
            "from ddb2bigtable.serve.protocol.connections import ServeConfig; "
            "from ddb2bigtable.serve.protocol.limits import Guard; "
            f"c = ServeConfig('serve_overhead:canned', Guard(), factory=True, host='127.0.0.1', port={port}, "
            "log_level='warning', access_log=False, lifespan='on'); "
            f"uvicorn.Server(c).run(sockets=[listening_socket('127.0.0.1', {port})])")
    log = open(root / "canned.log", "ab")  # noqa: SIM115 - kept open while the endpoint runs
    process = subprocess.Popen([sys.executable, "-c", code], stdout=log, stderr=log, cwd=ROOT / "benchmarks",
                               env={**os.environ, CANNED_ENV: json.dumps(answers),
                                    "PYTHONPATH": f"{ROOT}:{ROOT / 'benchmarks'}"})
    emulator.wait_for_port("127.0.0.1", port, 60)
    return process, f"http://127.0.0.1:{port}"


def calls(c: Any, keys: list[dict[str, Any]]) -> dict[str, Callable[[], Any]]:
    return {"GetItem": lambda: c.get_item(TableName="Movies", Key=KEY),
            "PutItem": lambda: c.put_item(TableName="Movies", Item=ITEM),
            "UpdateItem": lambda: c.update_item(TableName="Movies", Key=KEY, **UPDATE),
            "Query": lambda: c.query(TableName="Movies", **QUERY),
            "BatchGetItem": lambda: c.batch_get_item(RequestItems={"Movies": {"Keys": keys}})}


def timed(call: Callable[[], Any]) -> float:
    """Seconds one call took."""
    began = time.perf_counter()
    call()
    return time.perf_counter() - began


class Requests:
    """The Bigtable requests each operation needs, made once from the served table."""

    def __init__(self, table: ServedTable, keys: list[dict[str, Any]]):
        self.table = table
        self.row_key = table.row_key(item_to_codec(KEY))
        self.batch_keys = [table.row_key(item_to_codec(k)) for k in keys]
        now = int(time.time() * 1e6)
        written = table.codec.encode(item_to_codec(ITEM), write_time_micros=now, now_micros=now, replace=True)
        self.mutations = client_mutations(written)
        self.items = item_cells(table.families)
        self.prefix = table.row_key(item_to_codec({"year": KEY["year"], "title": {"S": ""}}))


class SyncRaw:
    """The floor: the synchronous GAPIC client's calls on one plain gRPC channel, each
    request's protobuf made once (what no client library can do with less)."""

    def __init__(self, made: Requests, project: str, guard_cells: list[Any]):
        import grpc
        from google.cloud.bigtable_v2 import BigtableClient
        from google.cloud.bigtable_v2.services.bigtable.transports import BigtableGrpcTransport
        from google.cloud.bigtable_v2.types import bigtable as pb

        self.channel = grpc.insecure_channel(os.environ["BIGTABLE_EMULATOR_HOST"])
        self.gapic = BigtableClient(transport=BigtableGrpcTransport(channel=self.channel))
        name = self.gapic.table_path(project, made.table.instance_id, made.table.spec.id)
        items = made.items._to_pb()
        mutations = [m._to_pb() for m in made.mutations]
        self.read = pb.ReadRowsRequest(table_name=name, rows={"row_keys": [made.row_key]}, rows_limit=1, filter=items)
        self.put = pb.MutateRowRequest(table_name=name, row_key=made.row_key, mutations=mutations)
        guard = unchanged_filter(guard_cells, None)._to_pb()
        self.check = pb.CheckAndMutateRowRequest(table_name=name, row_key=made.row_key, predicate_filter=guard,
                                                 true_mutations=mutations)
        self.query = pb.ReadRowsRequest(table_name=name, rows={"row_ranges": [
            {"start_key_closed": made.prefix, "end_key_open": after_prefix(made.prefix)}]}, rows_limit=10, filter=items)
        self.batch = pb.ReadRowsRequest(table_name=name, rows={"row_keys": made.batch_keys}, filter=items)

    def _rows(self, request: Any) -> int:
        return sum(len(r.chunks) for r in self.gapic.read_rows(request=request, retry=None, timeout=SECONDS))

    def calls(self) -> dict[str, Callable[[], Any]]:
        def update() -> None:
            self._rows(self.read)
            self.gapic.check_and_mutate_row(request=self.check, retry=None, timeout=SECONDS)

        return {"GetItem": lambda: self._rows(self.read),
                "PutItem": lambda: self.gapic.mutate_row(request=self.put, retry=None, timeout=SECONDS),
                "UpdateItem": update, "Query": lambda: self._rows(self.query),
                "BatchGetItem": lambda: self._rows(self.batch)}

    def close(self) -> None:
        self.channel.close()


class AsyncRaw:
    """Issue 42's ideal: the async data client's calls for the operations, as serve made them."""

    def __init__(self, made: Requests, project: str):
        from google.cloud.bigtable.data import BigtableDataClientAsync, ReadRowsQuery, RowRange

        self.loop = asyncio.new_event_loop()
        self.made = made

        async def opened() -> tuple[Any, Any]:  # the client and its table belong to the loop they are made in
            client = BigtableDataClientAsync(project=project)
            return client, client.get_table(made.table.instance_id, made.table.spec.id)

        self.client, self.table = self.loop.run_until_complete(opened())
        self.query = ReadRowsQuery(row_ranges=[RowRange(made.prefix, after_prefix(made.prefix))], limit=10,
                                   row_filter=made.items)
        self.batch = ReadRowsQuery(row_keys=made.batch_keys, row_filter=made.items)
        # the row's cells as a writer reads them: what an UpdateItem's guard compares
        self.guard = raw_cells(self.loop.run_until_complete(self.table.read_row(made.row_key)))

    def calls(self) -> dict[str, Callable[[], Any]]:
        run, made = self.loop.run_until_complete, self.made

        async def update() -> None:
            await self.table.read_row(made.row_key, row_filter=made.items)
            await self.table.check_and_mutate_row(made.row_key, unchanged_filter(self.guard, None),
                                                  true_case_mutations=made.mutations)

        return {"GetItem": lambda: run(self.table.read_row(made.row_key, row_filter=made.items)),
                "PutItem": lambda: run(self.table.mutate_row(made.row_key, made.mutations)),
                "UpdateItem": lambda: run(update()),
                "Query": lambda: run(self.table.read_rows(self.query)),
                "BatchGetItem": lambda: run(self.table.read_rows(self.batch))}

    def close(self) -> None:
        self.loop.run_until_complete(self.client.close())
        self.loop.close()


def report(took: dict[tuple[str, str], list[float]], serves: list[str]) -> None:
    """Each operation's medians, serve's own time, and the ratios to both ideals, a line per
    serve side."""
    columns = ("serve", "canned", "raw sync", "raw async", "own", "ratio", "serve/s", "ideal/s", "async ratio")
    print(f"{'':22}" + "".join(f"{c:>12}" for c in columns))
    for operation in OPERATIONS:
        ms = {side: statistics.median(took[(operation, side)]) * 1000 for side in (*serves, *FLOOR)}
        ideal = ms["canned"] + ms["raw sync"]
        for serve in serves:
            figures = [f"{ms[s]:.2f} ms" for s in (serve, *FLOOR)] + [
                f"{ms[serve] - ideal:.2f} ms", f"{ideal / ms[serve]:.2f}", f"{1000 / ms[serve]:.0f}",
                f"{1000 / ideal:.0f}", f"{(ms['canned'] + ms['raw async']) / ms[serve]:.2f}"]
            print(f"{operation:13}{serve.removeprefix('serve'):>9}" + "".join(f"{f:>12}" for f in figures), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tree", type=Path, default=ROOT,
                        help="run serve from this checkout (another commit's code, the same environment)")
    parser.add_argument("--before", type=Path,
                        help="also run serve from this checkout, as the side 'serve before', in the same turns")
    args = parser.parse_args()
    bigtable, processes = emulator.start(), []
    try:
        with tempfile.TemporaryDirectory() as tmp, emulator.pointed_at(bigtable.address):
            root = Path(tmp)
            movies_stage(root)
            process, endpoint = start_serve(root, 1, args.tree)
            processes.append(process)
            boto = client(endpoint)
            keys = [{"year": i["year"], "title": i["title"]}
                    for i in boto.query(TableName="Movies", **{**QUERY, "Limit": BATCH})["Items"]]
            serve = calls(boto, keys)
            answers = {name: {k: v for k, v in call().items() if k != "ResponseMetadata"}
                       for name, call in serve.items()}
            assert answers["GetItem"].get("Item") and len(answers["Query"]["Items"]) == 10, answers
            assert len(answers["BatchGetItem"]["Responses"]["Movies"]) == BATCH, answers
            process, endpoint = start_canned(root, answers)
            processes.append(process)
            project, types, _ = _tables(root, STAGE)
            made = Requests(catalog(root, STAGE, types, project).get("Movies"), keys)
            async_raw = AsyncRaw(made, project)
            sync_raw = SyncRaw(made, project, async_raw.guard)
            sides = {"serve": serve, "canned": calls(client(endpoint), keys), "raw sync": sync_raw.calls(),
                     "raw async": async_raw.calls()}
            if args.before:
                process, endpoint = start_serve(root, 1, args.before)
                processes.append(process)
                sides["serve before"] = calls(client(endpoint), keys)
            for side in sides.values():
                for call in side.values():
                    for _ in range(20):
                        timed(call)  # connections made, first calls out of the way
            for round_ in range(1, args.rounds + 1):
                took: dict[tuple[str, str], list[float]] = {}
                for operation in OPERATIONS:
                    for _ in range(args.calls):
                        for side, made_calls in sides.items():
                            took.setdefault((operation, side), []).append(timed(made_calls[operation]))
                print(f"round {round_}: {args.calls} calls per operation and side, one client thread, "
                      f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
                report(took, [side for side in sides if side.startswith("serve")])
            sync_raw.close()
            async_raw.close()
    finally:
        for process in processes:
            emulator.stop_process(process)
        bigtable.stop()


if __name__ == "__main__":
    main()
