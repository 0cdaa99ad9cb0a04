"""The AWS -> GCP region table: real Bigtable zones, the design's pairings, a source per row."""

from __future__ import annotations

import re
from dataclasses import FrozenInstanceError

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ddb2bigtable.spec.regions import AWS_REGIONS, AWS_TO_GCP, GCP_REGIONS, RegionMapping, gcp_for

# Commercial AWS regions the brief lists; the table must cover at least these.
COMMERCIAL = {
    "us-east-1", "us-east-2", "us-west-1", "us-west-2", "ca-central-1", "ca-west-1",
    "sa-east-1", "mx-central-1", "eu-west-1", "eu-west-2", "eu-west-3", "eu-central-1",
    "eu-central-2", "eu-north-1", "eu-south-1", "eu-south-2", "me-south-1", "me-central-1",
    "il-central-1", "af-south-1", "ap-south-1", "ap-south-2", "ap-southeast-1",
    "ap-southeast-2", "ap-southeast-3", "ap-southeast-4", "ap-southeast-5", "ap-southeast-7",
    "ap-east-1", "ap-east-2", "ap-northeast-1", "ap-northeast-2", "ap-northeast-3",
}

ROWS = list(AWS_TO_GCP.values())


def test_covers_every_commercial_region() -> None:
    assert COMMERCIAL <= set(AWS_REGIONS)
    assert not any(r.startswith(("us-gov-", "cn-")) for r in AWS_REGIONS)


def test_aws_regions_is_the_sorted_keys() -> None:
    assert AWS_REGIONS == tuple(sorted(AWS_TO_GCP))
    assert len(set(AWS_REGIONS)) == len(AWS_REGIONS)


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.aws_region)
def test_row_is_consistent(row: RegionMapping) -> None:
    assert AWS_TO_GCP[row.aws_region] is row
    assert row.zones, "every mapping needs at least one Bigtable zone"
    assert len(set(row.zones)) == len(row.zones)
    for zone in row.zones:
        assert zone.startswith(row.gcp_region + "-")
        assert re.fullmatch(re.escape(row.gcp_region) + r"-[a-z]", zone), zone
    assert row.metro


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.aws_region)
def test_row_says_why_and_where_from(row: RegionMapping) -> None:
    assert "https://" in row.source
    assert re.search(r"\d{4}-\d{2}-\d{2}", row.source), "source must carry the date it was read"


def test_no_zone_letters_that_do_not_exist() -> None:
    every_zone = {z for row in ROWS for z in row.zones}
    assert "us-east1-a" not in every_zone
    assert "europe-west1-a" not in every_zone
    assert gcp_for("eu-west-1").zones == ("europe-west1-b", "europe-west1-c", "europe-west1-d")


@pytest.mark.parametrize(
    ("aws", "gcp"),
    [
        ("us-east-1", "us-east4"),
        ("us-west-2", "us-west1"),
        ("eu-west-2", "europe-west2"),
        ("eu-central-1", "europe-west3"),
        ("ap-northeast-1", "asia-northeast1"),
    ],
)
def test_design_pairings(aws: str, gcp: str) -> None:
    assert gcp_for(aws).gcp_region == gcp


@pytest.mark.parametrize(
    ("aws", "gcp"),
    [
        ("us-east-2", "us-east5"),
        ("ca-central-1", "northamerica-northeast1"),
        ("eu-west-3", "europe-west9"),
        ("eu-south-1", "europe-west8"),
        ("ap-southeast-1", "asia-southeast1"),
        ("ap-southeast-2", "australia-southeast1"),
        ("ap-south-1", "asia-south1"),
        ("sa-east-1", "southamerica-east1"),
    ],
)
def test_same_metro_pairings(aws: str, gcp: str) -> None:
    assert gcp_for(aws).gcp_region == gcp


def test_gcp_regions_lists_every_target() -> None:
    assert set(GCP_REGIONS) == {row.gcp_region for row in ROWS}


def test_mapping_is_frozen() -> None:
    with pytest.raises(FrozenInstanceError):
        gcp_for("us-east-1").gcp_region = "us-central1"  # type: ignore[misc]


@given(st.text(min_size=0, max_size=20).filter(lambda s: s not in AWS_TO_GCP))
def test_unknown_region_is_a_key_error(name: str) -> None:
    with pytest.raises(KeyError):
        gcp_for(name)
