"""Dated unit prices for the plan's cost columns, read from `data/prices.json`.

Why a JSON table and not constants: every figure must carry where it came from and when,
so a reviewer can see how old a monthly cost is and re-check it; and prices change (AWS cut
DynamoDB on-demand throughput by 50 % and global-tables replicated writes by up to 67 %
from 2024-11-01) without any code changing.

Why fallbacks are explicit: a plan must always get a number, but a number we could not
confirm for a region must say so. When a region has no figure of its own, the reference
region's price is used (Bigtable: us-central1, DynamoDB: us-east-1) and the returned
`Price` has `estimate=True` and a note naming the region whose price was used. Nothing is
interpolated or scaled.

One documented rule is applied instead of a fallback: since 2024-11-01 DynamoDB bills a
replicated write (rWCU, rWRU) at the single-region write price of the same region, so a
region with its own WCU/WRU price also gets its replicated-write price from it.

Why a lock comes first: `prices.lock.json` (price_lock.py) holds the figures Google's and
AWS's price APIs gave at the user's site, exact per region and account. Each function
takes the lock a command read (or None) and looks there first; a figure the lock lacks
falls back to this table, then to the reference region's, and the `Price` says which
(`origin`) and, when a lock was given, what it lacked (`gap`, a plan warning).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from functools import cache
from importlib import resources
from typing import Any

from .price_lock import REPLICATION, PriceLock

_DATA_PACKAGE = "ddb2bigtable.plan"
_DATA_FILE = ("data", "prices.json")

BIGTABLE_STORAGE_TYPES: tuple[str, ...] = ("ssd", "hdd")
DYNAMODB_ITEMS: tuple[str, ...] = (
    "rcu_hour",
    "wcu_hour",
    "replicated_wcu_hour",
    "rru_million",
    "wru_million",
    "replicated_wru_million",
    "storage_gb_month",
    "storage_ia_gb_month",
    "pitr_gb_month",
)
# The table's item -> the lock's name for it (the lock names units as the APIs bill them: GiB).
_LOCK_ITEM: dict[str, str] = {
    "rcu_hour": "rcu_hour", "wcu_hour": "wcu_hour", "replicated_wcu_hour": "replicated_wcu_hour",
    "rru_million": "read_request_million", "wru_million": "write_request_million",
    "replicated_wru_million": "replicated_write_request_million", "storage_gb_month": "storage_gib_month",
    "storage_ia_gb_month": "storage_ia_gib_month", "pitr_gb_month": "pitr_gib_month",
}
# Replicated-write item -> the single-region item it has cost the same as since 2024-11-01.
_REPLICATED_EQUALS: dict[str, tuple[str, str]] = {
    "replicated_wcu_hour": ("wcu_hour", "rWCU-hour"),
    "replicated_wru_million": ("wru_million", "million rWRU"),
}


@dataclass(frozen=True)
class Price:
    """One unit price with its provenance, so cost lines can cite it."""

    value: float  # USD
    unit: str  # e.g. "node-hour", "GiB-month", "million RRU", "RCU-hour"
    source: str  # URL
    as_of: str  # YYYY-MM-DD the figure was read/published
    estimate: bool  # True when the region has no figure of its own
    note: str = ""  # e.g. "no published price for asia-south2; us-central1 price used"
    sku: str = ""  # the lock's SKU (AWS: SKU/offer term) when the figure came from the lock
    locked: bool = False  # read from the price lock
    key: str = ""  # the figure's place: "bigtable.us-east4.node_hour" (diff matches prices by it)
    gap: str = ""  # a lock was given but lacks this figure: what it lacks and what was used

    @property
    def origin(self) -> str:
        """"lock", "table" (the shipped table) or "estimate": what every cost line says."""
        return "lock" if self.locked else "estimate" if self.estimate else "table"


@cache
def _table() -> dict[str, Any]:
    """The parsed price table; cached because it is immutable package data."""
    text = resources.files(_DATA_PACKAGE).joinpath(*_DATA_FILE).read_text(encoding="utf-8")
    return json.loads(text)


PRICE_TABLE_AS_OF: str = _table()["as_of"]


def _price(figure: dict[str, Any], *, estimate: bool = False, note: str = "") -> Price:
    """Turn one JSON figure into a Price; a figure flagged as an estimate stays one."""
    own_note = figure.get("note", "")
    notes = "; ".join(n for n in (note, own_note) if n)
    return Price(
        value=float(figure["value"]),
        unit=figure["unit"],
        source=figure["source"],
        as_of=figure["as_of"],
        estimate=estimate or bool(figure.get("estimate", False)),
        note=notes,
    )


def _unit(service: str, item: str) -> str:
    section = _table()[service]
    return str(section["regions"][section["reference_region"]][item]["unit"])


def _locked(lock: PriceLock, section: str, key: str, item: str, unit: str, note: str = "") -> Price | None:
    """The lock's figure as a Price citing the lock, its SKU and effective date, or None."""
    figure = lock.find(section, key, item)
    if figure is None:
        return None
    sku = f"{figure.sku}/{figure.term}" if figure.term else figure.sku
    return Price(value=figure.price, unit=unit, source=lock.source(section), as_of=figure.effective,
                 estimate=False, note=note, sku=sku, locked=True, key=f"{section}.{key}.{item}")


def _gap(lock: PriceLock | None, price: Price, place: str) -> Price:
    """`price` from the table, marked with what the lock lacked (None: no lock, no gap)."""
    if lock is None:
        return price
    lacked = f"{lock.file} has no {place}"
    note = "; ".join(n for n in (f"not in {lock.file}", price.note) if n)
    return replace(price, note=note, gap=lacked)


def _regional(service: str, region: str, item: str, what: str, lock: PriceLock | None = None,
              lock_item: str | None = None) -> Price:
    """The lock's figure, else the region's own in the table, else the reference region's
    (flagged as an estimate)."""
    key = f"{service}.{region}.{lock_item or item}"
    if lock is not None and (hit := _locked(lock, service, region, lock_item or item, _unit(service, item))):
        return hit
    section = _table()[service]
    regions: dict[str, dict[str, Any]] = section["regions"]
    own = regions.get(region, {})
    place = f"{service} {lock_item or item} for {region}"
    if item in own:
        return _gap(lock, replace(_price(own[item]), key=key), place)
    reference = section["reference_region"]
    note = f"no {what} figure for {region} in the price table; {reference} price used"
    return _gap(lock, replace(_price(regions[reference][item], estimate=True, note=note), key=key), place)


# --- Bigtable -----------------------------------------------------------------------


def bigtable_node_hour(gcp_region: str, lock: PriceLock | None = None) -> Price:
    """Price of one node for one hour; SSD and HDD clusters pay the same node price."""
    return _regional("bigtable", gcp_region, "node_hour", "Bigtable node", lock)


def bigtable_storage(gcp_region: str, storage_type: str, lock: PriceLock | None = None) -> Price:
    """Price of one GiB-month of table storage on an "ssd" or "hdd" cluster."""
    kind = storage_type.lower()
    if kind not in BIGTABLE_STORAGE_TYPES:
        raise ValueError(f"storage_type must be one of {BIGTABLE_STORAGE_TYPES}, got {storage_type!r}")
    return _regional("bigtable", gcp_region, f"{kind}_gib_month", f"Bigtable {kind.upper()} storage", lock)


def bigtable_backup_storage(gcp_region: str, lock: PriceLock | None = None) -> Price:
    """Price of one GiB-month of backup storage (PITR's counterpart in the plan)."""
    return _regional("bigtable", gcp_region, "backup_gib_month", "Bigtable backup storage", lock)


def _continent(gcp_region: str, prefixes: dict[str, str]) -> str | None:
    """Continent of a GCP region from its name prefix (longest prefix wins)."""
    for prefix in sorted(prefixes, key=len, reverse=True):
        if gcp_region.startswith(prefix):
            return prefixes[prefix]
    return None


def bigtable_replication_egress(src_gcp_region: str, dst_gcp_region: str, lock: PriceLock | None = None) -> Price:
    """Per-GiB price of replicating writes from one cluster's region to another's.

    Zero inside one region (clusters in different zones of a region replicate without a
    data transfer charge); otherwise Google's inter-region rate, which depends on the two
    regions' continents (the lock keys it `north_america->europe`).
    """
    egress = _table()["bigtable"]["replication_egress"]
    if src_gcp_region == dst_gcp_region:
        return Price(
            value=0.0,
            unit=egress["unit"],
            source=egress["source"],
            as_of=egress["as_of"],
            estimate=False,
            note="same region: replication between zones of one region is not charged",
        )
    prefixes: dict[str, str] = egress["continent_of_prefix"]
    src, dst = _continent(src_gcp_region, prefixes), _continent(dst_gcp_region, prefixes)
    pair = f"{src}->{dst}"
    route = f"{src_gcp_region} -> {dst_gcp_region}"
    if lock is not None and src and dst and (hit := _locked(lock, "network", REPLICATION, pair, egress["unit"],
                                                            note=f"{route}: {pair.replace('_', ' ')}")):
        return hit
    if src is not None and src == dst:
        within: dict[str, Any] = egress["within_continent"]
        figure = within.get(src, within["default"])
        where = f"within {src.replace('_', ' ')}"
    else:
        figure = egress["intercontinental"]
        where = "between continents" if src and dst else "continent unknown, intercontinental rate"
    note = f"{route}: {where}; {egress['note']}"
    price = replace(_price(figure, estimate=bool(egress.get("estimate", False)), note=note),
                    key=f"network.{REPLICATION}.{pair}")
    return _gap(lock, price, f"network {REPLICATION} for {pair}")


# --- DynamoDB -----------------------------------------------------------------------


def dynamodb(aws_region: str, item: str, lock: PriceLock | None = None) -> Price:
    """Price of one DynamoDB billing unit (see DYNAMODB_ITEMS) in an AWS region."""
    if item not in DYNAMODB_ITEMS:
        raise ValueError(f"item must be one of {DYNAMODB_ITEMS}, got {item!r}")
    section = _table()["dynamodb"]
    own = section["regions"].get(aws_region, {})
    base, replicated_unit = _REPLICATED_EQUALS.get(item, ("", ""))
    since = section["replicated_equals_single_region_since"]
    if lock is not None:
        unit = _unit("dynamodb", item)
        hit = _locked(lock, "dynamodb", aws_region, _LOCK_ITEM[item], unit)
        if hit is None and base:  # the lock's single-region write price, by the same rule
            hit = _locked(lock, "dynamodb", aws_region, _LOCK_ITEM[base], unit,
                          note=f"replicated writes priced as {base} in {aws_region} (AWS rule since {since})")
        if hit is not None:
            return hit
    if item not in own and base in own:
        note = f"replicated writes priced as {base} in {aws_region} (AWS rule since {since})"
        figure = own[base]
        price = Price(
            value=float(figure["value"]),
            unit=replicated_unit,
            source=figure["source"],
            as_of=figure["as_of"],
            estimate=bool(figure.get("estimate", False)),
            note=note,
            key=f"dynamodb.{aws_region}.{_LOCK_ITEM[item]}",
        )
        return _gap(lock, price, f"dynamodb {_LOCK_ITEM[item]} for {aws_region}")
    return _regional("dynamodb", aws_region, item, f"DynamoDB {item}", lock, _LOCK_ITEM[item])


def discount_figures() -> dict[str, Any]:
    """The published discount rates (committed use, reserved capacity) with their sources."""
    figures: dict[str, Any] = _table()["discounts"]
    return figures
