"""Where an instance's clusters go: one per GCP region that a kept DynamoDB replica maps to.

Replication in Bigtable is instance-wide, so the cluster set is the union of every
table's kept regions; a table that lives in one AWS region still gets copies in every
cluster (the planner warns about that).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..spec.errors import InputError, Problem
from ..spec.model import Source, Spec
from ..spec.regions import gcp_for
from ..spec.stage import Stage

MAX_CLUSTERS = 8  # Bigtable: at most 8 clusters per instance (quotas page, read 2026-11-21)


@dataclass(frozen=True)
class Placement:
    gcp_region: str
    zone: str
    aws_regions: tuple[str, ...]


def kept_regions(source: Source, stage: Stage) -> tuple[str, ...]:
    """The table's AWS regions this stage keeps (`all`, `home`, or a list)."""
    if stage.regions == "all":
        return source.regions
    if stage.regions == "home":
        return (source.region,)
    return tuple(r for r in source.regions if r in stage.regions)


def placements(spec: Spec, stage: Stage) -> list[Placement]:
    by_gcp: dict[str, list[str]] = {}
    for table in spec.tables:
        for aws_region in kept_regions(table.source, stage):
            served = by_gcp.setdefault(gcp_for(aws_region).gcp_region, [])
            if aws_region not in served:
                served.append(aws_region)
    where = spec.instance.location
    if not by_gcp:
        raise InputError([Problem.at(stage.location, stage.file, "regions",
                                     f"stage keeps none of the AWS regions of {spec.path}'s tables; "
                                     f"add one of them to `regions` or use `all`/`home`")])
    if len(by_gcp) > MAX_CLUSTERS:
        raise InputError([Problem.at(where, spec.path, "instance",
                                     f"{len(by_gcp)} GCP regions ({', '.join(by_gcp)}) need {len(by_gcp)} clusters; "
                                     f"Bigtable allows {MAX_CLUSTERS} per instance: split the tables over two specs "
                                     f"or keep fewer regions in the stage")])
    pinned = spec.instance.zones
    return [
        Placement(gcp_region=gcp, zone=next((pinned[r] for r in aws if r in pinned), gcp_for(aws[0]).zones[0]),
                  aws_regions=tuple(aws))
        for gcp, aws in by_gcp.items()
    ]

