"""A Bigtable with change streams for the cloud backend's tests: an in-process gRPC server
speaking Bigtable's v2 API (google.bigtable.v2.Bigtable, the messages of google-cloud-bigtable's
protos), which answers GenerateInitialChangeStreamPartitions and ReadChangeStream itself and
passes every other call of every service through to the real emulator (which has no change
streams: its GenerateInitialChangeStreamPartitions crashes), so serve's registry reads and
writes land in the emulator as on any stage.

Its change streams behave as Google's API reference describes ReadChangeStream
(https://cloud.google.com/bigtable/docs/reference/data/rpc/google.bigtable.v2, read
2026-12-07): a request names one partition and starts from a time or from continuation
tokens that must cover the partition; data changes come in commit order, a change's last
message `done` with a token to resume after it; a Heartbeat with the partition's token every
`heartbeat_duration` once caught up; a partition split or merged ends its stream with a
CloseStream (status OUT_OF_RANGE) naming the new partitions and the continuation tokens
whose ranges cover them; `end_time` reached ends it with status OK and nothing else. Tokens
are this server's own opaque strings, as Bigtable's are to a client.
"""

from __future__ import annotations

import threading
import time
from concurrent import futures
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import grpc
from google.cloud.bigtable_v2.types import (
    GenerateInitialChangeStreamPartitionsRequest,
    GenerateInitialChangeStreamPartitionsResponse,
    Mutation,
    ReadChangeStreamRequest,
    ReadChangeStreamResponse,
    RowRange,
    StreamContinuationToken,
    StreamPartition,
)
from google.protobuf import timestamp_pb2

from ddb2bigtable.codec.mutations import SetCell

R = ReadChangeStreamResponse
SERVICE = "google.bigtable.v2.Bigtable"
STREAMED = {"ReadRows", "SampleRowKeys", "MutateRows", "ReadChangeStream", "GenerateInitialChangeStreamPartitions",
            "ExecuteQuery"}  # the server-streaming methods of google.bigtable.v2.Bigtable
OUT_OF_RANGE = 11  # google.rpc.Code: a partition's stream ends because its range changed


def proto_range(start: bytes, end: bytes) -> StreamPartition:
    return StreamPartition(row_range=RowRange(start_key_closed=start, end_key_open=end))


def _bounds(partition: StreamPartition) -> tuple[bytes, bytes]:
    rows = partition.row_range
    return rows.start_key_closed or rows.start_key_open, rows.end_key_open or rows.end_key_closed


def _token(bounds: tuple[bytes, bytes], offset: int) -> str:
    return f"{bounds[0].hex()}-{bounds[1].hex()}@{offset}"


def _covers(bounds: tuple[bytes, bytes], ranges: list[tuple[bytes, bytes]]) -> bool:
    reach: bytes | None = bounds[0]
    for start, end in sorted(ranges):
        if reach is None or start > reach:
            break
        reach = max(reach, end) if end else None
    return reach is None or bool(bounds[1] and reach >= bounds[1])


@dataclass
class Log:
    """One partition's changes (each a list of messages, the last `done`) and its end."""

    changes: list[tuple[int, list[R]]] = field(default_factory=list)  # (commit micros, messages)
    close: R | None = None


@dataclass
class ChangeStreams:
    """The partitions and their logs; what the tests commit and split, what the server reads."""

    partitions: list[tuple[bytes, bytes]]
    logs: dict[tuple[bytes, bytes], Log] = field(default_factory=dict)
    requests: list[ReadChangeStreamRequest] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        for bounds in self.partitions:
            self.logs.setdefault(bounds, Log())

    def holding(self, row: bytes) -> tuple[bytes, bytes]:
        return next(b for b in self.partitions if b[0] <= row and (not b[1] or row < b[1]))

    def commit(self, row: bytes, cells: list[SetCell], *, chunk: int = 0, kind: int = R.DataChange.Type.USER) -> int:
        """One row's mutation committed now: the DataChange its partition streams (its
        SetCells' values in chunks of `chunk` bytes over several messages when given)."""
        micros = time.time_ns() // 1000
        chunks = []
        for cell in cells:
            value = cell.value
            pieces = [value[i:i + chunk] for i in range(0, len(value), chunk)] if chunk and len(value) > chunk \
                else [value]
            for n, piece in enumerate(pieces):
                info = R.MutationChunk.ChunkInfo(chunked_value_size=len(value), chunked_value_offset=n * chunk,
                                                 last_chunk=n == len(pieces) - 1) if len(pieces) > 1 else None
                chunks.append(R.MutationChunk(chunk_info=info, mutation=Mutation(set_cell=Mutation.SetCell(
                    family_name=cell.family, column_qualifier=cell.qualifier, value=piece,
                    timestamp_micros=micros // 1000 * 1000))))
        stamp = timestamp_pb2.Timestamp(seconds=micros // 1_000_000, nanos=micros % 1_000_000 * 1000)
        with self.lock:
            bounds = self.holding(row)
            log = self.logs[bounds]
            messages = [R(data_change=R.DataChange(type_=kind, row_key=row, commit_timestamp=stamp, tiebreaker=0,
                                                   chunks=[c], done=False)) for c in chunks]
            messages[-1].data_change.done = True
            messages[-1].data_change.token = _token(bounds, len(log.changes) + 1)
            log.changes.append((micros, messages))
        return micros

    def change_partitions(self, closing: list[tuple[bytes, bytes]], opened: list[tuple[bytes, bytes]]) -> None:
        """A split or merge: each closing partition's stream ends with a CloseStream naming the
        new partitions and a token for the part of each new partition the closing one held."""
        with self.lock:
            for old in closing:
                tokens = []
                for new in opened:
                    start, end = max(old[0], new[0]), min(old[1] or new[1], new[1] or old[1])
                    if not end or start < end:
                        tokens.append(StreamContinuationToken(partition=proto_range(start, end),
                                                              token=_token(new, 0)))
                self.logs[old].close = R(close_stream=R.CloseStream(
                    status={"code": OUT_OF_RANGE}, continuation_tokens=tokens,
                    new_partitions=[proto_range(*n) for n in opened]))
            self.partitions = [p for p in self.partitions if p not in closing] + list(opened)
            for new in opened:
                self.logs.setdefault(new, Log())

    def read(self, request: ReadChangeStreamRequest, context: grpc.ServicerContext):
        bounds = _bounds(request.partition)
        with self.lock:
            self.requests.append(request)
            log = self.logs.get(bounds)
        if log is None:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"no partition {bounds}")
        if "continuation_tokens" in request:
            tokens = list(request.continuation_tokens.tokens)
            if not _covers(bounds, [_bounds(t.partition) for t in tokens]) \
                    or any(t.token.rsplit("@", 1)[0] != _token(bounds, 0).rsplit("@", 1)[0] for t in tokens):
                context.abort(grpc.StatusCode.INVALID_ARGUMENT, "the continuation tokens do not cover the partition")
            offset = max(int(t.token.rsplit("@", 1)[1]) for t in tokens)
        else:
            since = request.start_time.timestamp() * 1_000_000 if "start_time" in request else 0
            offset = next((i for i, (micros, _) in enumerate(log.changes) if micros >= since), len(log.changes))
        until = request.end_time.timestamp() * 1_000_000 if "end_time" in request else None
        beat = request.heartbeat_duration.total_seconds() if "heartbeat_duration" in request else 1.0
        while context.is_active():
            with self.lock:
                pending, close = log.changes[offset:], log.close
            for micros, messages in pending:
                if until is not None and micros >= until:
                    yield R(close_stream=R.CloseStream(status={"code": 0}))
                    return
                yield from messages
                offset += 1
            if close is not None and offset == len(log.changes):
                yield close
                return
            yield R(heartbeat=R.Heartbeat(
                continuation_token=StreamContinuationToken(partition=request.partition, token=_token(bounds, offset)),
                estimated_low_watermark=datetime.now(UTC) - timedelta(seconds=1)))
            time.sleep(beat)

    def initial(self, request: GenerateInitialChangeStreamPartitionsRequest, context: grpc.ServicerContext):
        with self.lock:
            found = list(self.partitions)
        for bounds in found:
            yield GenerateInitialChangeStreamPartitionsResponse(partition=proto_range(*bounds))


class _Handler(grpc.GenericRpcHandler):
    def __init__(self, streams: ChangeStreams, emulator: str):
        self.streams = streams
        self.channel = grpc.insecure_channel(emulator)

    def service(self, details: grpc.HandlerCallDetails):
        service, method = details.method.strip("/").split("/")
        if service == SERVICE and method == "ReadChangeStream":
            return grpc.unary_stream_rpc_method_handler(self.streams.read, ReadChangeStreamRequest.deserialize,
                                                        ReadChangeStreamResponse.serialize)
        if service == SERVICE and method == "GenerateInitialChangeStreamPartitions":
            return grpc.unary_stream_rpc_method_handler(
                self.streams.initial, GenerateInitialChangeStreamPartitionsRequest.deserialize,
                GenerateInitialChangeStreamPartitionsResponse.serialize)
        if service == SERVICE and method in STREAMED:
            call = self.channel.unary_stream(details.method)

            def streamed(request: bytes, context: grpc.ServicerContext):
                try:
                    yield from call(request, timeout=60)
                except grpc.RpcError as error:
                    context.abort(error.code(), error.details())
            return grpc.unary_stream_rpc_method_handler(streamed)
        unary = self.channel.unary_unary(details.method)

        def forwarded(request: bytes, context: grpc.ServicerContext) -> bytes:
            try:
                return unary(request, timeout=60)
            except grpc.RpcError as error:
                context.abort(error.code(), error.details())
                raise
        return grpc.unary_unary_rpc_method_handler(forwarded)


def start(streams: ChangeStreams, emulator: str) -> tuple[grpc.Server, str]:
    """The server on 127.0.0.1 and a free port; stop it with `.stop(0)`."""
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=16), handlers=[_Handler(streams, emulator)])
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    return server, f"127.0.0.1:{port}"
