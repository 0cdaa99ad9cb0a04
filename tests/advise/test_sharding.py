"""Write sharding (Google's "Bigtable for DynamoDB users", Data sorting): a random number
from a fixed set appended to partition keys. Several keys sharded alike (`day#1`..`day#10`
under each day) or the seeds' own example, one logical key spread over `orders#1` ..
`orders#10`; and the near misses that must stay quiet: numbered entities (`store#1`,
`store#2`, `store#7`, `dev-0`..`dev-39`) with few items each or gaps between them."""

from __future__ import annotations

import functools
import os
import re
import tempfile
from pathlib import Path

from click.testing import CliRunner
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from ddb2bigtable.advise.habits import write_sharding
from ddb2bigtable.advise.keys import MIN_ITEMS, KeyView
from ddb2bigtable.advise.run import advise
from ddb2bigtable.cli.app import main
from ddb2bigtable.spec.model import TableSpec
from ddb2bigtable.spec.reading import read_spec

from ..conftest import ROOT
from .helpers import codes, findings, spec_file

SEPARATORS = "#_.:-"
SNAPSHOT = ROOT / "tests" / "snapshots" / "advise-orders-sharded.md"


@functools.cache
def _table() -> TableSpec:
    return read_spec(spec_file(Path(tempfile.mkdtemp()), ("pk", "S"), ("sk", "S"))).tables[0]


def _views(partitions: list[str]) -> list[KeyView]:
    return [KeyView("pk", p, p, f"order-{i}", (p, f"order-{i}")) for i, p in enumerate(partitions)]


def _one_key(base: str, separator: str, first: int, counts: list[int]) -> list[str]:
    """`counts[n]` items under `<base><separator><first + n>`, interleaved as writes come."""
    left = list(counts)
    out = []
    while any(left):
        for n, c in enumerate(left):
            if c:
                out.append(f"{base}{separator}{first + n}")
                left[n] -= 1
    return out


def test_the_seeds_example_one_key_in_ten_shards(tmp_path):
    """The seeds' example, shipped as `exports/other/orders-sharded`: 2,000 orders under one
    logical key, `orders#1` .. `orders#10` (a random number from 1 to 10)."""
    spec = read_spec(spec_file(tmp_path, ("pk", "S"), ("sk", "S"), table="Orders"))
    found = advise([spec], export=str(ROOT / "exports" / "other" / "orders-sharded")).findings
    assert codes(found) == ["write-sharding"]
    (shard,) = found
    assert shard.severity == "info" and shard.source.section == "Data sorting"
    assert "100 % of 2,000 sampled items" in shard.evidence
    assert "one logical key in 10 shards, `orders#1`..`orders#10`" in shard.evidence
    # the mapping's salt hashes the whole key: no snippet that would put one key in one bucket
    assert "key salting already" in shard.suggestion and shard.snippet == ""


def test_one_key_in_shards_from_zero(tmp_path):
    items = [{"pk": p, "sk": f"event-{i}"} for i, p in enumerate(_one_key("events", "_", 0, [60] * 8))]
    (shard,) = findings(tmp_path, items, ("pk", "S"), ("sk", "S"))
    assert shard.code == "write-sharding" and "one logical key in 8 shards, `events_0`..`events_7`" in shard.evidence


def test_a_handful_of_numbered_stores_is_quiet(tmp_path):
    """Near miss: `store#1`, `store#2`, `store#7`: numbered entities with gaps between them."""
    items = [{"pk": f"store#{n}", "sk": f"sale-{i}"} for n in (1, 2, 7) for i in range(25)]
    assert "write-sharding" not in codes(findings(tmp_path, items, ("pk", "S"), ("sk", "S")))


def test_numbered_stores_with_few_items_each_are_quiet(tmp_path):
    """Near miss: `store#1`..`store#5`, a dense range but 30 items each."""
    items = [{"pk": f"store#{n}", "sk": f"sale-{i}"} for n in range(1, 6) for i in range(30)]
    assert "write-sharding" not in codes(findings(tmp_path, items, ("pk", "S"), ("sk", "S")))


@settings(max_examples=150, deadline=None)
@given(shards=st.integers(2, 32), first=st.sampled_from([0, 1]), separator=st.sampled_from(SEPARATORS),
       base=st.from_regex(r"[a-z][a-z0-9]{0,11}", fullmatch=True), data=st.data())
def test_one_key_spread_over_a_small_dense_range_is_found(shards, first, separator, base, data):
    """Any key, separator and bucket count up to 32, shards holding 50 items or more and
    within a factor of two of each other (random draws from a fixed set): found, naming
    the shards."""
    low = data.draw(st.integers(50, 120))
    counts = data.draw(st.lists(st.integers(low, 2 * low), min_size=shards, max_size=shards))
    (found,) = write_sharding(_table(), _views(_one_key(base, separator, first, counts)))
    assert f"one logical key in {shards} shards, `{base}{separator}{first}`..`{base}{separator}" \
           f"{first + shards - 1}`" in found.evidence


@settings(max_examples=150, deadline=None)
@given(numbers=st.sets(st.integers(0, 99), min_size=2, max_size=12), per=st.integers(50, 120),
       separator=st.sampled_from(SEPARATORS))
def test_numbered_entities_with_gaps_are_quiet(numbers, per, separator):
    """Numbers that do not fill a range from 0 or 1 are entities, however many items each."""
    dense = sorted(numbers) == list(range(min(numbers), min(numbers) + len(numbers))) and min(numbers) <= 1
    partitions = [f"store{separator}{n}" for n in sorted(numbers) for _ in range(per)]
    assert bool(write_sharding(_table(), _views(partitions))) == dense


@settings(max_examples=100, deadline=None)
@given(shards=st.integers(2, 32), first=st.sampled_from([0, 1]), per=st.integers(1, 49))
def test_dense_numbers_with_few_items_each_are_quiet(shards, first, per):
    assume(shards * per >= MIN_ITEMS)  # enough items for the check to weigh them
    partitions = _one_key("store", "#", first, [per] * shards)
    assert write_sharding(_table(), _views(partitions)) == []


def test_uneven_numbered_values_are_quiet():
    """Random draws from a fixed set come out even; one value holding a tenth of another's
    items is an entity with its own traffic."""
    partitions = _one_key("store", "#", 1, [400, 40, 300, 350, 380])
    assert write_sharding(_table(), _views(partitions)) == []


def test_the_seeds_example_as_a_pr_comment_matches_the_snapshot(tmp_path):
    """UPDATE_SNAPSHOTS=1 rewrites tests/snapshots/advise-orders-sharded.md; review it like code.
    The sample's seconds vary from run to run: shown as `-`."""
    spec = spec_file(tmp_path, ("pk", "S"), ("sk", "S"), name="orders", table="Orders")
    result = CliRunner().invoke(main, ["advise", str(spec), "--export", str(ROOT / "exports" / "other" / "orders-sharded"),
                                       "--format", "markdown"])
    assert result.exit_code == 0, result.output
    text = re.sub(r"\| \d+\.\d\d \|$", "| - |", result.output.replace(str(ROOT) + "/", ""), flags=re.M)
    if os.environ.get("UPDATE_SNAPSHOTS"):
        SNAPSHOT.write_text(text, encoding="utf-8")
    assert text == SNAPSHOT.read_text(encoding="utf-8")
