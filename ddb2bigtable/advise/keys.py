"""Row-key checks on sampled items: what the seeds' "row keys to avoid" look like in data.

`habits.py` has the DynamoDB habits (write sharding, version prefixes, split items) and
`key_numbers.py` numbers written as text; all read the sampled keys as `KeyView`s, built
here. What counts as personal data is `privacy.py`'s.

Each check is a pure function of the sampled keys (`KeyView`s) and returns its findings.
They look at the key as the mapping builds it: the *leading* value is the first field of
the row-key template the item's rule (or the default mapping) uses, with the rule's
prefix removed, because that is what decides which tablet a write lands on. Thresholds
are set so that a finding holds for most of the sample, never for a few odd items, and
distribution checks wait for `MIN_ITEMS` items (the seeds' 9-item designs say nothing
about distributions).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from ..codec.codec import Codec, CodecError
from ..codec.items import AttributeValue, Item
from ..spec.model import TableSpec
from .findings import (
    DOMAIN_NAMES,
    GENERAL,
    KEYS_TO_AVOID,
    PRIVACY,
    TIME_BASED,
    Finding,
    percent,
)
from .privacy import names_in_key, personal_kind

MIN_ITEMS = 50  # below this a share or a count of distinct values says nothing
MIN_PATTERN_ITEMS = 10  # a value pattern (version prefix, domain, digest) in fewer items is an anecdote
MOST = 0.8  # "in most sampled items"
HOT_SHARE = 0.25  # one partition value holding a quarter of the items: a quarter of the writes on one range
EPOCH_2000, EPOCH_2100 = 946_684_800, 4_102_444_800  # seconds: what counts as "now-ish" epoch time


@dataclass(frozen=True)
class KeyView:
    """One sampled item's key, as the checks need it."""

    field: str | None  # the first field of its row-key template
    leading: str | None  # that field's value as text (S or N), rule prefix removed
    partition: str | None  # the partition key's value as text (None for B)
    sort: str | None
    segments: tuple[str, ...]  # the row key split at its delimiters
    # every field of its row-key template: (name, its value as text (S without the rule's
    # prefix, N as written), its type (S, N, B; "" when absent))
    fields: tuple[tuple[str, str | None, str], ...] = ()
    names: tuple[str, ...] = ()  # attributes named like a person's name whose value is in the row key


def key_views(codec: Codec, items: Iterable[Item]) -> list[KeyView]:
    """The key of each item the codec can key (the others are the limits check's)."""
    table = codec.table
    key = table.source.key
    split = re.compile("[" + re.escape(table.mapping.delimiter + "#/|") + "]")
    views = []
    for item in items:
        plan = codec.plan_for(item)
        fields = tuple(_field_view(name, item.get(name), plan.prefixes.get(name) if plan.strips else None)
                       for name in plan.row.fields)
        field, leading, _ = fields[0] if fields else (None, None, "")
        try:
            row_key = codec.row_key(item).decode("utf-8", "replace")
        except CodecError:  # the limits check reports it
            continue
        views.append(KeyView(field, leading, _text(item.get(key.partition.name)),
                             _text(item.get(key.sort.name)) if key.sort else None,
                             tuple(s for s in split.split(row_key) if s), fields, names_in_key(item, row_key)))
    return views


def _field_view(name: str, value: AttributeValue | None, prefix: str | None) -> tuple[str, str | None, str]:
    """(name, text, type) of a row-key field: an S value without the rule's prefix."""
    if not value:
        return name, None, ""
    (tag, _), = value.items()
    text = _text(value)
    if tag == "S" and text is not None and prefix:
        text = text.removeprefix(prefix)
    return name, text, tag


def _text(value: AttributeValue | None) -> str | None:
    if not value:
        return None
    (tag, inner), = value.items()
    return inner if tag in ("S", "N") else None


def _field(views: list[KeyView]) -> str:
    """The row key's first field, as evidence names it (the most common one across rules)."""
    names = Counter(v.field for v in views if v.field)
    return f"`{names.most_common(1)[0][0]}`" if names else "its first field"


def _example(values: Iterable[str]) -> str:
    return next(iter(values), "")[:60]


# --- time and order -----------------------------------------------------------------------

_ISO = re.compile(r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?")
_EPOCH = re.compile(r"(\d{9,16})(?:\.\d+)?")


def is_time(text: str) -> bool:
    """Epoch seconds, milliseconds or microseconds between 2000 and 2100, or an ISO-8601 date
    or time, at the start of `text`."""
    iso = _ISO.match(text)
    if iso:
        try:
            datetime.fromisoformat(iso.group().replace("Z", "+00:00"))
            return True
        except ValueError:
            return False
    epoch = _EPOCH.match(text)
    if not epoch or (len(text) > epoch.end() and text[epoch.end()].isdigit()):
        return False
    digits = int(epoch.group(1))
    return any(EPOCH_2000 <= digits / scale <= EPOCH_2100 for scale in (1, 1_000, 1_000_000))


def time_leading(table: TableSpec, views: list[KeyView]) -> list[Finding]:
    leading = [v.leading for v in views if v.leading is not None]
    if table.mapping.salt or len(leading) < MIN_ITEMS:
        return []
    times = [t for t in leading if is_time(t)]
    if len(times) < MOST * len(leading):
        return []
    return [Finding(
        "time-leading-key", "warning", table.id,
        f"the row key starts with {_field(views)}, a time in {percent(len(times), len(leading))} of "
        f"{len(leading):,} sampled items (e.g. `{_example(times)}`): new writes all land at the end of the table",
        TIME_BASED,
        "put a high-cardinality value (a device or user id) before the time, as Google's "
        "`machine_4223421#1425330757685`; or salt the key so writes spread over several ranges "
        "(time-range reads then fan out over the buckets)",
        "salt: {buckets: 8}   # under mapping: about 2-4 buckets per node you expect")]


_INTEGER = re.compile(r"\d{1,18}")


def sequential_ids(table: TableSpec, views: list[KeyView], export_items: int) -> list[Finding]:
    """Integer leading values, nearly one per item, packed in a range not much wider than
    the export's item count: ids handed out in order (new ones are the busy ones)."""
    leading = [v.leading for v in views if v.leading is not None]
    if table.mapping.salt or len(leading) < MIN_ITEMS:
        return []
    numbers = {int(t) for t in leading if _INTEGER.fullmatch(t) and not is_time(t)}
    if len(numbers) < MOST * len(leading) or len(numbers) < MIN_ITEMS:
        return []
    span = max(numbers) - min(numbers) + 1
    if span > 4 * max(export_items, len(numbers)):
        return []
    return [Finding(
        "sequential-id-key", "warning", table.id,
        f"the row key starts with {_field(views)}, an integer id in {percent(len(numbers), len(leading))} of "
        f"{len(leading):,} sampled items, {len(numbers):,} distinct ids within {min(numbers):,}..{max(numbers):,} "
        f"for an export of {export_items:,} items: ids handed out in order, so the newest (busiest) rows sit together",
        KEYS_TO_AVOID,
        "write the id reversed (digits back to front) so consecutive ids land far apart, as Google suggests; "
        "or salt the key",
        "salt: {buckets: 8}   # under mapping: spreads consecutive ids over 8 ranges")]


def hot_partition(table: TableSpec, views: list[KeyView]) -> list[Finding]:
    values = Counter(v.partition for v in views if v.partition is not None)
    total = sum(values.values())
    if total < MIN_ITEMS:
        return []
    top = values.most_common(3)
    if top[0][1] < HOT_SHARE * total:
        return []
    shares = ", ".join(f"`{value[:40]}` {percent(count, total)}" for value, count in top)
    name = table.source.key.partition.name
    return [Finding(
        "hot-partition", "warning", table.id,
        f"{percent(top[0][1], total)} of {total:,} sampled items share partition key {name} = `{top[0][0][:40]}` "
        f"({len(values):,} distinct values; top: {shares})",
        GENERAL,
        f"one {name} value holds a large share of the data, so its key range takes that share of the writes; "
        "lead the row key with a value that has more distinct values (a rule's `row_key` template), or keep "
        "the hot value out of the key's first segment")]


# --- readability and privacy --------------------------------------------------------------

_HOST = re.compile(r"(?:[a-z]+://)?((?:[a-z0-9-]+\.)+[a-z]{2,})(?=$|[/:#|])", re.I)
_TLDS = frozenset("com org net edu gov io co uk de fr jp cn ru br in it es nl au ca us info biz dev app".split())
_DIGEST = re.compile(r"[0-9a-f]{32}|[0-9a-f]{40}|[0-9a-f]{64}", re.I)


def domain_not_reversed(table: TableSpec, views: list[KeyView]) -> list[Finding]:
    leading = [v.leading for v in views if v.leading is not None]
    hosts = [m.group(1) for m in (_HOST.match(t) for t in leading) if m]
    forward = [h for h in hosts if h.rsplit(".", 1)[1].lower() in _TLDS and h.split(".", 1)[0].lower() not in _TLDS]
    if len(forward) < MIN_PATTERN_ITEMS or len(forward) < MOST * len(leading):
        return []
    example = _example(forward)
    return [Finding(
        "domain-not-reversed", "info", table.id,
        f"the row key starts with a domain name in {percent(len(forward), len(leading))} of {len(leading):,} "
        f"sampled items (e.g. `{example}`): rows of one site (maps.google.com, drive.google.com) lie apart",
        DOMAIN_NAMES,
        f"store the name reversed (`{'.'.join(reversed(example.split('.')))}`) so one domain's rows are one "
        "range and compress together; the application writes and reads the reversed form")]


def hashed_key(table: TableSpec, views: list[KeyView]) -> list[Finding]:
    leading = [v.leading for v in views if v.leading is not None]
    digests = [t for t in leading if _DIGEST.fullmatch(t)]
    if len(digests) < MIN_PATTERN_ITEMS or len(digests) < MOST * len(leading):
        return []
    return [Finding(
        "hashed-key", "warning", table.id,
        f"the row key starts with {_field(views)}, a hex digest (MD5/SHA length) in "
        f"{percent(len(digests), len(leading))} of {len(leading):,} sampled items (e.g. `{_example(digests)}`)",
        KEYS_TO_AVOID,
        "a hash gives up Bigtable's order (no prefix or range reads) and makes Key Visualizer unreadable: key "
        "by the readable value the hash was made from; if it was there to spread writes, salt the key instead",
        "salt: {buckets: 8}   # under mapping, with the readable value as the key")]


# --- privacy (what counts as personal data: privacy.py) -----------------------------------

def personal_data(table: TableSpec, views: list[KeyView]) -> list[Finding]:
    """E-mails, phones or IP addresses as row-key segments, or person names from the item
    in the row key, in half the sampled items (and at least 5)."""
    kinds: Counter[str] = Counter()
    attributes: Counter[str] = Counter()
    for v in views:
        found = {k for k in map(personal_kind, v.segments) if k}
        if v.names:
            found.add("person name")
            attributes.update(v.names)
        kinds.update(found)
    if not kinds:
        return []
    kind, count = kinds.most_common(1)[0]
    if count < 5 or count < 0.5 * len(views):
        return []
    what = kind if kind != "person name" else (
        "a person's name: the item's " + ", ".join(f"`{a}`" for a, _ in attributes.most_common(3)))
    return [Finding(
        "personal-data-key", "warning", table.id,
        f"row keys carry personal data ({what}) in {percent(count, len(views))} of {len(views):,} sampled items",
        PRIVACY,
        "row keys are service data: logs, encryption and tools may show them to people who must not see "
        "personal data; key by an opaque id and keep the personal value in a cell")]
