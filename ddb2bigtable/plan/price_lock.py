"""The price lock: `prices.lock.json`, unit prices fetched from Google's and AWS's price APIs.

Why a lock: prices change and differ per account, and the public price pages render
their tables with JavaScript, so the only exact figures are the ones the APIs give at the
user's site. `prices refresh` writes them into a file committed beside the specs, like a
dependency lockfile, so a plan and a pull request's diff are reproducible and a price
change shows up as a reviewed change of its own.

This module holds the lock's model, its reader (every problem at its JSON path, exit 2)
and its writer's document form. Format version 1 (normative names in the design):

    {"version": 1, "fetched": "2026-11-25T10:00:00Z", "currency": "USD",
     "bigtable": {"us-east4": {"node_hour": {"price": 0.72, "sku": "...", "effective": "2026-10-01"}}},
     "network": {"bigtable_replication_gib": {"north_america->europe": {...}}},
     "dynamodb": {"us-east-1": {"rcu_hour": {...}, ...}}}

Items and fields this version does not know are accepted and left unused, so a lock
written by a newer version still prices what this one knows.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any

from ..spec.errors import InputError, Problem
from ..spec.file_limits import read_text
from ..spec.yaml_source import JsonPath, YamlDocument, compose_text

LOCK_FILE = "prices.lock.json"
VERSION = 1
STALE_AFTER_DAYS = 90
BIGTABLE_ITEMS = ("node_hour", "ssd_gib_month", "hdd_gib_month", "backup_gib_month")
DYNAMODB_ITEMS = ("rcu_hour", "wcu_hour", "replicated_wcu_hour", "read_request_million", "write_request_million",
                  "replicated_write_request_million", "storage_gib_month", "storage_ia_gib_month",
                  "pitr_gib_month", "backup_gib_month")
REPLICATION = "bigtable_replication_gib"  # network item: keyed "<continent>-><continent>"
_PAIR = re.compile(r"[a-z_]+->[a-z_]+")
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
_GCP_REGION = re.compile(r"[a-z]+-[a-z]+\d+")
_AWS_REGION = re.compile(r"[a-z]+(-[a-z]+)+-\d+")


@dataclass(frozen=True)
class LockedPrice:
    """One figure of the lock: the price per unit, the SKU it was read from (Google's SKU
    id, or AWS's SKU and offer term code), and the date the price took effect."""

    price: float
    sku: str
    effective: str  # YYYY-MM-DD
    term: str = ""  # AWS offer term code (e.g. JRTCKXETXF, OnDemand)
    description: str = ""  # the SKU's own description, so a reviewer can find it


@dataclass(frozen=True)
class PriceLock:
    """A read lock. `file` is the name shown on cost lines (as given, or relative to the root)."""

    file: str
    fetched: str  # ISO 8601 UTC time of the refresh
    currency: str
    bigtable: Mapping[str, Mapping[str, LockedPrice]] = field(default_factory=dict)
    network: Mapping[str, Mapping[str, LockedPrice]] = field(default_factory=dict)
    dynamodb: Mapping[str, Mapping[str, LockedPrice]] = field(default_factory=dict)

    def find(self, section: str, key: str, item: str) -> LockedPrice | None:
        """`find("bigtable", "us-east4", "node_hour")`; network: `find("network", REPLICATION, pair)`."""
        regions: Mapping[str, Mapping[str, LockedPrice]] = getattr(self, section)
        return regions.get(key, {}).get(item)

    @property
    def fetched_day(self) -> date:
        return _instant(self.fetched).date()

    def age_days(self, today: date) -> int:
        return (today - self.fetched_day).days

    def source(self, section: str) -> str:
        """What a cost line cites for a figure of this lock."""
        api = "AWS Price List Query API" if section == "dynamodb" else "Cloud Billing Catalog API"
        return f"{self.file} ({api}, fetched {self.fetched})"


def _instant(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


class _Reader:
    """Checks one parsed lock, collecting every problem at its place in the file."""

    def __init__(self, doc: YamlDocument):
        self.doc = doc
        self.problems: list[Problem] = []

    def fail(self, path: JsonPath, message: str) -> None:
        self.problems.append(self.doc.problem(path, f"{message}; fix the file or run `ddb2bigtable prices refresh`"))

    def mapping(self, value: Any, path: JsonPath, what: str) -> dict[str, Any]:
        if isinstance(value, dict):
            return value
        self.fail(path, f"{what} must be an object, got {json.dumps(value)[:40]}")
        return {}

    def entry(self, value: Any, path: JsonPath) -> LockedPrice | None:
        entry = self.mapping(value, path, "a price")
        if not entry:
            return None
        price, sku, effective = entry.get("price"), entry.get("sku"), entry.get("effective")
        ok = True
        if isinstance(price, bool) or not isinstance(price, (int, float)) or price < 0:
            self.fail(path + ("price",), f"must be a number >= 0 (USD per unit), got {json.dumps(price)}")
            ok = False
        if not isinstance(sku, str) or not sku.strip():
            self.fail(path + ("sku",), "must name the SKU the price was read from")
            ok = False
        if not _is_day(effective):
            self.fail(path + ("effective",), f"must be a date YYYY-MM-DD, got {json.dumps(effective)}")
            ok = False
        for key in ("term", "description"):
            if key in entry and not isinstance(entry[key], str):
                self.fail(path + (key,), "must be text")
                ok = False
        if not ok:
            return None
        return LockedPrice(float(price or 0), str(sku), str(effective), entry.get("term", ""),
                           entry.get("description", ""))

    def section(self, data: dict[str, Any], name: str, key: re.Pattern[str], what: str
                ) -> dict[str, dict[str, LockedPrice]]:
        """`bigtable`, `network` or `dynamodb`: keys matching `key`, each an object of prices."""
        out: dict[str, dict[str, LockedPrice]] = {}
        for key_text, items in self.mapping(data.get(name, {}), (name,), name).items():
            if not key.fullmatch(key_text):
                self.fail((name, key_text), f"{key_text!r} is not {what}")
            out[key_text] = {item: price for item, value in self.mapping(items, (name, key_text), "its prices").items()
                             if (price := self.entry(value, (name, key_text, item))) is not None}
        return out


def _is_day(value: Any) -> bool:
    if not isinstance(value, str) or not _DAY.fullmatch(value):
        return False
    try:
        date.fromisoformat(value)
    except ValueError:
        return False
    return True


def parse_lock(path: Path, shown: str, name: str | None = None) -> PriceLock:
    """The lock at `path` (named `shown` in messages, `name` or `shown` on cost lines), or
    InputError with every problem at its line, column and JSON path."""
    text, unreadable = read_text(path, shown, "a price lock", "a refresh writes far less: run `ddb2bigtable prices "
                                 "refresh`")
    if unreadable:
        raise InputError([Problem.about(shown, "", f"cannot read the price lock ({unreadable.message}); give an "
                                        "existing file with --prices or run `ddb2bigtable prices refresh`")])
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError([Problem(shown, error.lineno, error.colno, "", f"not JSON: {error.msg}; "
                                  "run `ddb2bigtable prices refresh` to write it again")]) from None
    doc, problems = compose_text(text, shown)  # the same text, composed for each value's line and column
    if doc is None or problems:
        raise InputError(problems or [Problem.about(shown, "", "cannot read the price lock")])
    doc.data = data
    r = _Reader(doc)
    top = r.mapping(data, (), "the price lock")
    if top and top.get("version") != VERSION:
        r.fail(("version",), f"must be {VERSION}, got {json.dumps(top.get('version'))}")
    fetched = top.get("fetched")
    try:
        _instant(fetched) if isinstance(fetched, str) else None
    except ValueError:
        fetched = None
    if top and not isinstance(fetched, str):
        r.fail(("fetched",), "must be the refresh time, ISO 8601 (2026-11-25T10:00:00Z)")
    if top and top.get("currency") != "USD":
        r.fail(("currency",), f"must be \"USD\" (plans are priced in USD), got {json.dumps(top.get('currency'))}")
    bigtable = r.section(top, "bigtable", _GCP_REGION, "a GCP region (us-east4)")
    network = r.section(top, "network", re.compile(r"[a-z_]+"), "a network item (bigtable_replication_gib)")
    for pair in network.get(REPLICATION, {}):
        if not _PAIR.fullmatch(pair):
            r.fail(("network", REPLICATION, pair), f"{pair!r} is not a continent pair like north_america->europe")
    dynamodb = r.section(top, "dynamodb", _AWS_REGION, "an AWS region (us-east-1)")
    if r.problems:
        raise InputError(r.problems)
    return PriceLock(name or shown, str(fetched), "USD", bigtable, network, dynamodb)


def lock_for(root: Path, given: Path | None) -> PriceLock | None:
    """The lock a command prices with: `--prices FILE` when given, else `prices.lock.json`
    at the project root when it exists, else None (the shipped table). Cost lines name the
    root's lock `prices.lock.json` wherever the root is (diff plans each side in a
    temporary folder), and a given file as given."""
    if given is not None:
        return parse_lock(given, str(given))
    default = root / LOCK_FILE
    if default.is_file():
        return parse_lock(default, str(default), LOCK_FILE)
    return None


def to_document(lock: PriceLock) -> dict[str, Any]:
    """The lock as its JSON document (version 1), keys sorted so a refresh diffs cleanly."""
    def entries(section: Mapping[str, Mapping[str, LockedPrice]]) -> dict[str, Any]:
        return {key: {item: {k: v for k, v in (("price", p.price), ("sku", p.sku), ("effective", p.effective),
                                               ("term", p.term), ("description", p.description)) if v != ""}
                          for item, p in sorted(items.items())}
                for key, items in sorted(section.items())}
    return {"version": VERSION, "fetched": lock.fetched, "currency": lock.currency,
            "bigtable": entries(lock.bigtable), "network": entries(lock.network), "dynamodb": entries(lock.dynamodb)}
