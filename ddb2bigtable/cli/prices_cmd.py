"""`prices refresh`, and the `--prices FILE` option `plan`, `diff` and `advise` share."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import click

from ..plan.price_lock import LOCK_FILE, STALE_AFTER_DAYS, PriceLock, lock_for
from ..spec.aws_endpoints import check_endpoint_url
from ..spec.errors import InputError, Problem
from .output import echo_warning

F = TypeVar("F", bound=Callable[..., Any])


def prices_option(command: F) -> F:
    """`--prices FILE`: the price lock to price with (default: prices.lock.json at --root)."""
    return click.option(
        "--prices", "prices", type=click.Path(dir_okay=False, path_type=Path), default=None,
        help=f"Price lock to price with (default: {LOCK_FILE} at the project root when it exists, "
             "else the shipped price table).")(command)


def read_prices(root: Path, given: Path | None) -> PriceLock | None:
    """The lock a command prices with, warning on stderr when it is older than 90 days:
    an old lock prices plans with figures that may no longer be what the providers bill."""
    lock = lock_for(root, given)
    if lock is not None:
        warn_if_stale(lock)
    return lock


def warn_if_stale(lock: PriceLock) -> None:
    age = lock.age_days(datetime.now(UTC).date())
    if age > STALE_AFTER_DAYS:
        echo_warning(f"warning: {lock.file} was fetched {lock.fetched_day} ({age} days ago, more than "
                     f"{STALE_AFTER_DAYS}): prices may have changed since; run `ddb2bigtable prices refresh` "
                     "and commit the new lock [price-lock-stale]")


@click.group(name="prices")
def prices() -> None:
    """The price lock: exact unit prices from Google's and AWS's price APIs."""


@prices.command(name="refresh")
@click.option("--regions", default=None,
              help="Comma-separated AWS regions (us-east-1, bringing the GCP region each lands in) and GCP regions "
                   "(us-east4). Default: every region the tool maps.")
@click.option("-o", "--output", "output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help=f"Where to write the lock (default: {LOCK_FILE} at --root).")
@click.option("--gcp-endpoint", default=None, help="Cloud Billing Catalog API endpoint (default: Google's).")
@click.option("--aws-endpoint", default=None,
              help="Price List Query API endpoint (default: AWS_ENDPOINT_URL_PRICING, else AWS's).")
@click.option("--aws-pricing-region", default="us-east-1", show_default=True,
              help="Region of the Price List Query API endpoint (us-east-1, eu-central-1 or ap-south-1).")
@click.option("--root", type=click.Path(file_okay=False, path_type=Path), default=Path("."), show_default=True,
              help="Project root, where prices.lock.json is written unless -o says otherwise.")
def refresh(regions: str | None, output: Path | None, gcp_endpoint: str | None, aws_endpoint: str | None,
            aws_pricing_region: str, root: Path) -> None:
    """Fetch Bigtable and DynamoDB prices and write the price lock (commit it beside the specs)."""
    from ..prices.refresh import Options, write_lock
    from ..prices.refresh import refresh as fetch
    from ..spec.output_file import check_output

    wanted = tuple(r.strip() for r in (regions or "").split(",") if r.strip())
    aws_endpoint = check_endpoint_url(aws_endpoint, "prices refresh", "--aws-endpoint")
    if gcp_endpoint is not None and not gcp_endpoint.startswith(("http://", "https://")):
        raise InputError([Problem.about("prices refresh", "--gcp-endpoint", (
            f"{gcp_endpoint[:200]!r} is not an endpoint URL: give http(s)://HOST[:PORT], or leave the option out "
            "for https://cloudbilling.googleapis.com"))])
    path = output or root / LOCK_FILE
    check_output(path, force=True, command="prices refresh")
    done = fetch(Options(wanted, gcp_endpoint, aws_endpoint, aws_pricing_region), lambda: datetime.now(UTC))
    write_lock(path, done.lock)
    for gap in done.missing:
        echo_warning(f"warning: {gap}: not in the price APIs' answers; plans price it from the shipped table or "
                     "an estimate [price-not-fetched]")
    figures = sum(len(items) for section in (done.lock.bigtable, done.lock.network, done.lock.dynamodb)
                  for items in section.values())
    click.echo(f"wrote {path}: {figures} prices for {len(done.gcp_regions)} GCP and {len(done.aws_regions)} AWS "
               f"region(s), fetched {done.lock.fetched} ({done.skus_unused} Bigtable SKUs not used); "
               "commit it so plans and diffs price from it")
