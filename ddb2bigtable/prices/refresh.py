"""`prices refresh`: both price APIs -> one `prices.lock.json`, written whole or not at all.

Which regions: `--regions` takes GCP regions (us-east4) and AWS regions (us-east-1); an
AWS region also brings the GCP region it lands in (spec/regions.py), so `--regions
us-east-1` prices both sides of a us-east-1 plan. Default: every region the tool maps.

Both APIs are read before anything is written, so a failing API leaves the committed lock
as it was. The file is written to a temporary file beside it, then renamed over it: a
reader sees the old lock or the new one, never half of one. Only a regular file (or
nothing) is ever replaced: a folder, a link, a FIFO or a device at `-o` is refused.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from ..plan.price_lock import REPLICATION, PriceLock, to_document
from ..spec.errors import InputError, Problem
from ..spec.output_file import write_output
from ..spec.regions import AWS_REGIONS, AWS_TO_GCP, GCP_REGIONS
from . import catalog, price_list


@dataclass(frozen=True)
class Options:
    regions: tuple[str, ...] = ()  # empty: every mapped region
    gcp_endpoint: str | None = None
    aws_endpoint: str | None = None
    aws_pricing_region: str = price_list.PRICING_REGION


@dataclass(frozen=True)
class Refreshed:
    lock: PriceLock
    gcp_regions: tuple[str, ...]
    aws_regions: tuple[str, ...]
    missing: tuple[str, ...]  # "bigtable asia-south2 node_hour": asked for, not in the APIs' answers
    skus_unused: int


def split_regions(regions: tuple[str, ...]) -> tuple[set[str], set[str]]:
    """(GCP regions, AWS regions) of `--regions`; an unknown name is bad input."""
    if not regions:
        return set(GCP_REGIONS), set(AWS_REGIONS)
    gcp, aws, unknown = set(), set(), []
    for region in regions:
        if region in AWS_TO_GCP:
            aws.add(region)
            gcp.add(AWS_TO_GCP[region].gcp_region)
        elif region in GCP_REGIONS:
            gcp.add(region)
        else:
            unknown.append(region)
    if unknown:
        raise InputError([Problem.about("--regions", "", f"{', '.join(unknown)}: not a region the tool maps; give "
                                        "AWS regions (us-east-1) or GCP regions (us-east4) from docs/regions.md")])
    return gcp, aws


def refresh(options: Options, now: Callable[[], datetime]) -> Refreshed:
    """Read both APIs for the regions asked for; nothing is written here."""
    gcp, aws = split_regions(options.regions)
    google = catalog.fetch(gcp, options.gcp_endpoint)
    amazon = price_list.fetch(aws, options.aws_endpoint, options.aws_pricing_region)
    fetched = now().strftime("%Y-%m-%dT%H:%M:%SZ")
    lock = PriceLock("prices.lock.json", fetched, "USD", google.bigtable,
                     {REPLICATION: google.replication} if google.replication else {}, amazon.dynamodb)
    missing = ([f"bigtable {r} {i}" for r in sorted(gcp) for i in ("node_hour", "ssd_gib_month", "hdd_gib_month")
                if i not in google.bigtable.get(r, {})]
               + [f"dynamodb {r} {i}" for r in sorted(aws) for i in ("rcu_hour", "wcu_hour", "storage_gib_month")
                  if i not in amazon.dynamodb.get(r, {})])
    return Refreshed(lock, tuple(sorted(gcp)), tuple(sorted(aws)), tuple(missing), google.skus_unused)


def write_lock(path: Path, lock: PriceLock) -> None:
    """The lock at `path`, atomically, over nothing but a regular file (a refresh replaces
    the old lock: that is its job); the replaced file's permission bits are kept."""
    write_output(path, json.dumps(to_document(lock), indent=2) + "\n", force=True, command="prices refresh",
                 what="the price lock")

