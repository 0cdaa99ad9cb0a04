"""A stand-in for Bigtable's SQL RPCs on 127.0.0.1, because the Bigtable emulator lacks them.

The gcloud emulator (SDK 528.0.0) answers PrepareQuery with UNIMPLEMENTED ("the emulator
does not currently support PrepareQuery"), so serve's reading of a GSI's materialized view
cannot run on it. This gRPC server speaks google.bigtable.v2.Bigtable in the real proto
shapes of google-cloud-bigtable: PrepareQuery answers a ResultSetMetadata (BYTES columns
for the raw cells and the row key, FLOAT64 for an N key's number), a prepared-query token
and its `valid_until` (`valid_seconds` ahead); ExecuteQuery streams ProtoRows batches with
their CRC32C checksum and a resume token, as the client's reader checks them, and refuses
a token the test marked `expired` with FAILED_PRECONDITION (what Bigtable answers for an
expired prepared query is not documented where we looked: an assumption). A view is made by running the plan's own view SQL
(plan/tables.py `view_query`) in SQLite over the table's rows as the test read them from
the emulator, after three spellings are put in SQLite's words: `family['q']` is a column
of that cell, STRING is TEXT and FLOAT64 is REAL (an N key's `CAST(CAST(cell AS STRING) AS
FLOAT64)`); a whole-family column (projection all) is left out, serve does not read it.
Serve's SQL is then run by SQLite over that view (BLOB columns compare as memcmp,
Bigtable's byte order; REAL numerically; rows kept in the view's ORDER BY order), with the
`@name` parameters (BYTES or FLOAT64) bound from the request. Every other method
(ReadRows, MutateRow, CheckAndMutateRow, ...) is passed through, bytes for bytes, to the
real emulator, so the items come from a real Bigtable table.

What it does not prove: that Bigtable accepts the view's SQL or serve's statements
(SQLite's dialect is not GoogleSQL; the statements keep to what both share: backquoted
names, `@` parameters, comparisons, IS NOT NULL, AND/OR, LIMIT, CAST), that a real view is
kept up to date and keyed as its ORDER BY says, that GoogleSQL's CAST of a decimal string
to FLOAT64 rounds as SQLite's or Python's does (serve widens every float bound by one ulp
so that it need not; SQLite's own text-to-REAL conversion is not always correctly rounded),
the real service's batching, resume tokens and errors, or its latency.
"""

from __future__ import annotations

import datetime
import re
import sqlite3
import threading
from collections.abc import Iterator
from concurrent import futures
from typing import Any

import google_crc32c
import grpc
from google.cloud.bigtable_v2 import types as bt

SERVICE = "/google.bigtable.v2.Bigtable/"
STREAMED = {"ReadRows", "SampleRowKeys", "MutateRows", "GenerateInitialChangeStreamPartitions", "ReadChangeStream"}
BATCH_ROWS = 2  # rows per ProtoRows batch: small, so a page crosses batches


class SqlStandIn:
    def __init__(self, emulator: str):
        self.db = sqlite3.connect(":memory:", check_same_thread=False)
        self.lock = threading.Lock()
        self.prepared: dict[bytes, bt.PrepareQueryRequest] = {}
        self.prepares = 0  # PrepareQuery calls answered
        self.valid_seconds = 3600.0  # a prepared query's valid_until, from its PrepareQuery
        self.expired: set[bytes] = set()  # prepared queries ExecuteQuery refuses (FAILED_PRECONDITION)
        self.floats: set[str] = set()  # view columns of FLOAT64
        self.sent: list[int] = []  # rows each ExecuteQuery answered
        self.seen: list[tuple[bt.PrepareQueryRequest, bt.ExecuteQueryRequest]] = []  # each ExecuteQuery, prepared as
        self.upstream = grpc.insecure_channel(emulator)
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
        self.server.add_generic_rpc_handlers([_Handler(self)])
        self.port = self.server.add_insecure_port("127.0.0.1:0")
        self.server.start()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.server.stop(grace=None)
        self.upstream.close()

    def materialize(self, view: str, query: str, family: str, rows: list[tuple[bytes, dict[bytes, bytes]]]) -> None:
        """The view as its SQL makes it from the table's rows (row key, each qualifier of
        `family` to its latest value), replacing what it held."""
        cells = sorted(set(re.findall(rf"{family}\['([^']*)'\]", query)))
        sql = re.sub(rf"{family}\['([^']*)'\]", lambda m: f'"{family}:{m.group(1)}"', query)
        sql = re.sub(rf",\s*{family}\s+FROM `[^`]*`", " FROM source", sql).replace("AS STRING)", "AS TEXT)")
        sql = re.sub(r"FROM `[^`]*`", "FROM source", sql)
        self.floats |= set(re.findall(r"AS FLOAT64\) AS (\w+)", sql))
        sql = sql.replace("AS FLOAT64)", "AS REAL)")
        with self.lock:
            self.db.execute("DROP TABLE IF EXISTS source")
            declared = ", ".join(f'"{family}:{c}" BLOB' for c in cells)
            self.db.execute(f"CREATE TABLE source (_key BLOB, {declared})")
            self.db.executemany(f"INSERT INTO source VALUES ({', '.join('?' * (len(cells) + 1))})",
                                [(key, *(found.get(c.encode()) for c in cells)) for key, found in rows])
            self.db.execute(f"DROP TABLE IF EXISTS `{view}`")
            self.db.execute(f"CREATE TABLE `{view}` AS {sql}")

    def prepare(self, request: bt.PrepareQueryRequest, context: grpc.ServicerContext) -> bt.PrepareQueryResponse:
        kinds = {name: bt.Type.pb(kind).WhichOneof("kind") for name, kind in request.param_types.items()}
        if any(kind not in ("bytes_type", "float64_type") for kind in kinds.values()):
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"parameters must be BYTES or FLOAT64 here: {kinds}")
        with self.lock:
            try:
                cursor = self.db.execute(request.query, dict.fromkeys(request.param_types))
            except sqlite3.Error as error:  # a view not made: NOT_FOUND, as for a table ReadRows does not find
                missing = "no such table" in str(error)
                context.abort(grpc.StatusCode.NOT_FOUND if missing else grpc.StatusCode.INVALID_ARGUMENT,
                              f"{error}: {request.query}")
            names = [d[0] for d in cursor.description]
            token = f"q{len(self.prepared)}".encode()
            self.prepared[token] = request
            self.prepares += 1
        columns = [bt.ColumnMetadata(name=n, type_=bt.Type(float64_type=bt.Type.Float64()) if n in self.floats
                                     else bt.Type(bytes_type=bt.Type.Bytes())) for n in names]
        until = datetime.datetime.now(datetime.UTC) + datetime.timedelta(seconds=self.valid_seconds)
        return bt.PrepareQueryResponse(metadata=bt.ResultSetMetadata(proto_schema=bt.ProtoSchema(columns=columns)),
                                       prepared_query=token, valid_until=until)

    def execute(self, request: bt.ExecuteQueryRequest, context: grpc.ServicerContext
                ) -> Iterator[bt.ExecuteQueryResponse]:
        prepared = self.prepared.get(request.prepared_query)
        if prepared is None:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "unknown prepared query")
        if request.prepared_query in self.expired:
            context.abort(grpc.StatusCode.FAILED_PRECONDITION, "prepared query expired")
        self.seen.append((prepared, request))
        sql = prepared.query
        params = {name: getattr(bt.Value.pb(value), bt.Value.pb(value).WhichOneof("kind"))
                  for name, value in request.params.items()}
        with self.lock:
            try:
                rows = self.db.execute(sql, params).fetchall()
            except sqlite3.OperationalError as error:  # the view gone since the prepare: as PrepareQuery says it
                context.abort(grpc.StatusCode.NOT_FOUND, str(error))
        self.sent.append(len(rows))
        for start in range(0, len(rows), BATCH_ROWS):
            values = [_value(v) for row in rows[start:start + BATCH_ROWS] for v in row]
            data = bt.ProtoRows.serialize(bt.ProtoRows(values=values))
            yield bt.ExecuteQueryResponse(results=bt.PartialResultSet(
                proto_rows_batch=bt.ProtoRowsBatch(batch_data=data), batch_checksum=google_crc32c.value(data),
                resume_token=f"r{start}".encode()))
        if not rows:
            yield bt.ExecuteQueryResponse(results=bt.PartialResultSet(resume_token=b"r-end"))


def _value(value: bytes | float | None) -> bt.Value:
    if value is None:
        return bt.Value()
    return bt.Value(float_value=value) if isinstance(value, float) else bt.Value(bytes_value=value)


class _Handler(grpc.GenericRpcHandler):
    def __init__(self, owner: SqlStandIn):
        self.owner = owner

    def service(self, details: Any) -> Any:
        method: str = details.method
        name = method.removeprefix(SERVICE)
        if name == "PrepareQuery":
            return grpc.unary_unary_rpc_method_handler(self.owner.prepare, bt.PrepareQueryRequest.deserialize,
                                                       bt.PrepareQueryResponse.serialize)
        if name == "ExecuteQuery":
            return grpc.unary_stream_rpc_method_handler(self.owner.execute, bt.ExecuteQueryRequest.deserialize,
                                                        bt.ExecuteQueryResponse.serialize)
        if name in STREAMED:
            forward_stream = self.owner.upstream.unary_stream(method)

            def streamed(request: bytes, context: grpc.ServicerContext) -> Iterator[bytes]:
                try:
                    yield from forward_stream(request, timeout=30)
                except grpc.RpcError as error:
                    context.abort(error.code(), error.details())
            return grpc.unary_stream_rpc_method_handler(streamed)
        forward = self.owner.upstream.unary_unary(method)

        def unary(request: bytes, context: grpc.ServicerContext) -> bytes:
            try:
                return forward(request, timeout=30)
            except grpc.RpcError as error:
                context.abort(error.code(), error.details())
                raise
        return grpc.unary_unary_rpc_method_handler(unary)
