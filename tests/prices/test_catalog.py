"""Which Cloud Billing Catalog SKU is which lock figure, on SKU names as Google writes them."""

from __future__ import annotations

import json

from google.cloud import billing_v1

from ddb2bigtable.prices.catalog import figures, replication_pairs

from .fakes import SKUS


def test_replication_routes_in_each_form_google_writes_them():
    assert replication_pairs("Inter-region replication from Northern America to Asia Pacific") == (
        "north_america->asia",)
    assert replication_pairs("Replication between Asia and Europe") == ("asia->europe", "europe->asia")
    assert replication_pairs("Inter-region replication within Europe") == ("europe->europe",)
    assert replication_pairs("Replication between Africa and Indonesia") == ()  # no continent for Indonesia


def test_enterprise_plus_nodes_and_region_less_skus_are_not_the_regions_figures():
    skus = [billing_v1.Sku.from_json(json.dumps(s), ignore_unknown_fields=True) for s in SKUS]
    found = figures(skus, {"asia-northeast1", "us-central1"})
    tokyo = found.bigtable["asia-northeast1"]
    assert tokyo["node_hour"].description == "Server Node in asia-northeast1 region"
    assert tokyo["backup_gib_month"].sku == "614D-1275-EAAC"
    # a region with nothing but the SKU priced for many regions still gets that SKU's figure
    assert found.bigtable["us-central1"] == {"backup_gib_month": found.bigtable["us-central1"]["backup_gib_month"]}
    assert found.bigtable["us-central1"]["backup_gib_month"].sku == "E82F-4427-05A9"
    assert found.skus_read == len(SKUS)


def test_a_free_allowance_is_skipped_and_volume_tiers_do_not_lower_the_price():
    def storage(tiers: list[tuple[int, int]]) -> billing_v1.Sku:
        rates = [{"startUsageAmount": start, "unitPrice": {"currencyCode": "USD", "nanos": nanos}}
                 for start, nanos in tiers]
        return billing_v1.Sku.from_json(json.dumps({
            "skuId": "TEST-0000-0001", "description": "SSD storage in us-east4 region",
            "category": {"usageType": "OnDemand"}, "serviceRegions": ["us-east4"],
            "pricingInfo": [{"pricingExpression": {"usageUnit": "GiBy.mo", "tieredRates": rates}}]}))
    free_first = figures([storage([(0, 0), (10, 187_000_000)])], {"us-east4"})
    volume = figures([storage([(1024, 150_000_000), (0, 187_000_000)])], {"us-east4"})
    assert free_first.bigtable["us-east4"]["ssd_gib_month"].price == 0.187
    assert volume.bigtable["us-east4"]["ssd_gib_month"].price == 0.187
