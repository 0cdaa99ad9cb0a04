"""Each row-key check on a small real export: data that triggers it and a near miss that must not."""

from __future__ import annotations

import hashlib
import uuid
from datetime import UTC, datetime, timedelta

from ddb2bigtable.advise.keys import is_time

from .helpers import codes, findings

START = datetime(2025, 3, 1, tzinfo=UTC)


def _times(n: int) -> list[str]:
    return [(START + timedelta(seconds=37 * i)).isoformat() for i in range(n)]


def test_time_leading_key_iso(tmp_path):
    items = [{"at": t, "device": f"dev-{i % 7}", "v": i} for i, t in enumerate(_times(200))]
    (found,) = findings(tmp_path, items, ("at", "S"), ("device", "S"))
    assert found.code == "time-leading-key" and found.severity == "warning"
    assert "100 % of 200 sampled items" in found.evidence and "salt: {buckets: 8}" in found.snippet
    assert found.source.section == "Time-based data"


def test_time_leading_key_epoch_millis(tmp_path):
    items = [{"ts": 1_740_000_000_000 + 1000 * i, "v": i} for i in range(100)]
    assert codes(findings(tmp_path, items, ("ts", "N"))) == ["time-leading-key"]


def test_time_after_a_device_id_is_the_seeds_design(tmp_path):
    """Near miss: the time in the sort key (device#time), as the seeds advise."""
    items = [{"device": f"dev-{i % 40}", "at": t} for i, t in enumerate(_times(200))]
    assert codes(findings(tmp_path, items, ("device", "S"), ("at", "S"))) == []


def test_salted_time_key_is_not_reported(tmp_path):
    items = [{"ts": 1_740_000_000 + i, "v": i} for i in range(100)]
    assert codes(findings(tmp_path, items, ("ts", "N"), mapping={"salt": {"buckets": 8}})) == []


def test_is_time():
    assert is_time("2024-05-01T10:00:00Z") and is_time("1700000000") and is_time("1700000000123")
    assert is_time("2024-05-01#x") and not is_time("2024-13-45") and not is_time("2013")
    assert not is_time("123456789012345678") and not is_time("0123")


def test_sequential_ids(tmp_path):
    items = [{"id": 10_000 + i, "name": f"user {i}"} for i in range(300)]
    (found,) = findings(tmp_path, items, ("id", "N"))
    assert found.code == "sequential-id-key"
    assert "300 distinct ids within 10,000..10,299" in found.evidence


def test_random_ids_are_not_sequential(tmp_path):
    items = [{"id": int.from_bytes(hashlib.sha256(str(i).encode()).digest()[:7]), "v": i} for i in range(300)]
    assert codes(findings(tmp_path, items, ("id", "N"))) == []


def test_few_distinct_numbers_are_not_ids(tmp_path):
    """Near miss: Movies' years are integers in a narrow range, but many items share each."""
    items = [{"year": 1990 + i % 30, "title": f"film {i}"} for i in range(300)]
    assert codes(findings(tmp_path, items, ("year", "N"), ("title", "S"))) == []


def test_hot_partition(tmp_path):
    items = [{"tenant": "tenant-1" if i % 5 < 2 else f"tenant-{i}", "sk": f"order-{i}"} for i in range(200)]
    (found,) = findings(tmp_path, items, ("tenant", "S"), ("sk", "S"))
    assert found.code == "hot-partition"
    assert found.evidence.startswith("40 % of 200 sampled items share partition key tenant = `tenant-1`")


def test_even_partitions_are_not_hot(tmp_path):
    items = [{"tenant": f"tenant-{i % 10}", "sk": f"order-{i}"} for i in range(200)]
    assert codes(findings(tmp_path, items, ("tenant", "S"), ("sk", "S"))) == []


def test_write_sharding(tmp_path):
    items = [{"pk": f"{day}#{shard}", "sk": f"event-{i}"}
             for i, (day, shard) in enumerate((d, s) for d in ("2025-03-01", "2025-03-02") for s in range(1, 11)
                                              for _ in range(5))]
    found = findings(tmp_path, items, ("pk", "S"), ("sk", "S"))
    # the key also starts with a date: both findings hold
    assert codes(found) == ["time-leading-key", "write-sharding"]
    (shard,) = [f for f in found if f.code == "write-sharding"]
    assert "(1..10; 2 keys in 20 shards" in shard.evidence and shard.snippet.startswith("salt: {buckets: 10}")


def test_numbered_ids_are_not_shards(tmp_path):
    """Near miss: `order-1`..`order-99`, one item each, end in a number but are ids."""
    items = [{"pk": f"order-{i}", "total": i} for i in range(1, 100)]
    assert codes(findings(tmp_path, items, ("pk", "S"))) == []


def test_numbered_devices_are_not_shards(tmp_path):
    """Near miss: `dev-0`..`dev-39` with several items each: one key, numbered entities."""
    items = [{"pk": f"dev-{i % 40}", "sk": f"reading-{i}"} for i in range(200)]
    assert codes(findings(tmp_path, items, ("pk", "S"), ("sk", "S"))) == []


def test_version_prefix(tmp_path):
    items = [{"doc": f"doc-{i}", "sk": f"v{v}_invoice", "body": "x"} for i in range(10) for v in range(3)]
    found = findings(tmp_path, items, ("doc", "S"), ("sk", "S"))
    assert codes(found) == ["sample-too-small", "version-prefix"]
    (version,) = [f for f in found if f.code == "version-prefix"]
    assert "v0_ .. v2_; v0_ in 10 items" in version.evidence and "max_versions" in version.snippet


def test_words_starting_with_v_are_not_versions(tmp_path):
    items = [{"doc": f"doc-{i}", "sk": f"{w}_{i}"} for i in range(10) for w in ("vendor", "video", "v_x")]
    assert codes(findings(tmp_path, items, ("doc", "S"), ("sk", "S"))) == ["sample-too-small"]


def test_domain_not_reversed(tmp_path):
    items = [{"site": f"{s}.example{i}.com", "path": "/"} for i in range(10) for s in ("maps", "drive")]
    found = findings(tmp_path, items, ("site", "S"), ("path", "S"))
    assert codes(found) == ["domain-not-reversed", "sample-too-small"]
    (domain,) = [f for f in found if f.code == "domain-not-reversed"]
    assert "`com.example0.maps`" in domain.suggestion


def test_reversed_domains_pass(tmp_path):
    items = [{"site": f"com.example{i}.{s}", "path": "/"} for i in range(10) for s in ("maps", "drive")]
    assert codes(findings(tmp_path, items, ("site", "S"), ("path", "S"))) == ["sample-too-small"]


def test_hashed_key(tmp_path):
    items = [{"h": hashlib.sha256(str(i).encode()).hexdigest(), "v": i} for i in range(60)]
    assert codes(findings(tmp_path, items, ("h", "S"))) == ["hashed-key"]


def test_uuids_are_ids_not_hashes(tmp_path):
    items = [{"h": str(uuid.UUID(int=i * 7919 + 13)), "v": i} for i in range(60)]
    assert codes(findings(tmp_path, items, ("h", "S"))) == []


def _videos(n: int) -> list[dict]:
    items = []
    for v in range(n):
        vid = f"{v:04d}"
        items += [{"VideoId": vid, "SK": "Video", "Formats": {"480": f"https://storage/{vid}/480"}},
                  {"VideoId": vid, "SK": "VideoStatsLikes", "Count": v},
                  {"VideoId": vid, "SK": "VideoStatsViews", "Count": 10 * v}]
        items += [{"VideoId": vid, "SK": f"VideoComment#{90000000 - c * 7:08d}", "Content": f"comment {c}"}
                  for c in range(v % 3 + 1)]
    return items


def test_split_items_the_seeds_video_table_before_its_remodel(tmp_path):
    found = findings(tmp_path, _videos(20), ("VideoId", "S"), ("SK", "S"))
    assert codes(found) == ["counter-items", "split-items"]  # test_counter_items.py: the counters' own
    (split,) = [f for f in found if f.code == "split-items"]
    assert split.evidence.startswith("100 % of 20 sampled partitions hold several item types by sort key")
    assert split.source.section == "Single table design pattern"
    lines = split.snippet.splitlines()
    assert lines[:3] == ["families:", "  - name: VideoStatsLikes", "    gc: {max_versions: 1}"]
    assert lines[9:14] == ["rules:", '  - sort_key_prefix: "VideoStatsLikes"', '    row_key: "{VideoId}"',
                           "    family: VideoStatsLikes", '    qualifier: "{SK}"']
    # the suggested rules are a valid mapping that writes every item, one row per video
    import yaml

    (tmp_path / "again").mkdir()
    again = findings(tmp_path / "again", _videos(20), ("VideoId", "S"), ("SK", "S"),
                     mapping=yaml.safe_load(split.snippet))
    assert codes(again) == ["counter-items"]


def test_a_catalog_with_its_own_subcategories_is_not_split(tmp_path):
    """Near miss: the seeds' product catalog grown: each category's skus have their own kinds."""
    items = [{"category": f"cat{c}", "sku": f"sub{c}x{s}#brand{b}", "Price": b}
             for c in range(20) for s in range(3) for b in range(2)]
    assert codes(findings(tmp_path, items, ("category", "S"), ("sku", "S"))) == []


def test_the_plans_hot_key_guess_gives_way_to_the_data(tmp_path):
    """`created_at` reads like a time (plan's `hot-key`, same code here without data); the
    sample shows it is an order number: no finding once the data is read."""
    from ddb2bigtable.advise.run import advise
    from ddb2bigtable.spec.reading import read_spec

    from .helpers import export_of, spec_file

    spec = read_spec(spec_file(tmp_path, ("created_at", "S")))
    (guess,) = advise([spec]).findings
    assert guess.code == "hot-key" and guess.evidence.startswith("partition key created_at looks sequential")
    assert "--export" in guess.suggestion  # the data answers this guess
    export = export_of(tmp_path, ({"created_at": f"order-{i * 7919 % 1000:03d}x{i}"} for i in range(100)))
    assert codes(advise([spec], export=str(export)).findings) == []
