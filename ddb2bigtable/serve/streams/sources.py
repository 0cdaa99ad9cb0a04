"""One interface over the two ways serve reads a stream's records, chosen by the stage
(docs/streams.md, "Reading the records"): on emulator stages, which have no change streams,
a scan of the tables' stream cells (scan_source.py, 4 shards by row hash, no lineage); on
cloud stages Bigtable's change streams (change_source.py, a shard per partition, with
parents when Bigtable splits or merges them). The Streams API (stream_ops.py) sees only
this."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from ..session import Session
from . import change_source, scan_source
from .positions import Position
from .registry import Stream
from .scan_source import Page, Shard


@dataclass(frozen=True)
class RecordSource:
    shards: Callable[[Session, Stream], Awaitable[list[Shard]]]  # DescribeStream's, parents before children
    # up to `limit` records of the position's shard from it, read up to `now_micros`
    read: Callable[[Session, Stream, Position, int, int], Awaitable[Page]]


async def _emulator_shards(_session: Session, stream: Stream) -> list[Shard]:
    return scan_source.shards(stream)


EMULATOR = RecordSource(_emulator_shards, scan_source.read)
CLOUD = RecordSource(change_source.shards, change_source.read)


def source(session: Session) -> RecordSource:
    return EMULATOR if session.catalog.emulator else CLOUD
