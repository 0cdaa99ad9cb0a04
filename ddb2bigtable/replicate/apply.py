"""Stream records -> Bigtable row mutations: the same codec and mapping as the load.

Convergence comes from order, not from timestamps. Every write replaces (`replace=True`:
the item's previous cells are deleted in the same MutateRow, before the new ones), so
the last record applied decides what a row holds, whatever cell times were there. The
stream gives one item's records in order (one shard at a time, parents before children),
and `waves` keeps that order on the way to Bigtable: two mutations of one row are never
in flight together. So replaying any earlier stretch of the stream, or a record twice,
ends at DynamoDB's latest image once the replay has passed it.

Cell times: a record's cells carry its ApproximateCreationDateTime (whole milliseconds),
raised to one millisecond after the start point when not later. Deterministic (a replayed record writes the
very same versions), never decreasing along one item's records, and never below the
cells the load wrote at the export's time, so a timestamp-filtered read or a family's
max-age GC sees a replicated change as newer than the snapshot. TTL families keep the
item's expiry as the load does (codec/app_writes.py), and an item whose TTL has passed
is deleted, as DynamoDB no longer returns it.

`BigtableSink` is the forward direction's sink (pages.Sink): a page's records encoded in
waves, the attributes it brings recorded first (types_record.py), written through the
load's writer.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, replace

from google.cloud.bigtable.data import mutations

from ..codec.codec import Codec
from ..codec.items import Item
from ..codec.mutations import CodecError, Expired, RowMutation
from ..codec.scalars import binary_text
from ..load.client_hooks import Source
from ..load.writer import Writer, row_entry
from .opening import now_micros
from .pages import Prepared
from .stream_records import StreamRecord
from .types_record import NewAttributes


@dataclass(frozen=True)
class Applied:
    """What one record writes (rows in order), or why it cannot be written."""

    record: StreamRecord
    rows: tuple[RowMutation, ...]
    refused: str | None = None


def write_time(record: StreamRecord, start_micros: int) -> int:
    """Whole milliseconds, at least one after the start point: a record dated before it
    (stream times are rounded down, to the minute by DynamoDB Local) may be a write made
    after the export, so its row must not read as the load's (load/later_writes.py)."""
    return max(record.micros, start_micros + 1000) // 1000 * 1000


def record_rows(codec: Codec, record: StreamRecord, *, start_micros: int, now_micros: int) -> Applied:
    """The row mutations that make Bigtable hold what DynamoDB held after `record`."""
    try:
        if record.kind in ("remove", "ttl") or record.gone:
            return Applied(record, (codec.delete(record.old_image or record.keys),))
        if record.new_image is None:
            return Applied(record, (), f"a {record.kind.upper()} record without NewImage")
        # checked: DynamoDB wrote the image, so each value is a well-formed typed value;
        # only its type is compared with the mapping's (walking it again cost a third of encoding).
        written = codec.encode(record.new_image, write_time_micros=write_time(record, start_micros),
                               now_micros=now_micros, replace=True, checked=True)
        new = written.delete if isinstance(written, Expired) else written
        if new is None:
            return Applied(record, ())
        if record.old_image is None:
            return Applied(record, (new,))
        # The old image may sit elsewhere (a rule chosen by an attribute that changed):
        # its cells go first, in the same MutateRow when it is the same row.
        old = codec.delete(record.old_image)
        if old.key == new.key:
            return Applied(record, (RowMutation(new.key, (*old.mutations, *new.mutations)),))
        return Applied(record, (old, new))
    except CodecError as error:
        return Applied(record, (), str(error))


def with_current_images(records: list[StreamRecord], current: list[Item], key_names: list[str]) -> list[StreamRecord]:
    """KEYS_ONLY (or OLD_IMAGE) records with the item as the table holds it now: an INSERT
    or MODIFY takes it as its new image, or deletes when it is gone. Later than the record,
    never earlier, so replaying still ends at the latest image."""
    def key(item: Item) -> str:
        return json.dumps([item.get(name) for name in key_names], sort_keys=True, default=repr)

    now = {key(item): item for item in current}
    out = []
    for r in records:
        if r.kind in ("insert", "modify") and r.new_image is None:
            image = now.get(key(r.keys))
            r = replace(r, new_image=image, gone=image is None)
        out.append(r)
    return out


def waves(applied: Iterable[Applied]) -> list[list[tuple[Applied, RowMutation]]]:
    """The rows in batches that may be written concurrently: a row's mutations go in
    successive waves, so Bigtable applies them in the records' order."""
    out: list[list[tuple[Applied, RowMutation]]] = []
    last_wave: dict[bytes, int] = {}
    for one in applied:
        for row in one.rows:
            wave = last_wave.get(row.key, -1) + 1
            last_wave[row.key] = wave
            if wave == len(out):
                out.append([])
            out[wave].append((one, row))
    return out


def dead_letter_json(record: StreamRecord, reason: str) -> str:
    """One dead letter: where the record is in the stream (to find it again), the item's
    keys (binary ones in base64, as DynamoDB JSON writes them) and why."""
    return json.dumps({"shard": record.shard, "sequence_number": record.sequence, "event": record.kind,
                       "keys": record.keys, "reason": reason},
                      default=binary_text)


@dataclass(frozen=True)
class _Encoded:
    """A page as Bigtable entries: each record's rows, and the waves to write them in."""

    applied: list[Applied]
    waves: list[list[mutations.RowMutationEntry]]
    codec: Codec  # what encoded it (types_record.py may replace the run's codec)


class BigtableSink:
    """Forward replication's writes: stream records -> the table's Bigtable rows."""

    def __init__(self, writer: Writer, codec: Codec, new_attributes: NewAttributes, instance_id: str):
        self.writer, self.codec, self.new_attributes = writer, codec, new_attributes
        self.name = f"Bigtable table {codec.table.id} in instance {instance_id}"

    def encode(self, records: list[StreamRecord], start_micros: int) -> _Encoded:
        now, codec = now_micros(), self.codec
        applied = [record_rows(codec, r, start_micros=start_micros, now_micros=now) for r in records]
        batches = [[row_entry(row, Source(a.record.shard, int(a.record.sequence))) for a, row in wave]
                   for wave in waves(a for a in applied if not a.refused)]
        return _Encoded(applied, batches, codec)

    async def _recorded(self, prepared: Prepared) -> _Encoded:
        """The page once the attributes it brings are in the table's record of types;
        encoded again when the record (or the run's codec since) gives one another type."""
        encoded: _Encoded = prepared.writes  # type: ignore[assignment]
        names = {name for a in encoded.applied if not a.refused and a.record.new_image for name in a.record.new_image}
        record = await self.new_attributes.record(encoded.codec, names)
        if record is not None:
            self.codec = Codec(self.codec.table, {**self.codec.types, **record})
        if encoded.codec is self.codec:
            return encoded
        return await asyncio.to_thread(self.encode, prepared.records, prepared.start_micros)

    async def write(self, prepared: Prepared) -> dict[tuple[str, int], str]:
        encoded = await self._recorded(prepared)
        refused: dict[tuple[str, int], str] = {(a.record.shard, int(a.record.sequence)): a.refused
                                               for a in encoded.applied if a.refused}

        def rejected(source: Source, reason: str) -> None:
            refused.setdefault((source.file, source.line), reason)

        for entries in encoded.waves:
            await self.writer.write(_one_chunk(entries), rejected)
        return refused


async def _one_chunk(entries: list[mutations.RowMutationEntry]) -> AsyncIterator[list[mutations.RowMutationEntry]]:
    yield entries
