"""DynamoDB habits in sampled keys that Bigtable makes unnecessary (the seeds' "Bigtable
for DynamoDB users"): write sharding, versions as copies, an entity split into items
to stay under 400 KB, and counters kept as items of their own. Pure functions of the
sampled keys (as in `keys.py`), or of the sampled items for the counters.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from ..codec.cell_values import counter_number
from ..codec.items import Item
from ..codec.mutations import CodecError
from ..spec.model import TableSpec
from .findings import DATA_SORTING, SINGLE_TABLE, VERSIONING, Finding, Severity, percent
from .keys import MIN_ITEMS, MIN_PATTERN_ITEMS, MOST, KeyView

_SHARD = re.compile(r"(.+?)([#_.:-])(\d{1,2})")
MAX_ONE_KEY_SHARDS = 32  # one key's shards: a few buckets per node; 40 numbered devices are devices
MIN_SHARD_ITEMS = 50  # sampled items each of one key's shards holds: random writes fill every one alike
_Case = tuple[Severity, str, str, str]  # a write-sharding finding's severity, evidence, suggestion, snippet


def write_sharding(table: TableSpec, views: list[KeyView]) -> list[Finding]:
    """Partition keys `<key>#<n>` with a small n: DynamoDB's write sharding (Google's
    "Bigtable for DynamoDB users": Bigtable calls it salting). Either several keys sharded
    alike (the same numbers under each) or one logical key spread over a small dense range
    (`orders#1`..`orders#10`, the seeds' example), each number holding many items."""
    values = Counter(v.partition for v in views if v.partition is not None)
    total = sum(values.values())
    if total < MIN_ITEMS:
        return []
    shards: dict[str, Counter[int]] = {}
    separators: dict[str, str] = {}
    for value, count in values.items():
        m = _SHARD.fullmatch(value)
        if m:
            shards.setdefault(m.group(1), Counter())[int(m.group(3))] += count
            separators.setdefault(m.group(1), m.group(2))
    matched = sum(sum(c.values()) for c in shards.values())
    if matched < MOST * total:
        return []
    found = _several_keys(shards, total, len(values)) or _one_key(shards, separators, total)
    if found is None:
        return []
    severity, evidence, suggestion, snippet = found
    return [Finding(
        "write-sharding", severity, table.id,
        f"{percent(matched, total)} of {total:,} sampled items have a partition key ending in a shard number "
        f"({evidence})", DATA_SORTING, suggestion, snippet)]


def _several_keys(shards: dict[str, Counter[int]], total: int, distinct: int) -> _Case | None:
    """The same numbers repeated under several keys, each value holding several items."""
    suffixes = {n for ns in shards.values() for n in ns}
    sharded = [ns for ns in shards.values() if len(ns) > 1]
    if (len(sharded) < 2 or len(sharded) < 0.5 * len(shards)
            or sum(len(ns) for ns in sharded) < 0.5 * len(sharded) * len(suffixes) or total < 2 * distinct):
        return None
    base = max(shards, key=lambda b: len(shards[b]))
    buckets = max(suffixes) + 1 if 0 in suffixes else max(suffixes)
    return ("warning",
            f"{min(suffixes)}..{max(suffixes)}; {len(shards):,} keys in {distinct:,} shards, e.g. `{base[:40]}` "
            f"in {len(shards[base])}",
            "Bigtable calls this salting and can do it for you: let the application write the plain key and "
            "salt the row key in the mapping (the same key always lands in the same bucket, so reads stay one "
            "range); until then the suffix stays part of each row key",
            f"salt: {{buckets: {buckets}}}   # under mapping")


def _one_key(shards: dict[str, Counter[int]], separators: dict[str, str], total: int) -> _Case | None:
    """One key holding most items, its numbers every one of 0..n-1 or 1..n (n at most
    `MAX_ONE_KEY_SHARDS`), each holding `MIN_SHARD_ITEMS` items or more and at least half
    the average, as random draws from a fixed set do. A handful of numbered entities
    (`store#1`, `store#2`, `store#7`) has gaps, few items or uneven ones."""
    base = max(shards, key=lambda b: sum(shards[b].values()))
    counts = shards[base]
    held = sum(counts.values())
    low, high = min(counts), max(counts)
    if (held < MOST * total or low not in (0, 1) or not 2 <= len(counts) <= MAX_ONE_KEY_SHARDS
            or high - low + 1 != len(counts) or min(counts.values()) < max(MIN_SHARD_ITEMS, 0.5 * held / len(counts))):
        return None
    name = f"{base[:40]}{separators[base]}"
    return ("info",
            f"one logical key in {len(counts)} shards, `{name}{low}`..`{name}{high}`, every number holding "
            f"{min(counts.values()):,} to {max(counts.values()):,} items: a random number from a fixed set "
            "appended to the key",
            f"in Bigtable this suffix is key salting already: each row key starts with its shard, so writes "
            f"spread over {len(counts)} ranges and reading the key takes {len(counts)} range reads, as its "
            "DynamoDB queries do today. Keep it while this key takes most writes: the mapping's `salt` hashes "
            "the whole partition key, so a plain key would put every row in one bucket. Bigtable splits a key's "
            "rows into tablets by row range, not by partition key: when the sort key does not rise with time, "
            "the application may write the plain key and read it as one range (its rows spread by sort key)", "")


_VERSION = re.compile(r"v(\d+)_")


def version_prefix(table: TableSpec, views: list[KeyView]) -> list[Finding]:
    sorts = [v.sort for v in views if v.sort is not None]
    versions = [m for m in (_VERSION.match(s) for s in sorts) if m]
    if len(versions) < MIN_PATTERN_ITEMS or len(versions) < 0.5 * len(sorts):
        return []
    numbers = Counter(int(m.group(1)) for m in versions)
    if 0 not in numbers:
        return []
    sort = table.source.key.sort
    name = sort.name if sort else "the sort key"
    return [Finding(
        "version-prefix", "warning", table.id,
        f"{percent(len(versions), len(sorts))} of {len(sorts):,} sampled sort keys ({name}) start with a version "
        f"prefix (v0_ .. v{max(numbers)}_; v0_ in {numbers[0]:,} items): DynamoDB's versioning by copies",
        VERSIONING,
        "every Bigtable cell is versioned by its timestamp: keep one row per item (the v0_ copy), write each "
        "change as a new cell version and let the family's GC keep as many versions as you need; the vN_ "
        "copies, the read of the old value and the second write go away",
        "families:\n  - name: cf\n    gc: {max_versions: 10}   # the versions you keep today\n"
        "rules:\n  - sort_key_prefix: \"v0_\"   # the current copy; the vN_ items become its older versions")]


_KIND = re.compile(r"[^#]*?(?=#|\d*$)")
_FAMILY = re.compile(r"[A-Za-z0-9_.-]{1,64}")
MAX_KINDS = 20  # an item type per concern (Video, VideoComment, VideoStats...), not an open set


def sort_kind(sort: str) -> str:
    """The item type a sort key names: before its first `#`, else without trailing digits
    (`VideoComment#98765481` -> `VideoComment`, `VideoStatsLikes` stays)."""
    match = _KIND.match(sort)
    return match.group() if match else sort


def split_items(table: TableSpec, views: list[KeyView]) -> list[Finding]:
    """Under the default mapping (one row per item), partitions made of the same few item
    types (an entity, its comments, its counters): the single-table design DynamoDB needs
    because an item holds at most 400 KB, which the seeds gather into one Bigtable row."""
    sort = table.source.key.sort
    if table.mapping.rules or sort is None or sort.type != "S":
        return []
    kinds: dict[str, set[str]] = {}
    for v in views:
        if v.partition is not None and v.sort is not None:
            kinds.setdefault(v.partition, set()).update(k for k in (sort_kind(v.sort),) if k)
    items = sum(1 for v in views if v.sort is not None)
    every = Counter(k for ks in kinds.values() for k in ks)
    if items < MIN_ITEMS or len(kinds) < 5 or not 2 <= len(every) <= MAX_KINDS:
        return []
    mixed = sum(1 for ks in kinds.values() if len(ks) > 1)
    common = [k for k, n in every.most_common() if n >= 0.5 * len(kinds)]
    if mixed < MOST * len(kinds) or len(common) < 2:
        return []
    pk = table.source.key.partition.name
    ordered = sorted(every, key=lambda k: (-len(k), k))  # the first matching rule wins: longer prefixes first
    family = {k: k if _FAMILY.fullmatch(k) else table.mapping.default_family for k in ordered}
    families = "".join(f"  - name: {f}\n    gc: {{max_versions: 1}}\n" for f in dict.fromkeys(family.values()))
    rules = "".join(f"  - sort_key_prefix: \"{k}\"\n    row_key: \"{{{pk}}}\"\n"
                    f"    family: {family[k]}\n    qualifier: \"{{{sort.name}}}\"\n" for k in ordered)
    return [Finding(
        "split-items", "info", table.id,
        f"{percent(mixed, len(kinds))} of {len(kinds):,} sampled partitions hold several item types by sort key "
        f"({', '.join(f'`{k}`' for k in common[:5])} in half of them or more); the default mapping makes each "
        "item its own row",
        SINGLE_TABLE,
        f"a Bigtable row holds far more than an item's 400 KB and updates one cell as cheaply as a small row: "
        f"gather each {pk}'s items in one row (a family per item type; counters as cells), so the entity "
        "reads and deletes as one row; run advise again with the new mapping to see the rows' size",
        "families:\n" + families + "rules:\n" + rules.rstrip("\n"))]


MIN_COUNTER_ITEMS = 5  # sampled items of one type before its single number reads as a counter


def counter_items(table: TableSpec, items: Sequence[Item]) -> list[Finding]:
    """Item types (a sort key that is only the type's name) whose every sampled item holds
    one whole number besides its keys: counters kept as items of their own (the seeds'
    `VideoStatsLikes` with `Count`), as DynamoDB's single-table design keeps them for `ADD`.
    In Bigtable each becomes a cell of an aggregate family (int64 Sum) in the entity's row.
    Quiet once the mapping declares them `counter`."""
    key = table.source.key
    if key.sort is None or key.sort.type != "S":
        return []
    names: dict[str, set[str]] = {}
    counts: Counter[str] = Counter()
    other: set[str] = set()
    for item in items:
        sort = item.get(key.sort.name, {}).get("S")
        if sort is None:
            continue
        kind = sort_kind(sort)
        rest = [(n, v) for n, v in item.items() if n not in (key.partition.name, key.sort.name)]
        if kind == sort and len(rest) == 1 and _whole(rest[0][1].get("N")):  # the whole sort key names it
            names.setdefault(kind, set()).add(rest[0][0])
            counts[kind] += 1
        else:
            other.add(kind)
    declared = {a.name for a in table.mapping.attributes if a.type == "counter"}
    found = {k: next(iter(n)) for k, n in sorted(names.items()) if k and k not in other and len(n) == 1
             and counts[k] >= MIN_COUNTER_ITEMS and next(iter(n)) not in declared}
    if not found:
        return []
    attributes = sorted(set(found.values()))
    rules = "".join(f"  - sort_key_prefix: \"{k}\"\n    row_key: \"{{{key.partition.name}}}\"\n    family: Counters\n"
                    f"    qualifier: \"{k.replace('{', '{{').replace('}', '}}')}\"\n    value: {a}\n"
                    for k, a in sorted(found.items(), key=lambda ka: (-len(ka[0]), ka[0])))
    return [Finding(
        "counter-items", "info", table.id,
        f"{', '.join(f'`{k}`' for k in found)} items ({sum(counts[k] for k in found):,} sampled) each hold one "
        f"whole number besides their keys ({', '.join(attributes)}): counters kept as items of their own, as "
        "DynamoDB's single-table design keeps them for ADD",
        SINGLE_TABLE,
        f"declare {', '.join(attributes)} `type: counter` and keep each as one cell of a counter family in the "
        f"{key.partition.name}'s row (an aggregate family, int64 Sum): the load sets each to the export's value, "
        "and the application increments with AddToCell through any app profile, the multi-cluster serving one "
        "included, where every region's increments count (DynamoDB global tables keep the last writer's value) "
        "and no txn- profile is needed (docs/spec.md, Counters)",
        "families:\n  - name: Counters\n    gc: {max_versions: 1}\nattributes:\n"
        + "".join(f"  - {{name: {a}, type: counter}}\n" for a in attributes) + "rules:\n" + rules.rstrip("\n"))]


def _whole(text: str | None) -> bool:
    """An N that a counter holds exactly (an int64)."""
    if text is None:
        return False
    try:
        counter_number(text)
    except CodecError:
        return False
    return True
