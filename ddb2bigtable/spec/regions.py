"""Where each DynamoDB region's traffic lands on Bigtable: AWS region -> GCP region -> zones.

Why a table and not a distance formula: the choice is a judgement (same metro first, then
data residency, then distance) that a reviewer must be able to read and argue with, so
every row carries its own `source` sentence, including how sure we are that Bigtable
runs in those zones.

Rules, in order:
1. Same metro where Google has a Bigtable region there (us-east-1 Ashburn -> us-east4).
2. Otherwise stay in the same country / legal area when Google has a region there
   (ca-west-1 Calgary -> Toronto, not Oregon; eu-west-1 Ireland -> Belgium, inside the EU).
3. Otherwise the nearest GCP region where Bigtable runs.
Several AWS regions may share one GCP region (ap-south-2 and ap-south-1 -> asia-south1);
the planner splits their reads over that region's clusters.

Zones: only zones where Bigtable runs, preferred zone first. Zone letters differ per
region: us-east1 and europe-west1 have no `-a` zone (europe-west1-b/c/d).

Sources (read 2026-11-21 through the project's search tool, which serves stored copies):
- Bigtable locations, https://cloud.google.com/bigtable/docs/locations: the stored copy
  shows the Africa and Asia tables (africa-south1, asia-east1/2, asia-northeast1/2/3,
  asia-south1/2, asia-southeast1, each with zones -a/-b/-c); the rest of the page was cut
  off in every copy we could read.
- Bigtable pricing, https://cloud.google.com/bigtable/pricing (zh-TW copy): its region
  selector lists where Bigtable is sold: africa-south1, asia-east1/2, asia-northeast1/2/3,
  asia-south1/2, asia-southeast1/2/3 (Bangkok), australia-southeast1/2, europe-central2,
  europe-north1, europe-north2 (Stockholm), europe-southwest1, europe-west1/2/3/4/6/8/9/10/12,
  then the copy is cut off before the Middle East and the Americas.
- Bigtable SKU group "Cloud Bigtable Backups",
  https://cloud.google.com/skus/sku-groups/cloud-bigtable-backups: "Backup storage in
  asia-southeast3 region" added 2025-05-20.
- GCP zone letters where the Bigtable pages were cut off: Compute Engine regions and zones,
  https://cloud.google.com/compute/docs/regions-zones (europe-north2-a/b/c launched
  2025-03-04 per the Compute Engine release notes).
- AWS Regions, https://docs.aws.amazon.com/global-infrastructure/latest/regions/aws-regions.html

Only the commercial AWS partition is mapped; GovCloud (us-gov-*), China (cn-*) and the AWS
European Sovereign Cloud are separate partitions a DynamoDB global table cannot span.
"""

from __future__ import annotations

from dataclasses import dataclass

READ_ON = "2026-11-21"
BIGTABLE_LOCATIONS = "https://cloud.google.com/bigtable/docs/locations"
BIGTABLE_PRICING = "https://cloud.google.com/bigtable/pricing"
GCP_ZONES = "https://cloud.google.com/compute/docs/regions-zones"


@dataclass(frozen=True)
class RegionMapping:
    """One AWS region's Bigtable home; frozen so plans can embed it safely."""

    aws_region: str
    gcp_region: str
    zones: tuple[str, ...]  # Bigtable zones in that GCP region, preferred first
    metro: str
    source: str


# How sure we are that Bigtable runs in each GCP region we map to, and where the zone
# letters come from. Kept apart from the pairings so a reviewer can re-check one list.
_LOCATIONS_PAGE = f"Bigtable zones confirmed on {BIGTABLE_LOCATIONS} (read {READ_ON})."
_PRICING_LIST = (
    f"Region confirmed on the Bigtable pricing region list ({BIGTABLE_PRICING}, read {READ_ON}); "
    f"zone letters from {GCP_ZONES} because the stored locations page was cut off before it."
)
_NOT_CONFIRMED = (
    f"Bigtable availability here could not be confirmed from the stored copies of "
    f"{BIGTABLE_LOCATIONS} (cut off before this region, read {READ_ON}); zones are the "
    f"region's GCP zones from {GCP_ZONES}, long-standing Bigtable region."
)
_NOT_CONFIRMED_NEW = (
    f"UNCONFIRMED: Bigtable availability here could not be checked ({BIGTABLE_LOCATIONS} "
    f"stored copies cut off, read {READ_ON}); zones are the region's GCP zones from {GCP_ZONES}. "
    "Check the locations page before deploying."
)

_ZONES: dict[str, tuple[str, str]] = {
    # gcp_region: (zone letters, preferred first; evidence)
    "africa-south1": ("abc", _LOCATIONS_PAGE),
    "asia-east1": ("abc", _LOCATIONS_PAGE),
    "asia-east2": ("abc", _LOCATIONS_PAGE),
    "asia-northeast1": ("abc", _LOCATIONS_PAGE),
    "asia-northeast2": ("abc", _LOCATIONS_PAGE),
    "asia-northeast3": ("abc", _LOCATIONS_PAGE),
    "asia-south1": ("abc", _LOCATIONS_PAGE),
    "asia-southeast1": ("abc", _LOCATIONS_PAGE),
    "asia-southeast2": ("abc", _PRICING_LIST),
    "asia-southeast3": ("abc", _PRICING_LIST + " Bangkok region: zone letters not verified."),
    "australia-southeast1": ("abc", _PRICING_LIST),
    "australia-southeast2": ("abc", _PRICING_LIST),
    "europe-north2": ("abc", _PRICING_LIST),
    "europe-southwest1": ("abc", _PRICING_LIST),
    "europe-west1": ("bcd", _PRICING_LIST + " europe-west1 has no -a zone."),
    "europe-west2": ("abc", _PRICING_LIST),
    "europe-west3": ("abc", _PRICING_LIST),
    "europe-west6": ("abc", _PRICING_LIST),
    "europe-west8": ("abc", _PRICING_LIST),
    "europe-west9": ("abc", _PRICING_LIST),
    "me-central1": ("abc", _NOT_CONFIRMED_NEW),
    "me-west1": ("abc", _NOT_CONFIRMED_NEW),
    "northamerica-northeast1": ("abc", _NOT_CONFIRMED),
    "northamerica-northeast2": ("abc", _NOT_CONFIRMED),
    "northamerica-south1": ("abc", _NOT_CONFIRMED_NEW + " Fallback if absent: us-south1 (Dallas)."),
    "southamerica-east1": ("abc", _NOT_CONFIRMED),
    "us-east4": ("abc", _NOT_CONFIRMED),
    "us-east5": ("abc", _NOT_CONFIRMED_NEW),
    "us-west1": ("abc", _NOT_CONFIRMED),
    "us-west2": ("abc", _NOT_CONFIRMED),
}


def _row(aws: str, gcp: str, metro: str, why: str) -> RegionMapping:
    """Build a row whose zone names are derived from the region, so they cannot disagree."""
    letters, evidence = _ZONES[gcp]
    return RegionMapping(
        aws_region=aws,
        gcp_region=gcp,
        zones=tuple(f"{gcp}-{letter}" for letter in letters),
        metro=metro,
        source=f"{why} {evidence}",
    )


_ROWS: tuple[RegionMapping, ...] = (
    # --- North America ---------------------------------------------------------------
    _row("us-east-1", "us-east4", "Northern Virginia (Ashburn)",
         "Same metro: AWS N. Virginia and GCP us-east4 are both in Ashburn, VA (DESIGN.md)."),
    _row("us-east-2", "us-east5", "Ohio (Columbus)",
         "Same metro: AWS Ohio (Columbus area) and GCP us-east5 Columbus, OH."),
    _row("us-west-1", "us-west2", "Northern California -> Los Angeles",
         "Nearest: GCP has no Bay Area region; us-west2 Los Angeles (~550 km) is nearer than "
         "us-west1 Oregon (~900 km) and stays in California."),
    _row("us-west-2", "us-west1", "Oregon",
         "Same metro area: AWS Oregon (Boardman) and GCP us-west1 (The Dalles, OR) (DESIGN.md)."),
    _row("ca-central-1", "northamerica-northeast1", "Montreal",
         "Same metro: AWS Canada Central and GCP northamerica-northeast1 are both in Montreal."),
    _row("ca-west-1", "northamerica-northeast2", "Calgary -> Toronto",
         "Same country: GCP has no western-Canada region; Toronto keeps the data in Canada (the "
         "usual reason for ca-west-1) and stays distinct from ca-central-1's Montreal. us-west1 "
         "Oregon is nearer (~1,000 km) but outside Canada."),
    _row("mx-central-1", "northamerica-south1", "Queretaro",
         "Same metro: AWS Mexico (Central) and GCP northamerica-south1 are both in Queretaro."),
    # --- South America ---------------------------------------------------------------
    _row("sa-east-1", "southamerica-east1", "Sao Paulo",
         "Same metro: AWS and GCP both in Sao Paulo."),
    # --- Europe ----------------------------------------------------------------------
    _row("eu-west-1", "europe-west1", "Ireland -> Belgium",
         "Nearest inside the EU: GCP has no Irish region. europe-west2 London is nearer "
         "(~460 km vs ~900 km) but outside the EU since 2020 and would merge eu-west-1 with "
         "eu-west-2; europe-west1 (St. Ghislain) keeps EU residency and a separate failure domain."),
    _row("eu-west-2", "europe-west2", "London",
         "Same metro: AWS and GCP both in London (DESIGN.md)."),
    _row("eu-west-3", "europe-west9", "Paris",
         "Same metro: AWS and GCP both in Paris."),
    _row("eu-central-1", "europe-west3", "Frankfurt",
         "Same metro: AWS and GCP both in Frankfurt (DESIGN.md)."),
    _row("eu-central-2", "europe-west6", "Zurich",
         "Same metro: AWS and GCP both in Zurich."),
    _row("eu-north-1", "europe-north2", "Stockholm",
         "Same metro: AWS and GCP europe-north2 both in Stockholm; Bigtable is sold there "
         "(pricing region list), so europe-north1 (Hamina, Finland) is not needed."),
    _row("eu-south-1", "europe-west8", "Milan",
         "Same metro: AWS and GCP both in Milan."),
    _row("eu-south-2", "europe-southwest1", "Aragon -> Madrid",
         "Same country: AWS Spain (Aragon) -> GCP Madrid (~270 km), the only Spanish region."),
    # --- Middle East -----------------------------------------------------------------
    _row("il-central-1", "me-west1", "Tel Aviv",
         "Same metro: AWS Israel and GCP me-west1 both in Tel Aviv."),
    _row("me-central-1", "me-central1", "UAE -> Doha",
         "Nearest: GCP has no UAE region; me-central1 Doha (~350 km from Abu Dhabi)."),
    _row("me-south-1", "me-central1", "Bahrain -> Doha",
         "Nearest outside Saudi Arabia: Doha is ~140 km from Manama. me-central2 (Dammam) is "
         "nearer but a Saudi sovereign region with its own terms; not chosen by default."),
    # --- Africa ----------------------------------------------------------------------
    _row("af-south-1", "africa-south1", "Cape Town -> Johannesburg",
         "Same country: GCP's only African region, Johannesburg (~1,260 km)."),
    # --- Asia Pacific ----------------------------------------------------------------
    _row("ap-south-1", "asia-south1", "Mumbai",
         "Same metro: AWS and GCP both in Mumbai."),
    _row("ap-south-2", "asia-south1", "Hyderabad -> Mumbai",
         "Nearest: GCP has no Hyderabad region; Mumbai (~620 km) is nearer than Delhi "
         "asia-south2 (~1,250 km)."),
    _row("ap-southeast-1", "asia-southeast1", "Singapore",
         "Same metro: AWS and GCP both in Singapore."),
    _row("ap-southeast-2", "australia-southeast1", "Sydney",
         "Same metro: AWS and GCP both in Sydney."),
    _row("ap-southeast-3", "asia-southeast2", "Jakarta",
         "Same metro: AWS and GCP both in Jakarta."),
    _row("ap-southeast-4", "australia-southeast2", "Melbourne",
         "Same metro: AWS and GCP both in Melbourne."),
    _row("ap-southeast-5", "asia-southeast1", "Malaysia -> Singapore",
         "Nearest: no GCP Bigtable region in Malaysia; Singapore is ~320 km from Kuala Lumpur."),
    _row("ap-southeast-6", "australia-southeast1", "Auckland -> Sydney",
         "Nearest: no GCP region in New Zealand; Sydney (~2,150 km)."),
    _row("ap-southeast-7", "asia-southeast3", "Bangkok",
         "Same metro: AWS Thailand and GCP asia-southeast3 both in Bangkok; Bigtable sold there "
         "(backup SKU for asia-southeast3 added 2025-05-20)."),
    _row("ap-east-1", "asia-east2", "Hong Kong",
         "Same metro: AWS and GCP both in Hong Kong."),
    _row("ap-east-2", "asia-east1", "Taipei -> Changhua",
         "Same country: AWS Taipei -> GCP asia-east1 (Changhua County, Taiwan, ~150 km)."),
    _row("ap-northeast-1", "asia-northeast1", "Tokyo",
         "Same metro: AWS and GCP both in Tokyo (DESIGN.md)."),
    _row("ap-northeast-2", "asia-northeast3", "Seoul",
         "Same metro: AWS and GCP both in Seoul."),
    _row("ap-northeast-3", "asia-northeast2", "Osaka",
         "Same metro: AWS and GCP both in Osaka."),
)

AWS_TO_GCP: dict[str, RegionMapping] = {row.aws_region: row for row in _ROWS}

# The loader validates `source.region` and replica regions against this tuple.
AWS_REGIONS: tuple[str, ...] = tuple(sorted(AWS_TO_GCP))

# Every GCP region a plan can place a cluster in; pricing must answer for each of them.
GCP_REGIONS: tuple[str, ...] = tuple(sorted({row.gcp_region for row in _ROWS}))


def gcp_for(aws_region: str) -> RegionMapping:
    """The Bigtable home of an AWS region; KeyError for unknown ones (the loader checks first)."""
    return AWS_TO_GCP[aws_region]
