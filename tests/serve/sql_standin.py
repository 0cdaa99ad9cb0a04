"""A stand-in for Bigtable's SQL RPCs on 127.0.0.1, because the Bigtable emulator lacks them.

The gcloud emulator (SDK 528.0.0) answers PrepareQuery with UNIMPLEMENTED ("the emulator
does not currently support PrepareQuery"), so serve's reading of a GSI's materialized view
cannot run on it. This gRPC server speaks google.bigtable.v2.Bigtable in the real proto
shapes of google-cloud-bigtable: PrepareQuery answers a ResultSetMetadata (every column
BYTES, as the plan's view holds raw cells and the row key) and a prepared-query token;
ExecuteQuery streams ProtoRows batches with their CRC32C checksum and a resume token, as
the client's reader checks them. The SQL itself is run by SQLite over a view the test fills
(BLOB columns compare as memcmp, Bigtable's byte order; rows are kept in the view's key
order), with the `@name` parameters bound from the request. Every other method
(ReadRows, MutateRow, CheckAndMutateRow, ...) is passed through, bytes for bytes, to the
real emulator, so the items come from a real Bigtable table.

What it does not prove: that Bigtable's GoogleSQL accepts the statements (SQLite's dialect
is not GoogleSQL; the statements keep to what both share: backquoted names, `@` parameters,
comparisons, IS NOT NULL, AND/OR, LIMIT), that a real view is filled and ordered as the test
fills this one, the real service's batching, resume tokens and errors, or its latency.
"""

from __future__ import annotations

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
        self.prepared: dict[bytes, str] = {}
        self.seen: list[tuple[bt.PrepareQueryRequest, bt.ExecuteQueryRequest | None]] = []
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

    def fill(self, view: str, columns: tuple[str, ...], rows: list[tuple[bytes | None, ...]]) -> None:
        """The view's rows, replacing what it held, stored in its key order (a missing key
        cell first, as an absent value sorts lowest)."""
        with self.lock:
            self.db.execute(f"DROP TABLE IF EXISTS `{view}`")
            self.db.execute(f"CREATE TABLE `{view}` ({', '.join(f'`{c}` BLOB' for c in columns)})")
            ordered = sorted(rows, key=lambda r: tuple((v is not None, v or b"") for v in r))
            self.db.executemany(f"INSERT INTO `{view}` VALUES ({', '.join('?' * len(columns))})", ordered)

    def prepare(self, request: bt.PrepareQueryRequest, context: grpc.ServicerContext) -> bt.PrepareQueryResponse:
        kinds = {name: bt.Type.pb(kind).WhichOneof("kind") for name, kind in request.param_types.items()}
        if any(kind != "bytes_type" for kind in kinds.values()):
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"parameters must be BYTES here: {kinds}")
        with self.lock:
            try:
                cursor = self.db.execute(request.query, dict.fromkeys(request.param_types))
            except sqlite3.Error as error:  # a view not made: NOT_FOUND, as for a table ReadRows does not find
                missing = "no such table" in str(error)
                context.abort(grpc.StatusCode.NOT_FOUND if missing else grpc.StatusCode.INVALID_ARGUMENT,
                              f"{error}: {request.query}")
            names = [d[0] for d in cursor.description]
            token = f"q{len(self.prepared)}".encode()
            self.prepared[token] = request.query
        self.seen.append((request, None))
        columns = [bt.ColumnMetadata(name=n, type_=bt.Type(bytes_type=bt.Type.Bytes())) for n in names]
        return bt.PrepareQueryResponse(metadata=bt.ResultSetMetadata(proto_schema=bt.ProtoSchema(columns=columns)),
                                       prepared_query=token)

    def execute(self, request: bt.ExecuteQueryRequest, context: grpc.ServicerContext
                ) -> Iterator[bt.ExecuteQueryResponse]:
        sql = self.prepared.get(request.prepared_query)
        if sql is None:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "unknown prepared query")
        self.seen[-1] = (self.seen[-1][0], request)
        params = {name: bt.Value.pb(value).bytes_value for name, value in request.params.items()}
        with self.lock:
            rows = self.db.execute(sql, params).fetchall()
        for start in range(0, len(rows), BATCH_ROWS):
            values = [bt.Value(bytes_value=v) if v is not None else bt.Value() for row in rows[start:start + BATCH_ROWS]
                      for v in row]
            data = bt.ProtoRows.serialize(bt.ProtoRows(values=values))
            yield bt.ExecuteQueryResponse(results=bt.PartialResultSet(
                proto_rows_batch=bt.ProtoRowsBatch(batch_data=data), batch_checksum=google_crc32c.value(data),
                resume_token=f"r{start}".encode()))
        if not rows:
            yield bt.ExecuteQueryResponse(results=bt.PartialResultSet(resume_token=b"r-end"))


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
