"""`cutover check`'s other direction: items Bigtable holds that DynamoDB no longer does.

The sample comes from DynamoDB, so a row that replication failed to delete (a lost
REMOVE, a write to Bigtable by someone else) is never in it. Here the sample's row keys
serve as random places in Bigtable's key space: the row right after each (and the
table's first row) is read, decoded, and each item in it not among the sample is looked
up in DynamoDB (strongly consistent). One DynamoDB lacks is read again from both sides
after the re-check pause (a write in flight resolves in between) and reported only if it
is still in Bigtable and still absent from DynamoDB. Items past their TTL are left out,
as Bigtable's GC is lazy and DynamoDB no longer returns them either.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from google.cloud.bigtable.data import ReadRowsQuery, RowRange

from ..codec.codec import Codec, CodecError
from ..codec.items import Item
from ..codec.mutations import Cell
from .stream import StreamReader


def decoded_items(codec: Codec, row: Any, now: int) -> list[Item]:
    cells = [Cell(c.family, c.qualifier, c.value, c.timestamp_micros) for c in row
             if not (c.family in codec.ttl_families and c.timestamp_micros < now)]  # GC is lazy
    try:
        return codec.decode(row.row_key, cells) if cells else []
    except CodecError:  # an undecodable row: the DynamoDB-side comparison names such rows
        return []


async def _neighbours(table: Any, codec: Codec, anchors: list[bytes], now: int) -> dict[str, tuple[Item, bytes]]:
    """Items in the rows right after each anchor (and in the first row), by key text."""
    queries = [ReadRowsQuery(row_ranges=[RowRange(start_key=anchor, start_is_inclusive=False)], limit=1)
               for anchor in dict.fromkeys(anchors)] + [ReadRowsQuery(row_ranges=[RowRange()], limit=1)]
    found: dict[str, tuple[Item, bytes]] = {}
    for rows in await asyncio.gather(*(table.read_rows(q) for q in queries)):
        for row in rows:
            for item in decoded_items(codec, row, now):
                found[_text(codec, item)] = (item, row.row_key)
    return found


def _text(codec: Codec, item: Item) -> str:
    schema = codec.table.source.key
    return json.dumps([item.get(k.name) for k in (schema.partition, schema.sort) if k is not None],
                      sort_keys=True, default=repr)


def _keys(codec: Codec, item: Item) -> Item:
    schema = codec.table.source.key
    return {k.name: item[k.name] for k in (schema.partition, schema.sort) if k is not None and k.name in item}


async def only_in_bigtable(table: Any, codec: Codec, reader: StreamReader, sample: list[Item], now: int,
                           recheck_seconds: float, row_key: Callable[[Item], bytes]) -> list[dict[str, Any]]:
    """Items next to the sample that Bigtable holds and DynamoDB does not (key, row_key)."""
    anchors = []
    for item in sample:
        try:
            anchors.append(row_key(item))
        except CodecError:
            continue
    seen = {_text(codec, item) for item in sample}
    names = [k.name for k in (codec.table.source.key.partition, codec.table.source.key.sort) if k is not None]
    around = {text: found for text, found in (await _neighbours(table, codec, anchors, now)).items()
              if text not in seen and all(name in found[0] for name in names)}  # whole keys only
    suspects = await _absent(codec, reader, around)
    if not suspects:
        return []
    await asyncio.sleep(recheck_seconds)
    still = await _absent(codec, reader, suspects)
    rows = {row.row_key: row for row in await table.read_rows(ReadRowsQuery(
        row_keys=list(dict.fromkeys(key for _, key in still.values()))))}
    out = []
    for text, (item, key) in sorted(still.items()):
        if key in rows and any(_text(codec, i) == text for i in decoded_items(codec, rows[key], now)):
            out.append({"key": _keys(codec, item), "row_key": key.decode("utf-8", "replace")})
    return out


async def _absent(codec: Codec, reader: StreamReader,
                  candidates: dict[str, tuple[Item, bytes]]) -> dict[str, tuple[Item, bytes]]:
    """The candidates DynamoDB does not hold now."""
    if not candidates:
        return {}
    current = await asyncio.to_thread(reader.current, [_keys(codec, item) for item, _ in candidates.values()])
    there = {_text(codec, item) for item in current}
    return {text: found for text, found in candidates.items() if text not in there}
