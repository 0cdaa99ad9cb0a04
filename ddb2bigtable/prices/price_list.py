"""DynamoDB's prices from the AWS Price List Query API (`pricing` `GetProducts`, NextToken paging).

One `GetProducts` per AWS region, filtered to the AmazonDynamoDB service and the region
(`regionCode`), paged with NextToken. Each `PriceList` entry is a JSON string holding the
product (its SKU and attributes) and its terms; the on-demand term (`terms.OnDemand`)
gives the price per unit, its offer term code and effective date. Which product is which
figure is read from the documented `usagetype` attribute, without its region prefix
(`EU-ReadCapacityUnit-Hrs` is eu-west-1's RCU-hour; us-east-1's usually has none, but its
PITR storage is `USE1-TimedPITRStorage-ByteHrs`, and it lists Standard storage twice, as
`TimedStorage-ByteHrs` with the free tier and `USE1-TimedStorage-ByteHrs` without: AWS's
DynamoDB billing guide and the live catalogue, see tests/prices/fixtures/README.md). A
Standard-IA table's capacity (`IA-ReadCapacityUnit-Hrs`) is not the Standard figure and
is skipped. The steady price is the open-ended tier's (free tiers come first).

Settings come as boto3 takes them: the credential chain, `AWS_PROFILE`, and the standard
`AWS_ENDPOINT_URL_PRICING`, plus `--aws-endpoint URL`. The Price List API answers in
us-east-1 (also eu-central-1, ap-south-1): `--aws-pricing-region`. Every call has the
connect and read timeouts and the bounded retries every AWS call of the tool has
(spec/aws_endpoints.py): a silent endpoint ends the call, it is not retried.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..plan.price_lock import LockedPrice
from ..spec.aws_endpoints import bounded_retries, client_config, redact_userinfo
from ..spec.errors import InputError, Problem, ServiceError

SERVICE_CODE = "AmazonDynamoDB"
PRICING_REGION = "us-east-1"
# usagetype without its region prefix -> (lock item, multiplier to the lock's unit)
USAGE_TYPES: dict[str, tuple[str, float]] = {
    "ReadCapacityUnit-Hrs": ("rcu_hour", 1.0),
    "WriteCapacityUnit-Hrs": ("wcu_hour", 1.0),
    "ReplWriteCapacityUnit-Hrs": ("replicated_wcu_hour", 1.0),
    "ReadRequestUnits": ("read_request_million", 1e6),
    "WriteRequestUnits": ("write_request_million", 1e6),
    "ReplWriteRequestUnits": ("replicated_write_request_million", 1e6),
    "TimedStorage-ByteHrs": ("storage_gib_month", 1.0),
    "IA-TimedStorage-ByteHrs": ("storage_ia_gib_month", 1.0),
    "TimedPITRStorage-ByteHrs": ("pitr_gib_month", 1.0),
    "TimedBackupStorage-ByteHrs": ("backup_gib_month", 1.0),
}
_REGION_PREFIX = re.compile(r"(?:[A-Z]{2,4}\d?-)?")
_CREDENTIALS = {"UnrecognizedClientException", "InvalidClientTokenId", "ExpiredTokenException", "ExpiredToken",
                "InvalidSignatureException", "SignatureDoesNotMatch", "MissingAuthenticationToken",
                "AccessDeniedException", "AccessDenied"}


@dataclass(frozen=True)
class PriceListFigures:
    dynamodb: dict[str, dict[str, LockedPrice]]
    products_read: int


def usage_item(usagetype: str) -> tuple[str, float] | None:
    """The lock item of a usage type (longest known suffix, after a region prefix at most)."""
    for suffix in sorted(USAGE_TYPES, key=len, reverse=True):
        if usagetype.endswith(suffix):
            prefix = usagetype[: -len(suffix)]
            if prefix != "IA-" and _REGION_PREFIX.fullmatch(prefix):
                return USAGE_TYPES[suffix]
            return None
    return None


def _on_demand(entry: dict[str, Any]) -> tuple[float, str, str] | None:
    """(USD per unit of the open-ended tier, offer term code, effective date) of an entry."""
    for term in entry.get("terms", {}).get("OnDemand", {}).values():
        dimensions = list(term.get("priceDimensions", {}).values())
        open_ended = [d for d in dimensions if str(d.get("endRange", "Inf")) == "Inf"] or dimensions
        if not open_ended:
            continue
        dimension = max(open_ended, key=lambda d: float(d.get("beginRange", 0) or 0))
        usd = dimension.get("pricePerUnit", {}).get("USD")
        if usd is None:
            continue
        return float(usd), str(term.get("offerTermCode", "")), str(term.get("effectiveDate", ""))[:10]
    return None


def figures(entries: Iterable[str], region: str) -> dict[str, LockedPrice]:
    """One region's lock items from its `PriceList` entries (JSON strings)."""
    out: dict[str, LockedPrice] = {}
    for text in entries:
        entry = json.loads(text)
        product = entry.get("product", {})
        attributes = product.get("attributes", {})
        if attributes.get("regionCode", region) != region:
            continue
        known = usage_item(str(attributes.get("usagetype", "")))
        priced = _on_demand(entry)
        if known is None or priced is None:
            continue
        item, factor = known
        usd, term, effective = priced
        if item not in out:
            out[item] = LockedPrice(round(usd * factor, 9), str(product.get("sku", "")), effective, term,
                                    str(attributes.get("usagetype", "")))
    return out


def _client(endpoint: str | None, pricing_region: str) -> Any:
    import boto3

    config = client_config(3, user_agent_extra="ddb2bigtable-prices")
    return bounded_retries(boto3.client("pricing", region_name=pricing_region, endpoint_url=endpoint,
                                        config=config))


def fetch(regions: Iterable[str], endpoint: str | None = None,
          pricing_region: str = PRICING_REGION) -> PriceListFigures:
    """Every region's figures; InputError without usable credentials (exit 2), ServiceError
    when the API fails or does not answer (exit 1)."""
    from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError, PartialCredentialsError

    client = _client(endpoint, pricing_region)
    where = redact_userinfo(endpoint) if endpoint else f"the {pricing_region} endpoint"
    out: dict[str, dict[str, LockedPrice]] = {}
    read = 0
    try:
        for region in sorted(regions):
            entries: list[str] = []
            token: str | None = None
            while True:
                page = client.get_products(
                    ServiceCode=SERVICE_CODE, FormatVersion="aws_v1", MaxResults=100,
                    Filters=[{"Type": "TERM_MATCH", "Field": "regionCode", "Value": region}],
                    **({"NextToken": token} if token else {}))
                entries += page.get("PriceList", [])
                token = page.get("NextToken")
                if not token:
                    break
            read += len(entries)
            if found := figures(entries, region):
                out[region] = found
    except (NoCredentialsError, PartialCredentialsError):
        raise InputError([Problem.about("prices refresh", "AWS credentials", (
            "no AWS credentials for the Price List Query API: set AWS_PROFILE or AWS_ACCESS_KEY_ID and "
            "AWS_SECRET_ACCESS_KEY (any identity allowed pricing:GetProducts)"))]) from None
    except ClientError as error:
        code = error.response.get("Error", {}).get("Code", "")
        if code in _CREDENTIALS:
            raise InputError([Problem.about("prices refresh", "AWS credentials", (
                f"the Price List Query API at {where} refused the AWS credentials ({code}): use an identity "
                "allowed pricing:GetProducts"))]) from None
        raise ServiceError(_failed(where, f"{code}: {error.response.get('Error', {}).get('Message', '')}")) from None
    except BotoCoreError as error:
        raise ServiceError(_failed(where, str(error))) from None
    return PriceListFigures(out, read)


def _failed(where: str, what: str) -> str:
    return (f"the AWS Price List Query API at {where} failed: {what[:300]}; nothing was written. Rerun "
            "`ddb2bigtable prices refresh` later, check the network (and --aws-endpoint / "
            "AWS_ENDPOINT_URL_PRICING), or keep the committed lock")
