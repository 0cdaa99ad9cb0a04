"""Stream records -> row mutations, and why replays converge: a property test replays
random earlier stretches of a random stream against an in-memory Bigtable."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from ddb2bigtable.codec.codec import Codec
from ddb2bigtable.codec.mutations import Cell, DeleteCells, DeleteRow, RowMutation, SetCell
from ddb2bigtable.load.verify import canonical
from ddb2bigtable.replicate.apply import dead_letter_json, record_rows, waves, with_current_images, write_time
from ddb2bigtable.replicate.stream_records import StreamRecord
from ddb2bigtable.spec.reading import read_spec

from ..conftest import ROOT

MOVIES = read_spec(ROOT / "specs/movies.yaml").tables[0]
VIDEOS = read_spec(ROOT / "specs/video-single-table.yaml").tables[0]
START = 1_800_000_000_000_000


def record(kind: str, seq: int, keys: dict, new: dict | None = None, old: dict | None = None,
           micros: int = START + 5_000_123) -> StreamRecord:
    return StreamRecord("shardId-1", str(seq), kind, micros, keys, new, old)


def movie(title: str, rating: str | None = None, **extra) -> dict:
    item = {"year": {"N": "2013"}, "title": {"S": title}} | extra
    if rating is not None:
        item["info"] = {"M": {"rating": {"N": rating}}}
    return item


def keys(title: str) -> dict:
    return {"year": {"N": "2013"}, "title": {"S": title}}


def test_a_write_replaces_the_row_at_the_records_time_and_a_remove_deletes_it():
    codec = Codec(MOVIES, {})
    put = record_rows(codec, record("insert", 1, keys("Rush"), movie("Rush", "8")), start_micros=START, now_micros=START)
    (row,) = put.rows
    assert isinstance(row.mutations[0], DeleteRow) and put.refused is None
    assert {m.timestamp_micros for m in row.mutations[1:]} == {START + 5_000_000}  # whole milliseconds
    gone = record_rows(codec, record("remove", 2, keys("Rush")), start_micros=START, now_micros=START)
    assert gone.rows == (RowMutation(row.key, (DeleteRow(),)),)


def test_cells_carry_a_time_after_the_start_point():
    """Issue #53: a record dated before the export (DynamoDB Local dates to the minute) was
    stamped at the export's very time, so a write made in the export's minute read as the
    load's and failed verify; one millisecond later it reads as a later write. Order, not
    time, decides what the row holds (every write replaces), so a replayed record truly
    before the export gives the export's image back once the replay has passed it."""
    early = record("modify", 1, keys("Rush"), micros=START - 30_000_000)
    assert write_time(early, START) == START + 1000 == write_time(record("modify", 1, {}, micros=START), START)
    assert write_time(record("insert", 2, {}), START) == START + 5_000_000


def test_a_comment_whose_time_changed_loses_its_old_version_in_the_same_mutation():
    codec = Codec(VIDEOS, {})
    old = {"VideoId": {"S": "0123"}, "SK": {"S": "VideoComment#1"}, "Content": {"S": "hi"},
           "PostedAt": {"S": "2023-09-10T19:01:15"}}
    new = old | {"Content": {"S": "hi (edited)"}, "PostedAt": {"S": "2023-09-11T08:00:00"}}
    applied = record_rows(codec, record("modify", 3, {k: old[k] for k in ("VideoId", "SK")}, new, old),
                          start_micros=START, now_micros=START)
    (row,) = applied.rows
    deleted = [m for m in row.mutations if isinstance(m, DeleteCells)]
    written = [m for m in row.mutations if isinstance(m, SetCell)]
    assert row.key == b"0123" and len(deleted) == 1 and deleted[0].start_micros is not None
    assert [m.value for m in written] == [b"hi (edited)"]
    assert row.mutations.index(deleted[0]) < row.mutations.index(written[0])


def test_a_record_the_codec_cannot_write_is_refused_with_its_reason():
    codec = Codec(MOVIES, {})
    bad = record_rows(codec, record("insert", 4, keys("Rush"), movie("Rush") | {"info": {"S": "not a map"}}),
                      start_micros=START, now_micros=START)
    assert bad.rows == () and "info is S in this item, but the spec declares it M" in bad.refused


def test_a_dead_letter_names_shard_sequence_and_keys_binary_ones_in_base64():
    line = dead_letter_json(record("insert", 5, {"id": {"B": b"\x00\xff"}}), "why")
    assert json.loads(line) == {"shard": "shardId-1", "sequence_number": "5", "event": "insert",
                                "keys": {"id": {"B": "AP8="}}, "reason": "why"}


def test_keys_only_records_take_the_items_current_image_or_delete_it():
    codec = Codec(MOVIES, {})
    stream = [record("insert", 1, keys("A")), record("modify", 2, keys("B")), record("remove", 3, keys("C"))]
    filled = with_current_images(stream, [movie("A", "7")], ["year", "title"])
    assert filled[0].new_image == movie("A", "7") and not filled[0].gone
    assert filled[1].gone and filled[2] == stream[2]
    (gone,) = record_rows(codec, filled[1], start_micros=START, now_micros=START).rows
    assert gone.mutations == (DeleteRow(),)


def test_waves_keep_each_rows_order_and_send_other_rows_together():
    codec = Codec(MOVIES, {})
    stream = [record("insert", 1, keys("A"), movie("A", "1")), record("insert", 2, keys("B"), movie("B", "1")),
              record("modify", 3, keys("A"), movie("A", "2")), record("remove", 4, keys("A"))]
    batches = waves(record_rows(codec, r, start_micros=START, now_micros=START) for r in stream)
    assert [[a.record.sequence for a, _ in wave] for wave in batches] == [["1", "2"], ["3"], ["4"]]


# --- replays converge -----------------------------------------------------------------------

def apply(table: dict[bytes, dict[tuple[str, bytes, int], bytes]], row: RowMutation) -> None:
    """What Bigtable does with one row's mutations, in order."""
    cells = table.setdefault(row.key, {})
    for m in row.mutations:
        if isinstance(m, DeleteRow):
            cells.clear()
        elif isinstance(m, DeleteCells):
            for key in [k for k in cells if k[:2] == (m.family, m.qualifier)
                        and (m.start_micros or 0) <= k[2] < (m.end_micros or 2**63)]:
                del cells[key]
        else:
            cells[(m.family, m.qualifier, m.timestamp_micros)] = m.value


def items(codec: Codec, table: dict) -> list:
    found = []
    for key, cells in sorted(table.items()):
        if cells:
            found += codec.decode(key, [Cell(f, q, v, t) for (f, q, t), v in cells.items()])
    return sorted(map(repr, map(canonical, found)))


def stream_of(writes: list[tuple[int, int | None]]) -> tuple[list[StreamRecord], list[dict]]:
    """(item, rating or None for a delete) -> the records DynamoDB would stream, and the
    items the table holds at the end."""
    current: dict[int, dict] = {}
    records = []
    for seq, (which, rating) in enumerate(writes):
        title, old = f"T{which}", current.get(which)
        if rating is None:
            if old is not None:
                records.append(record("remove", seq, keys(title), old=old, micros=START + seq * 1000))
                del current[which]
            continue
        new = movie(title, str(rating), **({"extra": {"S": "x"}} if rating % 2 else {}))
        records.append(record("modify" if old else "insert", seq, keys(title), new, old, micros=START + seq * 1000))
        current[which] = new
    return records, list(current.values())


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.one_of(st.none(), st.integers(0, 9))), min_size=1, max_size=25),
       st.data())
def test_replaying_any_earlier_stretch_converges_to_the_latest_images(writes, data):
    codec = Codec(MOVIES, {})
    records, latest = stream_of(writes)
    # Killed after `stop` records, rerun from an earlier `again` (a checkpoint or --since
    # before it), each record possibly applied twice in a row (a retried write).
    stop = data.draw(st.integers(0, len(records)))
    again = data.draw(st.integers(0, stop))
    doubled = data.draw(st.sets(st.integers(0, max(len(records) - 1, 0))))
    replayed: dict = {}
    for i, r in [*enumerate(records[:stop]), *enumerate(records[again:], start=again)]:
        for _ in range(2 if i in doubled else 1):
            for wave in waves([record_rows(codec, r, start_micros=START, now_micros=START)]):
                for _, row in wave:
                    apply(replayed, row)
    assert items(codec, replayed) == sorted(repr(canonical(codec.expected(i, now_micros=START))) for i in latest)
