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
import os
import secrets
import stat
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from ..plan.price_lock import REPLICATION, PriceLock, to_document
from ..spec.errors import InputError, Problem
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
    """The lock at `path`, atomically; the replaced file's permission bits are kept."""
    mode = check_output(path)
    temporary = path.parent / f".{path.name[:64]}.{secrets.token_hex(8)}.tmp"
    text = json.dumps(to_document(lock), indent=2) + "\n"
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # less the umask, as any new file
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            if mode is not None:
                os.fchmod(handle.fileno(), mode)
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        check_output(path)  # still a regular file (or nothing) just before the rename
        os.replace(temporary, path)
    except OSError as error:
        raise InputError([Problem.about(str(path), "", f"cannot write the price lock: {error.strerror}; choose "
                                        "a folder you may write to with -o")]) from None
    finally:
        if os.path.lexists(temporary):
            os.unlink(temporary)


def check_output(path: Path) -> int | None:
    """The permission bits of the regular file at `path`, None when nothing is there;
    InputError for anything else there (checked before the APIs are asked, and again
    just before the rename)."""
    if not path.parent.is_dir():
        raise InputError([Problem.about(str(path), "", f"the folder {path.parent} does not exist: create it or "
                                        "choose another -o")])
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(info.st_mode):
        raise InputError([Problem.about(str(path), "", "is not a regular file (a folder, link, FIFO or device); "
                                        "prices refresh replaces only a regular file: choose another -o")])
    return info.st_mode & 0o777
