"""Where every export line goes: loaded (or deleted), skipped as expired, sampled out, or
dead-lettered with its reason. `route` decides and counts in one step, so the local
writer's encoder process and the Beam pipeline cannot count differently.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..codec.codec import Codec, CodecError, Expired
from ..codec.mutations import RowCells, RowMutation
from ..exports.reader import Record, checked
from .forms import count_forms
from .state import FileCounts


def in_sample(row_key: bytes, fraction: float | None) -> bool:
    """A stable sample: the same rows are in it on every run and machine."""
    if fraction is None or fraction >= 1:
        return True
    digest = hashlib.blake2b(row_key, digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64 < fraction


@dataclass(frozen=True, init=False)
class Routed:
    """Where one export line goes; `route` has already counted it. Made once per line, so
    its `__init__` fills the instance dict at once (as `reader.Record`'s does)."""

    # To write: a put (the compiled encoder's plain cells, else a RowMutation), a delete, or
    # an expired item's older version going.
    row: RowMutation | RowCells | None = None
    dead: str | None = None  # the reason, when the line goes to the dead letters
    expired: Expired | None = None
    raw: str | None = None  # a dead letter's line as the reader kept it (an unreadable line's text)

    def __init__(self, row: RowMutation | RowCells | None = None, dead: str | None = None,
                 expired: Expired | None = None, raw: str | None = None):
        self.__dict__.update(row=row, dead=dead, expired=expired, raw=raw)


def loaded_cells(codec: Codec, sample: float | None) -> Callable[[Any, int, int], RowCells | None] | None:
    """`route`'s common case as one call, for the encoder loops (issue #33): the compiled
    encoder's `cells(item, write_time, now)`, when every row it gives for an unchecked
    record is one `route` would place and count as loaded: no sample to leave it out, no
    typed-JSON attribute whose forms are counted. A loop that takes it calls it for each
    unchecked record, counts each row it gives with `count_loaded` (once, at the file's
    end or stop: the same counts), and routes the others with `declined=True` (the compiled
    encoder's None is not asked twice). None: route every record."""
    fast = codec.compiled
    if fast is None or codec.typed_json or not (sample is None or sample >= 1):
        return None
    return fast.cells


def count_loaded(counts: FileCounts, rows: int) -> None:
    """`rows` lines read and loaded as `loaded_cells` gave them (what `route` counts for each)."""
    counts.read += rows
    counts.loaded += rows


def route(record: Record, codec: Codec, write_time: int, now: int, sample: float | None,
          counts: FileCounts, declined: bool = False) -> Routed:
    """Every line into exactly one bucket. A record read unchecked (`read_records(check=False)`)
    is encoded and checked in one walk by the codec when it can (its row then `RowCells`,
    which the writers turn into protobuf bytes without a SetCell per cell; `declined`: the
    compiled encoder has already said it cannot); otherwise it is checked as the reader
    checks it and routed as any other, so both give the same buckets."""
    counts.read += 1
    if record.unchecked is not None:
        row = None if declined else codec.parsed_cells(record.item, write_time_micros=write_time, now_micros=now)
        if row is not None:
            return _placed(record, row, codec, sample, counts)
        record = checked(record)
    try:
        row = _encode(record, codec, write_time, now)
    except CodecError as error:
        counts.dead_lettered += 1
        return Routed(dead=str(error), raw=record.raw)
    if row is None:
        counts.dead_lettered += 1
        return Routed(dead=record.error or "unreadable line", raw=record.raw)
    if isinstance(row, Expired):
        counts.expired += 1
        return Routed(row=row.delete, expired=row)  # incremental: an older, still-live version must go
    return _placed(record, row, codec, sample, counts)


def _placed(record: Record, row: RowMutation | RowCells, codec: Codec, sample: float | None,
            counts: FileCounts) -> Routed:
    """A row to write, unless the sample leaves it out; counted."""
    if not in_sample(row.key, sample):
        counts.sampled_out += 1
        return Routed()
    if record.kind == "delete":
        counts.deleted += 1
    else:
        counts.loaded += 1
        if codec.typed_json and record.item:
            count_forms(record.item, codec.typed_json, counts.forms)
    return Routed(row=row)


def _encode(record: Record, codec: Codec, write_time: int, now: int):
    if record.kind == "error":
        return None
    if record.kind == "delete":  # the old image tells rule-based designs which cells were the item's
        return codec.delete(record.old_item or record.keys or {})
    replace = record.keys is not None  # incremental: the item may have had an older version
    return codec.encode(record.item or {}, write_time_micros=record.write_time_micros or write_time,
                        now_micros=now, replace=replace, checked=record.item is not None)
