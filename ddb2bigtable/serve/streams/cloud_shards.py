"""Cloud stages: the registry of a stream's shards and their parents (docs/streams.md).

A cloud stream's shards are Bigtable's change-stream partitions, which only Bigtable knows:
the first ones come from GenerateInitialChangeStreamPartitions, the later ones from the
CloseStream a partition ends with when Bigtable splits or merges it. Every worker must list
the same shards with the same parents, so both are kept in the instance's registry of
streams (`registry.REGISTRY_ID`), one row per stream (`<table> NUL shards NUL <label>`: no
table name holds NUL, so it never meets a table's own row), one cell of JSON: the initial
partitions, then each CloseStream as Bigtable sent it (serialized) with the partition it
closed and when serve read it. Appending is a conditional write on the row as read, so two
workers that meet the same CloseStream record it once. `partitions.py` turns the lineage
into shards (pure); this module reads, extends and saves it.
"""

from __future__ import annotations

import base64
import json
import time
from dataclasses import dataclass
from typing import Any

from google.cloud.bigtable_v2.types import ReadChangeStreamResponse, StreamContinuationToken

from ...bigtable.deadlines import SCAN_SECONDS
from ...codec.mutations import DeleteRow, RowMutation, SetCell
from ..errors import ServeError
from ..session import Session
from ..store import bigtable_errors, raw_cells
from .partitions import Partition, partition_of, shards
from .positions import at_time
from .registry import REGISTRY_ID, Stream, registry_store
from .scan_source import Shard

FAMILY, QUALIFIER = "s", b"shards"
WRITE_ATTEMPTS = 5  # conditional appends lost to another worker's, retried on the row as read again


@dataclass(frozen=True)
class Closed:
    """A partition's end: the CloseStream that ended it (serialized ReadChangeStreamResponse)."""

    partition: Partition
    message: bytes
    closed_ms: int

    def response(self) -> ReadChangeStreamResponse:
        return ReadChangeStreamResponse.deserialize(self.message)


@dataclass(frozen=True)
class Lineage:
    """Everything a stream's shards follow from."""

    initial: tuple[Partition, ...]
    closes: tuple[Closed, ...]

    def shards(self, stream: Stream) -> list[Shard]:
        """The shards as DescribeStream lists them, parents before children; a shard's index is
        its place here, which never changes (the lineage only grows)."""
        opened = {p: stream.created_ms for p in self.initial}
        ended: dict[Partition, int] = {}
        for close in self.closes:
            ended.setdefault(close.partition, close.closed_ms)
            for new in close.response().close_stream.new_partitions:
                opened.setdefault(partition_of(new), close.closed_ms)
        listed = shards(stream.created_ms, self.initial, [(c.partition, c.response()) for c in self.closes])
        return [Shard(s.id, index, at_time(opened[s.partition] * 1000),
                      at_time(ended[s.partition] * 1000) if s.partition in ended else None, s.parent)
                for index, s in enumerate(listed)]

    def partition(self, stream: Stream, index: int) -> Partition | None:
        listed = shards(stream.created_ms, self.initial, [(c.partition, c.response()) for c in self.closes])
        return listed[index].partition if 0 <= index < len(listed) else None

    def start_tokens(self, partition: Partition) -> list[StreamContinuationToken] | None:
        """Where a child partition's reading starts: its parents' continuation tokens covering
        it; [] for an initial partition (it starts from a time); None while they do not cover
        it yet (a merge whose other parent has not closed: its records wait, docs/streams.md)."""
        if partition in self.initial:
            return []
        tokens = [token for close in (c.response().close_stream for c in self.closes)
                  if partition in {partition_of(p) for p in close.new_partitions}
                  for token in close.continuation_tokens if partition.holds(partition_of(token.partition).start)]
        reach: bytes | None = partition.start  # covered from the partition's start up to here; None: to the end
        for covered in sorted((partition_of(t.partition) for t in tokens), key=lambda p: p.start):
            if reach is None or (partition.end and reach >= partition.end):
                break
            if covered.start > reach:
                return None  # a gap: a parent that holds it has not closed yet
            reach = max(reach, covered.end) if covered.end else None
        if reach is not None and (not partition.end or reach < partition.end):
            return None
        return tokens


def _key(stream: Stream) -> bytes:
    return f"{stream.table}\0shards\0{stream.label}".encode()


def _encoded(lineage: Lineage) -> bytes:
    def rows(p: Partition) -> list[str]:
        return [base64.b64encode(p.start).decode(), base64.b64encode(p.end).decode()]
    return json.dumps({"initial": [rows(p) for p in lineage.initial],
                       "closes": [{"partition": rows(c.partition), "message": base64.b64encode(c.message).decode(),
                                   "closed_ms": c.closed_ms} for c in lineage.closes]}).encode()


def _decoded(stream: Stream, value: bytes) -> Lineage:
    def partition(rows: list[str]) -> Partition:
        return Partition(base64.b64decode(rows[0]), base64.b64decode(rows[1]))
    try:
        raw = json.loads(value)
        return Lineage(tuple(partition(p) for p in raw["initial"]),
                       tuple(Closed(partition(c["partition"]), base64.b64decode(c["message"]), int(c["closed_ms"]))
                             for c in raw["closes"]))
    except (ValueError, TypeError, KeyError, IndexError):
        name = _key(stream).decode().replace("\0", "\\0")
        raise ServeError("ValidationException", f"the shard registry of stream {stream.arn} ({REGISTRY_ID}, row "
                         f"{name}) is damaged: delete that row; serve asks Bigtable for the partitions again") from None


async def _read(session: Session, stream: Stream) -> tuple[Lineage | None, list]:
    row = await registry_store(session).read_row(_key(stream))
    cells = raw_cells(row) if row is not None else []
    newest = max((c for c in cells if c.qualifier == QUALIFIER), key=lambda c: c.timestamp_micros, default=None)
    return (_decoded(stream, newest.value) if newest else None), cells


async def _save(session: Session, stream: Stream, lineage: Lineage, read: list) -> bool:
    row = RowMutation(_key(stream), (DeleteRow(), SetCell(FAMILY, QUALIFIER, _encoded(lineage),
                                                            int(time.time() * 1000) * 1000)))
    return await registry_store(session).write_if_unchanged(row, read)


def gapic_client(session: Session) -> Any:
    """The data client's generated client, on its channel: the data client has no call of its
    own for change streams (google-cloud-bigtable 2.x), the generated one has both."""
    return session.client._gapic_client


async def initial_partitions(session: Session, stream: Stream) -> tuple[Partition, ...]:
    """GenerateInitialChangeStreamPartitions: the table's partitions when its change stream is
    first read."""
    gapic = gapic_client(session)
    table_name = gapic.table_path(session.catalog.project, stream.instance_id, stream.table_id)
    async with bigtable_errors(stream.table):
        responses = await gapic.generate_initial_change_stream_partitions(request={"table_name": table_name},
                                                                          timeout=SCAN_SECONDS)
        return tuple(sorted([partition_of(r.partition) async for r in responses], key=lambda p: p.start))


async def lineage(session: Session, stream: Stream) -> Lineage:
    """The stream's lineage; asked of Bigtable and recorded the first time (the first writer's stays)."""
    for _ in range(WRITE_ATTEMPTS):
        found, cells = await _read(session, stream)
        if found is not None:
            return found
        made = Lineage(await initial_partitions(session, stream), ())
        if await _save(session, stream, made, cells):
            return made
    raise _busy(stream)


async def closed(session: Session, stream: Stream, partition: Partition, message: ReadChangeStreamResponse) -> None:
    """A partition's CloseStream recorded (once, however many workers met it)."""
    for _ in range(WRITE_ATTEMPTS):
        found, cells = await _read(session, stream)
        known = found or Lineage((), ())
        if any(c.partition == partition for c in known.closes):
            return
        grown = Lineage(known.initial, (*known.closes, Closed(partition, ReadChangeStreamResponse.serialize(message),
                                                              int(time.time() * 1000))))
        if await _save(session, stream, grown, cells):
            return
    raise _busy(stream)


def _busy(stream: Stream) -> ServeError:
    return ServeError("LimitExceededException", f"the shards of stream {stream.arn} changed under {WRITE_ATTEMPTS} "
                      f"attempts in a row to record them; retry")
