"""`prices refresh`, and the `--prices FILE` option `plan`, `diff` and `advise` share."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import click

from ..plan.price_lock import LOCK_FILE, STALE_AFTER_DAYS, PriceLock, lock_for

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
        click.echo(f"warning: {lock.file} was fetched {lock.fetched_day} ({age} days ago, more than "
                   f"{STALE_AFTER_DAYS}): prices may have changed since; run `ddb2bigtable prices refresh` "
                   "and commit the new lock [price-lock-stale]", err=True)
