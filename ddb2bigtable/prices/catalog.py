"""Bigtable's prices from the Cloud Billing Catalog API (`services.skus.list`, paged).

The client is Google's own (`google-cloud-billing`) on its REST transport, so
`--gcp-endpoint http://127.0.0.1:PORT` reaches a plain HTTP server (the tests' fake) as
easily as cloudbilling.googleapis.com. Credentials: an API key from
DDB2BIGTABLE_GCP_API_KEY when set (the Catalog API is public data: a key is enough), else
application-default credentials. Every page request has a timeout.

Which SKU is which figure is decided from what the API documents, not from a list of SKU
ids (they differ per region and change): the usage type must be OnDemand (commitment SKUs
are discounts, see the stage's `discounts:`), the pricing unit says the kind (`h` node
hours, `GiBy.mo` storage, `GiBy` traffic) and the description names the thing (node,
SSD, HDD, backup, replication). The price is the first paid tier's: tiers may start with
a free allowance, and network SKUs get cheaper with the volume of the whole billing
account in a month (`aggregationInfo` ACCOUNT, MONTHLY), a place on that ladder one plan
cannot know, so the list rate before volume discounts is locked. A SKU matching nothing
is counted, never guessed at.

What Google's real SKU names look like (tests/prices/fixtures/README.md has the sources):
they name the region by its id, not by a city ("Backup storage in asia-northeast1 region",
614D-1275-EAAC), some carry no region at all ("Backup storage", E82F-4427-05A9), and some
do not say "Bigtable". Since January 2026 each region also has an Enterprise Plus node
SKU ("Enterprise Plus Server Node in asia-northeast1 region", 856E-4E73-8015): the plan
prices the Enterprise edition (Bigtable's default, the one every instance had before
editions), so Enterprise Plus SKUs are never taken for its figures. When several SKUs
fit one region's item, the one priced for the fewest regions wins (a regional SKU over a
SKU that covers many regions), then the first listed. Replication routes are read from
"from <continent> to <continent>", "within <continent>" and "between <continent> and
<continent>" (Google's form for Spanner's replication SKUs, both directions).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..plan.price_lock import REPLICATION, LockedPrice
from ..spec.aws_endpoints import redact_userinfo
from ..spec.errors import InputError, Problem, ServiceError

BIGTABLE_SERVICE = "services/C3BE-24A5-0975"  # Cloud Bigtable in the Cloud Billing catalog
DEFAULT_ENDPOINT = "https://cloudbilling.googleapis.com"
API_KEY_VARIABLE = "DDB2BIGTABLE_GCP_API_KEY"
TIMEOUT_SECONDS = 30.0
PAGE_SIZE = 5000  # the API's maximum: Bigtable's few hundred SKUs in one or two pages

# How Google's SKU descriptions name continents -> the keys the shipped table and the lock use.
_CONTINENTS = (("northern america", "north_america"), ("north america", "north_america"),
               ("americas", "north_america"), ("south america", "south_america"),
               ("latin america", "south_america"), ("europe", "europe"), ("emea", "europe"),
               ("asia pacific", "asia"), ("apac", "asia"), ("asia", "asia"), ("oceania", "oceania"),
               ("australia", "oceania"), ("middle east", "middle_east"), ("africa", "africa"))
_FROM_TO = re.compile(r"from (?P<src>[a-z ]+?) to (?P<dst>[a-z ]+?)(?:\s*\(|$|,)")
_EITHER_WAY = re.compile(r"between (?P<src>[a-z ]+?) and (?P<dst>[a-z ]+?)(?:\s*\(|$|,)")
_WITHIN = re.compile(r"(?:within|in) (?P<where>[a-z ]+?)(?:\s*\(|$|,)")
# Words of SKUs whose unit and words otherwise fit but that are not what the plan prices:
# another edition's nodes, and Data Boost's serverless compute (billed per use, not per node).
_NOT_PLANNED = ("enterprise plus", "data boost")


@dataclass(frozen=True)
class CatalogFigures:
    """What the catalog gave: per GCP region and item, and per continent pair."""

    bigtable: dict[str, dict[str, LockedPrice]]
    replication: dict[str, LockedPrice]
    skus_read: int
    skus_unused: int


def _continent(text: str) -> str | None:
    return next((key for words, key in _CONTINENTS if words in text), None)


def replication_pairs(description: str) -> tuple[str, ...]:
    """`("north_america->europe",)` from "... from Northern America to Europe", both
    directions from "Replication between Asia and Europe", `("europe->europe",)` from
    "... within Europe"; empty when the description names no route of known continents."""
    text = description.lower()
    if (m := _FROM_TO.search(text)) and (src := _continent(m["src"])) and (dst := _continent(m["dst"])):
        return (f"{src}->{dst}",)
    if (m := _EITHER_WAY.search(text)) and (src := _continent(m["src"])) and (dst := _continent(m["dst"])):
        return tuple(dict.fromkeys((f"{src}->{dst}", f"{dst}->{src}")))
    if (m := _WITHIN.search(text)) and (where := _continent(m["where"])):
        return (f"{where}->{where}",)
    return ()


def _item(description: str, unit: str) -> str | None:
    """The lock item a SKU prices, from its pricing unit and description."""
    text = description.lower()
    if any(words in text for words in _NOT_PLANNED):
        return None
    if unit == "h" and "node" in text:
        return "node_hour"
    if unit == "GiBy.mo":
        for word, item in (("backup", "backup_gib_month"), ("ssd", "ssd_gib_month"), ("hdd", "hdd_gib_month")):
            if word in text:
                return item
    if unit == "GiBy" and "replication" in text:
        return REPLICATION
    return None


def _price(sku: Any) -> tuple[float, str, str] | None:
    """(USD per unit of the first paid tier, pricing unit, effective date) of a SKU's current
    price; a SKU free at every tier is 0."""
    if not sku.pricing_info:
        return None
    info = sku.pricing_info[-1]
    rates = sorted(info.pricing_expression.tiered_rates, key=lambda r: r.start_usage_amount)
    paid = [r for r in rates if r.unit_price.units or r.unit_price.nanos] or rates
    if not paid or (paid[0].unit_price.currency_code or "USD") != "USD":
        return None
    money = paid[0].unit_price
    effective = info.effective_time.strftime("%Y-%m-%d") if info.effective_time else ""
    return money.units + money.nanos / 1e9, info.pricing_expression.usage_unit, effective


def figures(skus: Iterable[Any], regions: set[str]) -> CatalogFigures:
    """The lock's Bigtable and replication figures for `regions` from the catalog's SKUs.
    Several SKUs fitting one figure: the one priced for the fewest regions, then the first
    listed (the API lists SKUs in a stable order)."""
    chosen: dict[tuple[str, str], tuple[int, LockedPrice]] = {}
    replication: dict[str, LockedPrice] = {}
    read = 0
    for sku in skus:
        read += 1
        priced = _price(sku)
        if sku.category.usage_type != "OnDemand" or priced is None:
            continue
        value, unit, effective = priced
        item = _item(sku.description, unit)
        figure = LockedPrice(round(value, 9), sku.sku_id, effective, description=sku.description)
        if item == REPLICATION:
            for pair in replication_pairs(sku.description):
                replication.setdefault(pair, figure)
        elif item is not None:
            breadth = len(sku.service_regions)
            for region in set(sku.service_regions) & regions:
                known = chosen.get((region, item))
                if known is None or breadth < known[0]:
                    chosen[(region, item)] = (breadth, figure)
    bigtable: dict[str, dict[str, LockedPrice]] = {}
    for (region, item), (_, figure) in sorted(chosen.items()):
        bigtable.setdefault(region, {})[item] = figure
    used = {f.sku for f in replication.values()} | {f.sku for _, f in chosen.values()}
    return CatalogFigures(bigtable, replication, read, read - len(used))


def _client(endpoint: str | None) -> Any:
    """The Catalog client on REST, with an API key or application-default credentials."""
    import google.auth
    from google.api_core.client_options import ClientOptions
    from google.auth.exceptions import DefaultCredentialsError
    from google.cloud import billing_v1

    key = os.environ.get(API_KEY_VARIABLE)
    options = ClientOptions(api_endpoint=endpoint or DEFAULT_ENDPOINT, api_key=key or None)
    if not key:
        try:
            google.auth.default()
        except DefaultCredentialsError:
            raise InputError([Problem.about("prices refresh", "Google credentials", (
                "no Google Cloud credentials for the Cloud Billing Catalog API: run `gcloud auth "
                f"application-default login`, set GOOGLE_APPLICATION_CREDENTIALS, or set {API_KEY_VARIABLE} to an "
                "API key of a project with the Cloud Billing API enabled"))]) from None
    return billing_v1.CloudCatalogClient(transport="rest", client_options=options)


def fetch(regions: set[str], endpoint: str | None = None) -> CatalogFigures:
    """Every Bigtable SKU, paged, turned into figures; InputError for credentials the API
    refuses (exit 2), ServiceError for an API that fails or does not answer (exit 1)."""
    from google.api_core import exceptions
    from google.api_core.retry import Retry
    from google.auth.exceptions import GoogleAuthError
    from requests.exceptions import RequestException

    where = redact_userinfo(endpoint) if endpoint else DEFAULT_ENDPOINT
    client = _client(endpoint)
    retry = Retry(initial=1.0, maximum=8.0, multiplier=2.0, timeout=TIMEOUT_SECONDS * 2,
                  predicate=lambda e: isinstance(e, exceptions.ServiceUnavailable | exceptions.TooManyRequests))
    try:
        pager = client.list_skus(request={"parent": BIGTABLE_SERVICE, "page_size": PAGE_SIZE},
                                 timeout=TIMEOUT_SECONDS, retry=retry)
        return figures(pager, regions)
    except (exceptions.Unauthenticated, exceptions.Unauthorized, exceptions.PermissionDenied, exceptions.Forbidden
            ) as error:
        raise InputError([Problem.about("prices refresh", "Google credentials", (
            f"the Cloud Billing Catalog API at {where} refused the credentials ({error.code}: {error.message}): "
            f"check {API_KEY_VARIABLE} or the application-default account, and that the Cloud Billing API is "
            "enabled for its project"))]) from None
    except (exceptions.GoogleAPIError, GoogleAuthError, RequestException) as error:
        raise ServiceError(f"the Cloud Billing Catalog API at {where} failed: {_short(error)}; nothing was written. "
                           "Rerun `ddb2bigtable prices refresh` later, check the network (and --gcp-endpoint), or "
                           "keep the committed lock") from None


def _short(error: Exception) -> str:
    text = str(error).splitlines()[0] if str(error) else type(error).__name__
    return text[:300]
