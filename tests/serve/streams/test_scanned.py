"""What a worker keeps of its scans (serve/streams/scanned.py), pure: records in order per
shard, later scans appended, the oldest forgotten, and a bound on all streams together."""

from __future__ import annotations

from ddb2bigtable.serve.streams import positions, scanned
from ddb2bigtable.serve.streams.records import qualifier


def _cells(micros: list[int], size: int = 10) -> list[tuple[bytes, int, bytes, bytes]]:
    return [(f"row-{m}".encode(), m, qualifier(1), b"x" * size) for m in micros]


def test_a_later_scan_is_appended_in_order_and_the_oldest_records_can_go() -> None:
    held = scanned.Scanned(1_000, 1_000, 0.0)
    held.extend(_cells([3_000, 1_000, 2_000]), 4_000, 1.0)
    held.extend(_cells([5_000, 4_000, 9_000]), 6_000, 2.0)  # 9,000 is past this scan's bound: not held
    everything = sorted(r for shard in held.shards for r in shard)
    assert [m for _, m, _ in everything] == [1_000, 2_000, 3_000, 4_000, 5_000]
    assert all(shard == sorted(shard) for shard in held.shards) and held.size == 50 and held.bound == 6_000
    held.trim(2_500)
    assert held.start == 2_500 and held.size == 30
    assert sorted(m for shard in held.shards for _, m, _ in shard) == [3_000, 4_000, 5_000]


def test_a_shards_records_are_given_from_the_position_up_to_the_bound() -> None:
    held = scanned.Scanned(0, 0, 0.0)
    held.extend(_cells(list(range(1_000, 41_000, 1_000))), 50_000, 1.0)
    shard = next(i for i, s in enumerate(held.shards) if len(s) >= 3)
    mine = held.shards[shard]
    after = positions.Position(shard, mine[0][0], False, 0)
    assert held.after(after, 0, 50_000, 100) == mine[1:]
    assert held.after(positions.Position(shard, mine[0][0], True, 0), 0, 50_000, 2) == mine[:2]
    assert held.after(positions.Position(shard, "", True, 0), 0, mine[1][1], 100) == mine[:1]


def test_what_all_streams_hold_is_bounded_the_least_recently_scanned_forgotten_first() -> None:
    def one(size: int, taken: float) -> scanned.Scanned:
        held = scanned.Scanned(0, 0, 0.0)
        held.extend(_cells([1_000], size), 2_000, taken)
        return held

    held = {"old": one(40, 1.0), "older": one(40, 0.5), "read now": one(40, 0.1)}
    assert scanned.evicted(held, "read now", limit=200) == []
    assert scanned.evicted(held, "read now", limit=90) == ["older"]
    assert scanned.evicted(held, "read now", limit=10) == ["older", "old"]  # never the stream being read
