"""A bounded sample of an export: the first items of each data file, file after file.

Advice must come before a byte is loaded and must not read a 100 GB export to get there,
so the sample stops at `limit` items whatever the export's size: each data file gives
its share (`limit / files`, what a short file leaves going to the next ones), so every
part of the key space the export's files cover is seen, and reading stops as soon as the
sample is full. Memory holds the sample and one line; time grows with `limit` only.
"""

from __future__ import annotations

import math
import re
from collections.abc import Generator
from contextlib import closing
from dataclasses import dataclass
from typing import cast

from ..codec.items import Item
from ..exports.manifests import Manifest
from ..exports.reader import Record, read_records


@dataclass(frozen=True)
class Sample:
    items: tuple[Item, ...]
    export_items: int  # the manifest's item count: what the sample stands for
    files_read: int
    files: int
    export_time_micros: int
    bad_lines: int = 0  # lines that are not items (the load dead-letters them)
    complete: bool = False  # every data file was read to its end

    @property
    def fraction(self) -> float:
        """The share of the export sampled: 1.0 when every item was read."""
        return 1.0 if self.complete or not self.export_items else len(self.items) / self.export_items


DEFAULT_SAMPLE = "10000"  # items advise reads of an export (--sample's default)

_COUNT = re.compile(r"[1-9]\d*")
_FRACTION = re.compile(r"0?\.\d*[1-9]\d*|1\.0*")


def sample_size(text: str, export_items: int) -> int:
    """`--sample`: a count (`10000`) or a fraction of the export (`0.01`, at least one item)."""
    if _COUNT.fullmatch(text):
        return int(text)
    if _FRACTION.fullmatch(text):
        return max(1, math.ceil(float(text) * export_items))
    raise ValueError(f"--sample {text!r}: give a count of items (10000) or a fraction of the export in (0, 1] "
                     f"written with a point (0.01)")


def take_sample(manifest: Manifest, limit: int) -> Sample:
    """Up to `limit` items: the first ones of each data file in turn (see the module docstring)."""
    items: list[Item] = []
    bad = read = 0
    files = [f for f in manifest.files if f.item_count]
    for n, f in enumerate(files):
        quota = math.ceil((limit - len(items)) / (len(files) - n))
        if quota <= 0:
            break
        read += 1
        taken = 0
        # read_records is a generator: closing it closes the data file when the share is full
        with closing(cast(Generator[Record], read_records(manifest, f))) as records:
            for record in records:
                if record.kind == "error":
                    bad += 1
                elif record.item is not None:
                    items.append(record.item)
                    taken += 1
                if taken >= quota:
                    break
    return Sample(tuple(items), manifest.item_count, read, len(manifest.files), manifest.export_time_micros, bad,
                  complete=len(items) < limit or len(items) >= manifest.item_count)
